// Runs a child process with a wall-clock limit, capturing capped stdout/stderr.
// The child leads its own process group; on exit or timeout the whole group is killed, so background processes the
// child leaves behind do not outlive it.
#pragma once
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
};

struct ProcessResult {
  bool started = false;
  int pid = -1;           // also the id of its process group
  bool exited = false;     // exited normally (then exit_code is valid)
  int exit_code = -1;
  int term_signal = 0;     // the signal that ended it, if any
  bool timed_out = false;
  std::string out, err;
  bool out_truncated = false, err_truncated = false;
  double seconds = 0;
  std::string describe() const;  // "exited with status 3", "killed by signal 11 (Segmentation fault)", ...
};

ProcessResult run_process(const ProcessSpec& spec);

// The current environment as a map, to start from.
std::map<std::string, std::string> current_environment();

}  // namespace judge
