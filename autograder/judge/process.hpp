// Runs a child process with a wall-clock limit, capturing capped stdout/stderr.
// The child leads its own process group; on exit or timeout the whole group is killed, so background processes the
// child leaves behind do not outlive it.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace judge {

struct ProcessSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the child's whole environment
  std::string cwd;
  double timeout_s = 60;
  std::size_t output_cap = 64 * 1024;  // bytes kept of each stream; the rest is read and dropped
  bool compiler = false;     // a compiler or linker: Sandbox::run caps its memory even where a worker's cannot be
  int cgroup_procs_fd = -1;  // a cgroup's cgroup.procs: the child moves itself there before it executes anything
  // Asked about 4 times a second while it runs, and once when it has ended (never in the child): a non-empty answer
  // stops it, and is the reason
  // ProcessResult::stopped gives (e.g. the bytes a run wrote to its folder, which no per-file limit bounds).
  std::function<std::string()> watch;
};

struct ProcessResult {
  bool started = false;
  int pid = -1;         // also the id of its process group
  bool exited = false;  // exited normally (then exit_code is valid)
  int exit_code = -1;
  int term_signal = 0;  // the signal that ended it, if any
  bool timed_out = false;
  std::string out, err;
  bool out_truncated = false, err_truncated = false;
  double seconds = 0;
  bool memory_limit = false;
  std::string
      stopped;  // why ProcessSpec::watch (or a request's watch) stopped it  // the kernel's OOM killer stopped a process of its memory cgroup (Sandbox::run)
  std::string describe() const;  // "exited with status 3", "killed by signal 11 (Segmentation fault)", ...
};

ProcessResult run_process(const ProcessSpec& spec);

// The current environment as a map, to start from.
std::map<std::string, std::string> current_environment();

}  // namespace judge

namespace judge {

// A long-lived child that runs one request at a time (the worker server, autograder/worker/worker_server.py): a
// request is a line on its stdin, answered by one line on fd 3; what it prints to stdout and stderr between a request
// and its answer is that request's output. The child leads its own process group, killed by stop() or the destructor.
class ServerProcess {
 public:
  ServerProcess() = default;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() { stop(); }

  // Starts `spec.argv` and returns at once (it may take seconds to be ready: the first request waits for its "ready"
  // line, at most spec.timeout_s); false if it could not be started.
  bool start(const ProcessSpec& spec);
  // Sends `line` and waits up to `timeout_s` for the answer, read into `answer`. The result holds the output in
  // between (capped as run_process caps it) and the seconds; timed_out when no answer came in time (the server is
  // then stopped). `answer` is empty and the server stopped when it ended (or never became ready) without
  // answering; `started` is false then if the request never reached it. `watch` as ProcessSpec::watch: asked while
  // it runs and once it has answered; its non-empty answer is the result's `stopped`.
  ProcessResult request(const std::string& line, double timeout_s, std::size_t output_cap, std::string& answer,
                        const std::function<std::string()>& watch = {});
  bool running() const { return pid_ > 0; }
  // Closes its stdin and gives it `grace_s` to end by itself (a server's way out), then kills its process group.
  void stop(double grace_s = 0);

 private:
  int pid_ = -1, in_ = -1, out_ = -1, err_ = -1, control_ = -1;
  bool ready_ = false;
  double ready_timeout_s_ = 0;
  std::string control_buf_;
  // Reads until a whole line arrives on the control pipe, the deadline passes (false), it closes (false) or `watch`
  // answers (false, its answer in r->stopped); output arriving meanwhile is appended to r (when given).
  bool read_line(double timeout_s, std::string& line, ProcessResult* r, std::size_t output_cap,
                 const std::function<std::string()>& watch = {});
};

}  // namespace judge
