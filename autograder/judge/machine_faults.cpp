#include "machine_faults.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "process.hpp"

namespace judge {

MachineFault fault_sign_in(const std::string& text) {
  // torch's caching allocator ("CUDA out of memory. Tried to allocate"), a raw cudaMalloc through C10_CUDA_CHECK
  // ("CUDA error: out of memory"), the runtime's enum name; a GPU taken by another process in exclusive mode, or lost.
  for (const char* s : {"CUDA out of memory", "CUDA error: out of memory", "cudaErrorMemoryAllocation"})
    if (text.find(s) != std::string::npos) return MachineFault::GpuMemory;
  for (const char* s : {"busy or unavailable", "cudaErrorDevicesUnavailable", "GPU is lost", "fallen off the bus",
                        "uncorrectable ECC error"})
    if (text.find(s) != std::string::npos) return MachineFault::GpuLost;
  return MachineFault::None;
}

MachineFault host_memory_sign(bool killed_by_sigkill, long before, long after) {
  return killed_by_sigkill && before >= 0 && after > before ? MachineFault::HostMemory : MachineFault::None;
}

long oom_kill_count() {
  std::ifstream in("/proc/vmstat");
  std::string key;
  long value;
  while (in >> key >> value)
    if (key == "oom_kill") return value;
  return -1;
}

GpuMemory parse_gpu_memory(const std::string& line) {
  GpuMemory m;
  std::istringstream in(line);
  char comma = 0;
  if (!(in >> m.used_mib >> comma >> m.total_mib) || comma != ',' || m.total_mib <= 0 || m.used_mib < 0) {
    m.error = "nvidia-smi's answer was not 'used, total': '" + line.substr(0, 80) + "'";
    return m;
  }
  if (in >> comma && comma == ',') in >> m.compute_mode;
  m.seen = true;
  return m;
}

GpuMemory gpu_memory() {
  GpuMemory m;
  std::string smi;
  const char* path = getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && access((d + "/nvidia-smi").c_str(), X_OK) == 0) {
      smi = d + "/nvidia-smi";
      break;
    }
  if (smi.empty()) {
    m.error = "nvidia-smi is not on this machine's PATH";
    return m;
  }
  std::string gpu = "0";
  if (const char* v = getenv("CUDA_VISIBLE_DEVICES"); v && *v) gpu = std::string(v).substr(0, std::string(v).find(','));
  ProcessResult r = run_process(ProcessSpec{
      {smi, "--query-gpu=memory.used,memory.total,compute_mode", "--format=csv,noheader,nounits", "-i", gpu},
      current_environment(),
      "/",
      20,
      4096});
  if (!r.exited || r.exit_code != 0) {
    m.error = "nvidia-smi " + r.describe() + ": " + r.out.substr(0, 120) + r.err.substr(0, 120);
    return m;
  }
  m = parse_gpu_memory(r.out);
  ProcessResult apps = run_process(ProcessSpec{
      {smi, "--query-compute-apps=pid", "--format=csv,noheader", "-i", gpu}, current_environment(), "/", 20, 4096});
  for (std::size_t p = 0;
       apps.exited && apps.exit_code == 0 && (p = apps.out.find_first_of("0123456789", p)) != std::string::npos;) {
    ++m.processes;
    p = apps.out.find('\n', p);
  }
  return m;
}

std::string describe(MachineFault sign) {
  switch (sign) {
    case MachineFault::GpuMemory:
      return "a CUDA out-of-memory error";
    case MachineFault::GpuLost:
      return "a GPU that is busy, unavailable or lost";
    case MachineFault::HostMemory:
      return "the worker killed by the kernel's OOM killer";
    case MachineFault::None:
      break;
  }
  return "no sign of a fault of the machine";
}

namespace {
std::string gib(double mib) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", mib / 1024);
  return b;
}
}  // namespace

std::string machine_fault_reason(MachineFault sign, const GpuMemory& before) {
  switch (sign) {
    case MachineFault::GpuMemory:
      // Nothing of this machine's grades was on the GPU when `before` was read (the retry held the GPU turn): what
      // was in use is other processes'. Most of the GPU taken by them: the machine's fault. The GPU nearly free, or
      // no GPU to be seen: the operator ran out of memory on its own.
      if (before.seen && before.used_mib > 0.5 * before.total_mib)
        return "the grading machine ran out of GPU memory: processes outside this grade held " + gib(before.used_mib) +
               " of " + gib(before.total_mib) + " GiB when the run was retried alone";
      return "";
    case MachineFault::GpuLost:
      // A submission can print the words; it cannot make nvidia-smi lose the GPU, nor put another process on a GPU
      // that admits one at a time while no grade of this machine is on it.
      if (!before.seen && before.error.find("not on this machine's PATH") == std::string::npos)
        return "the GPU was lost or unavailable (" + before.error + ")";
      if (before.seen && before.compute_mode != "Default" && !before.compute_mode.empty() && before.processes > 0)
        return "the GPU admits one process at a time (" + before.compute_mode +
               ") and a process outside this grade "
               "held it when the run was retried alone";
      return "";
    case MachineFault::HostMemory:
      // The kernel counted an OOM kill during each of the two runs, and each ended the worker by SIGKILL.
      return "the grading machine ran out of host memory: the kernel's OOM killer stopped the worker twice";
    case MachineFault::None:
      break;
  }
  return "";
}

}  // namespace judge
