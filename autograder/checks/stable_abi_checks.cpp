// Chapter 10's rows: the library on the LibTorch stable ABI. abi.symbols and abi.target read the audit of the built
// extension module (groups_stable_abi.py: torch-abi-audit and abi3audit, the module read as a file, never loaded);
// abi.cross_version runs the CPU products of the mm16 rows on the same binary in the older torch's python
// (toolchain.json "older_torch_python", tools/setup.sh), compared through the same row as forward.cpu.
#include <doctest/doctest.h>

#include <cstdio>
#include <vector>

#include "../judge/grading.hpp"
#include "mm16_plan.hpp"
#include "mm16_rows.hpp"

using namespace judge;
using namespace judge::mm16;

namespace {

// The oldest Python the wheel's abi3 tag promises (setup.py's py_limited_api="cp39"; the build's Py_LIMITED_API).
constexpr const char* kAbi3Minimum = "3.9";

// The audit of the submission's extension module, once per grade; nullptr when the row was SKIPPED because the
// worker's python has not the audit tools (not the submission's doing: the audit never loads its code).
const json* audit() {
  auto& s = Session::get();
  const BuildResult& b = s.build();
  if (!b.ok) throw NotRun("the library was not built (see build)");
  const GroupResult& g =
      s.require("abi_audit", {{"library", ""}, {"module", b.library.string()}, {"abi3_minimum", kAbi3Minimum}});
  if (g.report.contains("tools_missing") || !g.report.contains("torch") || !g.report.contains("python")) {
    skip(
        "the worker's python has not the audit tools that requirements/course.txt pins (torch-abi-audit, "
        "abi3audit): " +
            g.report.value("tools_missing", std::string("no audit in the answer")),
        "needs the audit tools");
    return nullptr;
  }
  return &g.report;
}

// "2.10.0" or "2.10" -> {2, 10}; {0, 0} when it is not a version.
std::pair<int, int> major_minor(const std::string& v) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

std::vector<std::string> strings_of(const json& j, const char* key) { return j.value(key, std::vector<std::string>{}); }

}  // namespace

TEST_CASE("abi.symbols") {
  const json* audited = audit();
  if (!audited) return;
  const json& a = *audited;
  const json& torch = a["torch"];
  if (!torch.value("error", std::string()).empty())
    return fail("the audit could not read the library: " + torch["error"].get<std::string>());
  const auto unstable = strings_of(torch, "unstable_symbols");
  const auto python = strings_of(a["python"], "non_abi3_symbols");
  std::vector<std::string> problems;
  for (auto& s : unstable) problems.push_back("torch internals: " + s);
  for (auto& s : python) problems.push_back(std::string("CPython outside the limited API (abi3): ") + s);
  if (problems.empty())
    return pass(std::to_string(torch.value("shim_symbols", 0)) +
                " C-shim symbols, none of ATen, c10 or torch's internals; CPython symbols within the limited API of "
                "Python " +
                kAbi3Minimum + " (torch-abi-audit, abi3audit)");
  fail(std::to_string(unstable.size()) + " symbol(s) of torch's unstable C++ API and " + std::to_string(python.size()) +
           " CPython symbol(s) outside the limited API: a library that uses them loads only in the torch (or Python) "
           "it was built with",
       "only torch/csrc/stable and torch/headeronly (their C-shim symbols), and CPython's limited API of Python " +
           std::string(kAbi3Minimum) + ", as the wheel's abi3 tag promises",
       lines(problems));
}

TEST_CASE("abi.target") {
  auto& s = Session::get();
  const json* audited = audit();
  if (!audited) return;
  const json& torch = (*audited)["torch"];
  const std::string target = s.exercise.torch_target;
  const auto unknown = strings_of(torch, "unknown_shim_symbols");
  const std::string needs = torch.value("min_torch_version", std::string());
  if (!unknown.empty())
    return fail("the library uses C-shim symbols newer than the audit knows (newer than its data, so newer than " +
                    target + "): lower TORCH_TARGET_VERSION and use only what the target offers",
                "every shim symbol available in torch " + target, lines(unknown));
  if (needs.empty()) return fail("the library uses no C-shim symbol: it registers no operator through the stable ABI");
  if (major_minor(needs) <= major_minor(target))
    return pass("its shim symbols need torch " + needs + " at least; the exercise's target is " + target);
  fail("the library needs torch " + needs + ", newer than the exercise's target " + target +
           ": set TORCH_TARGET_VERSION to " + target + " before any torch header, and use only what that target offers",
       "a minimum of torch " + target + " or older",
       "needs " + needs + ", set by" + lines(strings_of(torch, "version_defining_symbols")));
}

TEST_CASE("abi.cross_version") {
  auto& s = Session::get();
  if (s.toolchain.value("older_torch_python", "").empty())
    return skip(
        "the course has no environment of its older torch ('# torch-older:' of requirements/course.txt; "
        "tools/setup.sh makes it unless COURSE_PYTHON or COURSE_TORCH chose the environment)",
        "needs the older torch's environment");
  const Plan& p = cpu_plan();
  const GroupResult& g = run_in(p, "older_torch_python");
  if (!g.ok)
    return fail(g.failure + "\nThe binary built against torch " + s.toolchain.value("torch_version", "") +
                    " did not run in the older torch: a library that needs a newer torch than the running one fails "
                    "at load with an undefined symbol; set TORCH_TARGET_VERSION to " +
                    s.exercise.torch_target +
                    " (the exercise's target) and use only torch/csrc/stable and torch/headeronly",
                "the same binary loads and computes in the older torch");
  const std::string older = g.report.value("torch_version", std::string("(its version unreported)"));
  products_row(g, forward_calls(p), "CPU products in torch " + older,
               "the library built against torch " + s.toolchain.value("torch_version", "") + ", loaded in torch " +
                   older + ": each output matches a @ b computed by the judge, " + tolerance_text());
}
