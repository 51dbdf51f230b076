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
void append_capped(std::string& dst, const char* buf, std::size_t n, std::size_t cap, bool& truncated) {
  if (dst.size() >= cap) {
    truncated = truncated || n > 0;
    return;
  }
  std::size_t take = std::min(n, cap - dst.size());
  dst.append(buf, take);
  if (take < n) truncated = true;
}
}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  using clock = std::chrono::steady_clock;
  ProcessResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) return r;

  std::vector<std::string> env_strings;
  for (auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(const_cast<char*>(s.c_str()));
  envp.push_back(nullptr);
  for (auto& s : spec.argv) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);

  auto start = clock::now();
  pid_t pid = fork();
  if (pid < 0) return r;
  if (pid == 0) {
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) _exit(127);
    execve(argv[0], argv.data(), envp.data());
    std::string msg = std::string("judge: cannot execute ") + argv[0] + ": " + strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
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
  char buf[65536];
  while (open_fds > 0) {
    auto now = clock::now();
    if (!child_done && now >= deadline) {
      r.timed_out = true;
      killpg(pid, SIGKILL);
    }
    if (child_done && now >= drain_deadline) break;  // a leftover process holds the pipe open
    int rc = poll(fds, 2, 50);
    if (rc > 0) {
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        } else if (i == 0) {
          append_capped(r.out, buf, n, spec.output_cap, r.out_truncated);
        } else {
          append_capped(r.err, buf, n, spec.output_cap, r.err_truncated);
        }
      }
    }
    if (!child_done && waitpid(pid, &status, WNOHANG) == pid) {
      child_done = true;
      killpg(pid, SIGKILL);  // whatever it left running in its group goes with it
      drain_deadline = clock::now() + std::chrono::milliseconds(500);
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  // Both pipes ended but the child is not reaped yet: it closed its output before exiting (coreutils do, at exit),
  // or runs on without output. It is waited for, until the wall-clock limit; only then is it killed.
  while (!child_done) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      child_done = true;
      killpg(pid, SIGKILL);  // whatever it left running in its group goes with it
    } else if (clock::now() >= deadline) {
      r.timed_out = true;
      killpg(pid, SIGKILL);
      waitpid(pid, &status, 0);
      child_done = true;
    } else {
      usleep(2000);
    }
  }
  r.seconds = std::chrono::duration<double>(clock::now() - start).count();
  if (WIFEXITED(status)) {
    r.exited = !r.timed_out;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.term_signal = WTERMSIG(status);
  }
  return r;
}

}  // namespace judge
