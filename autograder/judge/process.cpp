#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace judge {

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::string ProcessResult::describe() const {
  if (!started) return "could not be started";
  if (timed_out) return "was killed after exceeding its time limit";
  if (exited) return "exited with status " + std::to_string(exit_code);
  if (term_signal) return "was killed by signal " + std::to_string(term_signal) + " (" + strsignal(term_signal) + ")";
  return "ended in an unknown way";
}

namespace {
// A command line and environment in execve's form, made before fork (the child then allocates nothing).
struct Exec {
  std::vector<std::string> env_strings;
  std::vector<char*> envp, argv;
  int cgroup_procs_fd = -1;
  explicit Exec(const ProcessSpec& spec) : cgroup_procs_fd(spec.cgroup_procs_fd) {
    for (auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
    for (auto& s : env_strings) envp.push_back(const_cast<char*>(s.c_str()));
    envp.push_back(nullptr);
    for (auto& s : spec.argv) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
  }
  // In the child, first of all (before any dup2 can land on the cgroup's fd, 3 for the worker server's control pipe):
  // "0" is the writing process: it, and all it will start, are counted against the cgroup's limit from here on.
  void enter_cgroup() const {
    if (cgroup_procs_fd >= 0 && write(cgroup_procs_fd, "0", 1) != 1) _exit(126);
  }
  // In the child: becomes the command, or exits 127 saying why it could not.
  [[noreturn]] void run(const std::string& cwd) const {
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
    execve(argv[0], argv.data(), envp.data());
    const char* what = strerror(errno);
    for (const char* part : {"judge: cannot execute ", static_cast<const char*>(argv[0]), ": ", what, "\n"})
      (void)!write(2, part, strlen(part));
    _exit(127);
  }
};

void append_capped(std::string& dst, const char* buf, std::size_t n, std::size_t cap, bool& truncated) {
  if (dst.size() >= cap) {
    truncated = truncated || n > 0;
    return;
  }
  std::size_t take = std::min(n, cap - dst.size());
  dst.append(buf, take);
  if (take < n) truncated = true;
}

// Reads what is ready on the child's output pipes (out, err) into r, capped; a pipe that ended is closed.
void read_pipes(pollfd (&fds)[2], int& open_fds, std::size_t cap, ProcessResult& r) {
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = read(fds[i].fd, buf, sizeof buf);
    if (n <= 0) {
      close(fds[i].fd);
      fds[i].fd = -1;
      --open_fds;
    } else if (i == 0) {
      append_capped(r.out, buf, n, cap, r.out_truncated);
    } else {
      append_capped(r.err, buf, n, cap, r.err_truncated);
    }
  }
}

// Both pipes ended but the child is not reaped yet: it closed its output before exiting (coreutils do, at exit), or
// runs on without output. It is waited for, until the wall-clock limit; only then is it killed.
void reap_after_output(pid_t pid, std::chrono::steady_clock::time_point deadline, int& status, ProcessResult& r) {
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      killpg(pid, SIGKILL);  // whatever it left running in its group goes with it
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      r.timed_out = true;
      killpg(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return;
    }
    usleep(2000);
  }
}
}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  using clock = std::chrono::steady_clock;
  ProcessResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return r;

  const Exec exec(spec);  // built before fork: the child only makes system calls

  auto start = clock::now();
  pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    exec.enter_cgroup();
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    exec.run(spec.cwd);
  }
  setpgid(pid, pid);  // also here, so killpg works even if the child has not run yet
  r.started = true;
  r.pid = pid;
  close(out_pipe[1]);
  close(err_pipe[1]);

  auto deadline = start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(spec.timeout_s));
  bool child_done = false;
  int status = 0;
  clock::time_point drain_deadline{};
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  clock::time_point next_watch = start + std::chrono::milliseconds(250);
  while (open_fds > 0) {
    auto now = clock::now();
    if (!child_done && now >= deadline) {
      r.timed_out = true;
      killpg(pid, SIGKILL);
    }
    if (!child_done && spec.watch && r.stopped.empty() && now >= next_watch) {
      next_watch = now + std::chrono::milliseconds(250);
      r.stopped = spec.watch();
      if (!r.stopped.empty()) killpg(pid, SIGKILL);
    }
    if (child_done && now >= drain_deadline) break;  // a leftover process holds the pipe open
    if (poll(fds, 2, 50) > 0) read_pipes(fds, open_fds, spec.output_cap, r);
    if (!child_done && waitpid(pid, &status, WNOHANG) == pid) {
      child_done = true;
      killpg(pid, SIGKILL);  // whatever it left running in its group goes with it
      drain_deadline = clock::now() + std::chrono::milliseconds(500);
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  if (!child_done) reap_after_output(pid, deadline, status, r);
  if (spec.watch && r.stopped.empty()) r.stopped = spec.watch();  // what it wrote after the last look counts too
  r.seconds = std::chrono::duration<double>(clock::now() - start).count();
  if (WIFEXITED(status)) {
    r.exited = !r.timed_out;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.term_signal = WTERMSIG(status);
  }
  return r;
}

namespace {
// A pipe whose ends sit at fds >= 10, close-on-exec: dup2 onto 0-3 in a child never overwrites another of them.
bool high_pipe(int fds[2]) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return false;
  for (int i = 0; i < 2; ++i) {
    fds[i] = fcntl(p[i], F_DUPFD_CLOEXEC, 10);
    close(p[i]);
  }
  return fds[0] >= 0 && fds[1] >= 0;
}
}  // namespace

bool ServerProcess::start(const ProcessSpec& spec) {
  stop();
  int in[2], out[2], err[2], control[2];
  if (!high_pipe(in) || !high_pipe(out) || !high_pipe(err) || !high_pipe(control)) return false;
  const Exec exec(spec);  // built before fork: the child only makes system calls
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    exec.enter_cgroup();
    setpgid(0, 0);
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    dup2(control[1], 3);
    exec.run(spec.cwd);
  }
  setpgid(pid, pid);
  pid_ = pid;
  close(in[0]);
  close(out[1]);
  close(err[1]);
  close(control[1]);
  in_ = in[1];
  out_ = out[0];
  err_ = err[0];
  control_ = control[0];
  for (int fd : {out_, err_, control_}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  signal(SIGPIPE, SIG_IGN);  // a server that died mid-request: write() says EPIPE instead of killing the judge
  ready_ = false;
  ready_timeout_s_ = spec.timeout_s;
  return true;
}

bool ServerProcess::read_line(double timeout_s, std::string& line, ProcessResult* r, std::size_t output_cap,
                              const std::function<std::string()>& watch) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(timeout_s));
  auto next_watch = clock::now() + std::chrono::milliseconds(250);
  char buf[65536];
  auto drain = [&](int fd, std::string& dst, bool& truncated) {  // false once the pipe has closed
    while (true) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        if (r) append_capped(dst, buf, n, output_cap, truncated);
        continue;
      }
      return !(n == 0 || (errno != EAGAIN && errno != EINTR));
    }
  };
  std::string scratch_out, scratch_err;
  bool t1 = false, t2 = false;
  while (true) {
    auto nl = control_buf_.find('\n');
    if (nl != std::string::npos) {
      line = control_buf_.substr(0, nl);
      control_buf_.erase(0, nl + 1);
      // everyone who wrote the output is gone once the answer came: what they wrote is in the pipes now
      if (r) {
        drain(out_, r->out, r->out_truncated);
        drain(err_, r->err, r->err_truncated);
      }
      return true;
    }
    if (clock::now() >= deadline) return false;
    if (watch && clock::now() >= next_watch) {
      next_watch = clock::now() + std::chrono::milliseconds(250);
      if (std::string why = watch(); !why.empty()) {
        if (r) r->stopped = why;
        return false;
      }
    }
    pollfd fds[3] = {{control_, POLLIN, 0}, {out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (poll(fds, 3, 50) < 0 && errno != EINTR) return false;
    if (fds[1].revents) drain(out_, r ? r->out : scratch_out, r ? r->out_truncated : t1);
    if (fds[2].revents) drain(err_, r ? r->err : scratch_err, r ? r->err_truncated : t2);
    if (fds[0].revents) {
      while (true) {
        ssize_t n = read(control_, buf, sizeof buf);
        if (n > 0) {
          if (control_buf_.size() < 4096) control_buf_.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          if (control_buf_.find('\n') != std::string::npos) break;
          return false;  // the server ended
        }
        break;
      }
    }
  }
}

ProcessResult ServerProcess::request(const std::string& line, double timeout_s, std::size_t output_cap,
                                     std::string& answer, const std::function<std::string()>& watch) {
  using clock = std::chrono::steady_clock;
  ProcessResult r;
  answer.clear();
  if (pid_ > 0 && !ready_) {  // what it printed while importing is nobody's output
    std::string line;
    ProcessResult before;
    ready_ = read_line(ready_timeout_s_, line, &before, 4096) && line == "ready";
    if (!ready_) stop();
  }
  if (pid_ <= 0) return r;
  auto start = clock::now();
  std::string msg = line + "\n";
  const char* p = msg.data();
  std::size_t left = msg.size();
  while (left > 0) {
    ssize_t n = write(in_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      stop();
      return r;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  r.started = true;
  r.pid = pid_;
  bool answered = read_line(timeout_s, answer, &r, output_cap, watch);
  if (answered && watch) r.stopped = watch();  // what it wrote after the last look counts too
  r.seconds = std::chrono::duration<double>(clock::now() - start).count();
  if (!answered) {
    r.timed_out = r.stopped.empty() && clock::now() - start >= std::chrono::duration<double>(timeout_s);
    answer.clear();
    stop();
  }
  return r;
}

void ServerProcess::stop(double grace_s) {
  if (pid_ > 0) {
    if (in_ >= 0) {
      close(in_);
      in_ = -1;
    }
    int status = 0;
    bool ended = false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
    while (!ended && std::chrono::steady_clock::now() < deadline) {
      ended = waitpid(pid_, &status, WNOHANG) == pid_;
      if (!ended) usleep(2000);
    }
    if (!ended) {
      killpg(pid_, SIGKILL);
      kill(pid_, SIGKILL);
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  pid_ = -1;
  for (int* fd : {&in_, &out_, &err_, &control_})
    if (*fd >= 0) {
      close(*fd);
      *fd = -1;
    }
  control_buf_.clear();
}

}  // namespace judge
