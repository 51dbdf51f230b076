// A failure the grading machine caused, told apart from one the submission caused (issue: a grade does not depend
// on its neighbours). A worker run that shows a sign of the machine's fault (a CUDA out-of-memory, a GPU that is
// lost or unavailable, the kernel's OOM killer) is run again once, alone; if it fails the same way again, the judge
// decides whose fault it is from evidence the submission cannot make up: the GPU's memory as nvidia-smi reports it
// while no grade of this machine is on the GPU, the kernel's count of OOM kills, nvidia-smi seeing the GPU at all.
// A sign alone is only text a submission can print: it buys a retry, never a "not graded".
#pragma once
#include <string>

namespace judge {

enum class MachineFault { None, GpuMemory, GpuLost, HostMemory };

// The sign in a worker's output or answer (text the submission may have written too), or None.
MachineFault fault_sign_in(const std::string& text);
// A worker killed by SIGKILL while the kernel's OOM-kill count rose: the host ran out of memory.
MachineFault host_memory_sign(bool killed_by_sigkill, long oom_kills_before, long oom_kills_after);

// The kernel's count of OOM kills since boot (/proc/vmstat oom_kill), -1 where it cannot be read.
long oom_kill_count();

// The GPU the workers use (the first of CUDA_VISIBLE_DEVICES, else 0), as nvidia-smi reports it.
struct GpuMemory {
  bool seen = false;  // nvidia-smi answered for that GPU
  double used_mib = 0, total_mib = 0;
  std::string compute_mode;  // "Default", "Exclusive_Process", "Prohibited"
  int processes = 0;         // processes with a context on it
  std::string error;         // why not seen
};
GpuMemory gpu_memory();
// One line of `nvidia-smi --query-gpu=memory.used,memory.total,compute_mode --format=csv,noheader,nounits`
// ("1234, 143771, Default"; the mode may be missing).
GpuMemory parse_gpu_memory(const std::string& line);

// After a retry that failed with the same sign: the reason the rows are not graded (the machine's fault), or ""
// (the submission's own). `before_retry` was measured with the GPU turn held, before the retry started: memory then
// in use belongs to processes outside this machine's grades.
std::string machine_fault_reason(MachineFault sign, const GpuMemory& before_retry);
// What the sign means, for the notes: "a CUDA out-of-memory error".
std::string describe(MachineFault sign);

}  // namespace judge
