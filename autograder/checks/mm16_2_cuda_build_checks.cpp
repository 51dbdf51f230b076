// Chapter 4's rows of course::mm16 that need no GPU: the op has a CUDA kernel registered, and the library holds
// sm_75 machine code and compute_75 PTX with a kernel in each. (mm16_1_contract_forward_checks.cpp says why the
// files are numbered.)
#include <doctest/doctest.h>

#include <algorithm>

#include "../judge/grading.hpp"
#include "mm16_plan.hpp"
#include "mm16_rows.hpp"

using namespace judge;
using namespace judge::mm16;

TEST_SUITE_BEGIN("mm16");

TEST_CASE("cuda.registered") {
  const GroupResult& g = Session::get().require("inspect");
  for (auto& op : g.report.value("ops", json::array())) {
    if (!op.is_object() || op.value("name", "") != "course::mm16" || op.value("overload", "x") != "") continue;
    auto kernels = op.value("kernels", json::array());
    std::string ks;
    for (auto& k : kernels) ks += (ks.empty() ? "" : ", ") + (k.is_string() ? k.get<std::string>() : k.dump());
    if (std::find(kernels.begin(), kernels.end(), "CUDA") != kernels.end())
      return pass("course::mm16 has kernels for " + ks);
    return fail("course::mm16 has no kernel for the CUDA dispatch key", "kernels for CPU and CUDA",
                ks.empty() ? "no kernels" : "kernels for " + ks);
  }
  fail("course::mm16 is not registered",
       std::string(Session::get().exercise.stable_abi() ? "STABLE_TORCH_LIBRARY" : "TORCH_LIBRARY") +
           "(course, m) { m.def(\"mm16(Tensor a, Tensor b) -> Tensor\"); }",
       "no course::mm16");
}

TEST_CASE("build.targets") {
  const BuildResult& b = Session::get().build();
  if (!b.ok) return fail("not run: the submission did not build (" + b.failure + ")");
  Listing l = cuobjdump(b.library, {"--list-elf", "--list-ptx"});
  if (!l.ok) return fail(l.why, "cuobjdump lists the library's CUDA code");
  Listing text = cuobjdump(b.library, {"--list-text"});  // one kernel per line; ignored when combined with -lelf
  if (text.ok) l.text += text.text;
  Listing ptx = cuobjdump(b.library, {"--dump-ptx"});
  std::vector<std::string> missing;
  if (l.text.find(".sm_75.cubin") == std::string::npos) missing.push_back("sm_75 machine code (cubin)");
  if (l.text.find(".sm_75.ptx") == std::string::npos) missing.push_back("compute_75 PTX");
  if (l.text.find(".sm_75.elf.bin") == std::string::npos) missing.push_back("a kernel in the sm_75 machine code");
  if (!ptx.ok || ptx.text.find(".entry") == std::string::npos) missing.push_back("a kernel (.entry) in the PTX");
  std::string listing = l.text.size() > 1500 ? l.text.substr(0, 1500) + "..." : l.text;
  if (missing.empty()) {
    std::string arch = Session::get().toolchain.value("cuda_architectures", "");
    return pass("sm_75 cubin and compute_75 PTX with a kernel in each (arch list " + arch + ")");
  }
  std::string m;
  for (auto& s : missing) m += (m.empty() ? "" : ", ") + s;
  fail("the built library lacks " + m, "sm_75 cubin + compute_75 PTX holding your __global__ kernel",
       "cuobjdump --list-elf --list-ptx, then --list-text:\n" + listing);
}

TEST_SUITE_END();
