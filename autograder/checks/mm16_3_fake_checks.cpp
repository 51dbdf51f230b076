// Chapter 5's rows of course::mm16: the fake (Meta) kernel agrees with the real outputs and rejects what they reject,
// and torch.compile traces the op, with static and with dynamic shapes. (mm16_1_contract_forward_checks.cpp says
// why the files are numbered.)
#include <doctest/doctest.h>

#include "../judge/grading.hpp"
#include "mm16_plan.hpp"
#include "mm16_rows.hpp"

using namespace judge;
using namespace judge::mm16;

namespace {

std::string describe_meta(const json& m) {
  if (!m.is_object()) return "(nothing)";
  auto ints = [&](const char* k) { return m.contains(k) && m[k].is_array() ? m[k].dump() : std::string("?"); };
  return "shape " + ints("shape") + ", dtype " + m.value("dtype", std::string("?")) + ", strides " + ints("strides") +
         ", device " + m.value("device", std::string("?"));
}

}  // namespace

TEST_SUITE_BEGIN("mm16");

TEST_CASE("fake.meta") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::vector<std::string> problems;
  std::string seen;
  for (const char* of : {"cpu.f16.0.0", "cpu.f32.0", "cpu.f64.0", "cpu.view.t_s.0", "cpu.view.o_t.0"}) {
    const Call& c = p.call(of);
    std::string why;
    json real = answer(g, of, "call", &why);
    if (real.is_null() || real["raised"] == true) {
      problems.push_back(c.text() + ": the real CPU call gave no output to compare with");
      continue;
    }
    for (std::string mode : {"fake", "meta"}) {
      std::string what = mode == "fake" ? "FakeTensorMode" : "meta-device tensors";
      json f = answer(g, mode + "." + of, mode, &why);
      if (f.is_null()) {
        problems.push_back(c.text() + " under " + what + ": " + why);
        continue;
      }
      if (f["raised"] == true) {
        problems.push_back(c.text() + " under " + what + ": " + raised_text(f));
        continue;
      }
      std::string want_device = mode == "meta" ? "meta" : real.value("device", std::string("?"));
      bool same = f.value("shape", json()) == real.value("shape", json()) &&
                  f.value("dtype", json()) == real.value("dtype", json()) &&
                  f.value("strides", json()) == real.value("strides", json()) &&
                  f.value("device", std::string()) == want_device;
      if (!same) {
        json want = real;
        want["device"] = want_device;
        problems.push_back(c.text() + " under " + what + ": " + describe_meta(f) + ", but the real output has " +
                           describe_meta(want));
      }
    }
    seen += std::string(seen.empty() ? "" : "; ") + torch_dtype(c.dtype) + " " +
            shape_text(real["shape"].get<std::vector<int64_t>>());
  }
  // A Meta kernel that accepts what the real kernels reject lets torch.compile trace a call that fails only when
  // the compiled program runs: the CPU contract's invalid calls, on meta tensors, must raise too.
  ContractOutcome invalid = contract_outcome("meta");
  if (!invalid.not_run.empty()) problems.push_back("invalid calls on meta tensors: " + invalid.not_run);
  for (auto& problem : invalid.problems) problems.push_back(problem);
  if (problems.empty())
    return pass("FakeTensorMode and meta tensors agree with the real output for each input dtype and through views (" +
                seen + "); " + std::to_string(invalid.invalid) + " invalid calls on meta tensors raised");
  fail("the fake (Meta) output's metadata does not match the real output's, or it accepts an invalid call",
       "the same shape, dtype and strides as the real output, for every input dtype; device meta for meta inputs; "
       "the CPU contract's invalid calls raise on meta tensors too",
       lines(problems));
}

TEST_CASE("compile.fullgraph") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::string why;
  json e = answer(g, "compiled", "compile", &why);
  if (e.is_null()) return fail("torch.compile gave no result: " + why);
  if (e["raised"] == true)
    return fail("torch.compile(f, fullgraph=True) failed on f(a, b) = course.mm16(a, b) * 2",
                "the whole function compiles into one graph and runs", raised_text(e));
  std::vector<std::string> problems;
  std::vector<const Call*> used;
  int i = 0;
  for (const char* of : {"cpu.f16.0.0", "cpu.f16.2.0"}) {
    const Call& c = p.call(of);
    used.push_back(&c);
    std::string wrong = doubled_problem(g, "compiled." + std::to_string(i++), c);
    if (!wrong.empty()) problems.push_back(wrong);
  }
  if (problems.empty())
    return pass("torch.compile(fullgraph=True, backend=aot_eager): one graph, right values for " + shapes_of(used));
  fail("the compiled function's output is wrong", "2 * (a @ b)", lines(problems));
}

TEST_CASE("compile.dynamic") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::string why;
  json e = answer(g, "compiled.dynamic", "compile", &why);
  std::vector<const Call*> used;
  for (const char* of : {"cpu.f16.0.0", "cpu.f16.2.0", "cpu.f16.3.0"}) used.push_back(&p.call(of));
  const std::string shapes = shapes_of(used);
  const std::string want = "one compilation for " + shapes +
                           " with M and N marked dynamic (torch._dynamo.mark_dynamic), "
                           "right values";
  if (e.is_null()) return fail("torch.compile(dynamic=True) gave no result: " + why, want);
  if (e["raised"] == true) {
    const std::string seen = raised_text(e);
    // Without any fake kernel, compile fails before a size can be specialised: say which of the two it was.
    if (seen.find("fake tensors") != std::string::npos || seen.find("Meta kernel") != std::string::npos)
      return fail("torch.compile(dynamic=True) failed: the op has no fake (Meta) kernel to trace with", want, seen);
    return fail(
        "torch.compile(dynamic=True) failed: a size the op was marked dynamic in was made a constant "
        "(a.size(i) instead of a.sym_size(i)?)",
        want, seen);
  }
  int compilations = e.value("compilations", 0);
  if (compilations != 1)
    return fail("torch.compile(dynamic=True) compiled " + std::to_string(compilations) +
                    " times for three shapes: "
                    "the fake (Meta) kernel specialised a size, so every new shape recompiles",
                want, std::to_string(compilations) + " compilations");
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < used.size(); ++i) {
    std::string wrong = doubled_problem(g, "compiled.dynamic." + std::to_string(i), *used[i]);
    if (!wrong.empty()) problems.push_back(wrong);
  }
  if (problems.empty()) return pass("one compilation, symbolic M and N, right values for " + shapes);
  fail("the dynamically compiled function's output is wrong", "2 * (a @ b)", lines(problems));
}

TEST_SUITE_END();
