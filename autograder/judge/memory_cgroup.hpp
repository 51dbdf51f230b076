// Host memory of a worker run, bounded by a memory cgroup of its own (RLIMIT_AS cannot bound a process that
// initialises CUDA: torch reserves far more address space than it uses). The worker is moved into the cgroup before
// it executes anything, so everything it starts is counted too; when the limit is reached, the kernel's OOM killer
// stops a process of that cgroup, never a neighbour's, and the cgroup's own count of OOM kills says so.
// cgroup v2 (a cgroup where the memory controller is delegated: the judge's own, or the root) or v1 (the memory
// hierarchy); where neither is writable, the protection is reported off.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>

namespace judge {

// A judge killed outright (SIGKILL, a job's time limit) cannot remove its folder of run cgroups: `course-judge-PID`
// folders in `folder` whose judge is no longer alive and that no process is left in are removed (rmdir only: a cgroup
// with a process in it cannot be removed, so nothing running is touched). Returns how many were removed. (A judge in
// another pid namespace sharing this cgroup tree would look dead; the course runs its judges in one.)
int remove_stale_judge_cgroups(const std::string& folder, const std::function<bool(pid_t)>& alive);
// Whether a process runs: a zombie does not (a judge killed outright stays one until its parent, or an init that may be
// slow to, reaps it), though kill(pid, 0) succeeds on it (judge/unit shows both).
bool process_alive(pid_t pid);

class MemoryCgroups {
 public:
  // Finds where this judge may make memory cgroups; false (with the reason) where it cannot.
  bool configure(unsigned long long limit_bytes, std::string& reason);
  bool on() const { return !base_.empty(); }
  unsigned long long limit_bytes() const { return limit_; }
  const std::string& where() const { return base_; }

  struct Run {
    std::string dir;
    int procs_fd = -1;  // cgroup.procs, open for the child to write "0" (itself) before it executes
    long oom_kills_before = 0;
  };
  // A fresh cgroup for one run (procs_fd -1 when it could not be made: the run goes unbounded, and says so).
  Run open();
  // OOM kills inside the run's cgroup since open().
  long oom_kills(const Run& run) const;
  // Kills what is left in it (v2), and removes it.
  void close(Run& run);
  ~MemoryCgroups();

 private:
  std::string base_;  // this judge's folder of run cgroups
  bool v2_ = false;
  unsigned long long limit_ = 0;
  int next_ = 0;
};

}  // namespace judge
