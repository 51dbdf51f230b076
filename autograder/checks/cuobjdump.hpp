// cuobjdump on a built library: the one the course's CMake found (toolchain.json "cuobjdump"), started by the judge,
// never by the submission. The library was built from a submission, so cuobjdump reads it inside the sandbox, like
// the compiler: a malformed library can at worst crash or hang that sandboxed run. Shared by the CUDA rows of
// chapters 4-6 and chapter 9's target rows.
#pragma once
#include <string>
#include <vector>

#include "../judge/grading.hpp"
#include "../judge/process.hpp"
#include "../judge/sandbox.hpp"

namespace judge {

struct CuobjdumpRun {
  bool ran = false;  // cuobjdump started and exited (whatever its status)
  bool ok = false;   // ... with status 0
  std::string text;  // stdout + stderr
  std::string why;   // when !ok: what went wrong, for a row's detail
};

inline CuobjdumpRun run_cuobjdump(const fs::path& lib, const std::vector<std::string>& flags,
                                  size_t output_cap = 4 << 20) {
  CuobjdumpRun c;
  std::string tool = Session::get().toolchain.value("cuobjdump", "");
  if (tool.empty()) {
    c.why = "no cuobjdump in the course's toolchain.json (CMake found none: install nvidia-cuda-cuobjdump)";
    return c;
  }
  std::vector<std::string> argv{tool};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back(lib.string());
  static int runs = 0;
  fs::path scratch = Session::get().cfg.work_dir / ("cuobjdump-" + std::to_string(++runs));
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  // its environment: the sandbox's allowlist only (Sandbox::run), nothing else of the grading host's
  auto r = Sandbox::get().run(ProcessSpec{argv, {}, scratch.string(), 120, output_cap}, scratch, {lib.parent_path()});
  c.text = r.out + r.err;
  c.ran = r.exited;
  c.ok = r.exited && r.exit_code == 0;
  if (!c.ok) c.why = "cuobjdump " + r.describe() + ": " + c.text.substr(0, 500);
  return c;
}

}  // namespace judge
