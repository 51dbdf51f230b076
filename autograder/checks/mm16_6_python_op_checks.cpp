// Chapter 11's rows of course::mm16 defined in Python (torch.library.triton_op around a Triton kernel) and of its
// in-place epilogue course::scale_bias_ (torch.library.custom_op): the edge tiles against NaN buffers, opcheck where
// Triton's interpreter can run it, the epilogue's declared mutation and its values, and on the GPU what Inductor
// makes of the operator. The forward, fake and autograd rows are chapters 3-6's (mm16_1 to mm16_5).
#include <doctest/doctest.h>

#include "../judge/grading.hpp"
#include "mm16_plan.hpp"
#include "mm16_rows.hpp"

using namespace judge;
using namespace judge::mm16;

namespace {

// out * scale + bias, bias broadcast over the rows: what course::scale_bias_ must leave in out
Expected epilogue_expected(const EpilogueCase& e) {
  Expected want{{e.out.rows, e.out.cols}, {}, "F32", ""};
  for (int64_t i = 0; i < e.out.rows; ++i)
    for (int64_t j = 0; j < e.out.cols; ++j) want.values.push_back(e.out.at(i, j) * e.scale + e.bias.at(0, j));
  return want;
}

// a stored float32 tensor as the judge sent it (out: M x N; bias: 1-D)
Expected as_sent(const Matrix& m, std::vector<int64_t> shape) { return {std::move(shape), m.v, "F32", ""}; }

std::string shape_of(const EpilogueCase& e) { return shape_text({e.out.rows, e.out.cols}); }

// One compiled run of f(a, b) = 2 * mm16(a, b) (probe "compile"): "" when every output is right and, when
// `want_compilations` is not 0, it compiled that many graphs.
std::string compiled_problem(const GroupResult& g, const Plan& p, const std::string& name,
                             const std::vector<std::string>& of, int want_compilations) {
  std::string why;
  json e = answer(g, name, "compile", &why);
  if (e.is_null()) return why;
  if (e["raised"] == true) return "torch.compile " + raised_text(e);
  const int n = e.value("compilations", 0);
  if (want_compilations != 0 && n != want_compilations)
    return std::to_string(n) + " compilation(s) for " + std::to_string(of.size()) + " calls (expected " +
           std::to_string(want_compilations) + ")";
  std::vector<std::string> wrong;
  for (std::size_t i = 0; i < of.size(); ++i) {
    std::string w = doubled_problem(g, name + "." + std::to_string(i), p.call(of[i]));
    if (!w.empty()) wrong.push_back(w);
  }
  return wrong.empty() ? "" : "wrong values:" + lines(wrong);
}

}  // namespace

TEST_SUITE_BEGIN("mm16");

TEST_CASE("triton.masked_edges") {
  const Plan& p = cpu_plan();
  products_row(run(p), p.with_role(Role::Edges),
               "products of operands inside NaN-filled buffers (16 more rows and columns of NaN past each edge)",
               "every product right and free of NaN: each tl.load of an edge tile masked (other=0.0), the store too");
}

TEST_CASE("opcheck.interpreter") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::string problems = opcheck_problems(g, p, {"opcheck.f16.nonsquare", "opcheck.f64.view"});
  if (problems.empty())
    return pass(
        "test_schema, test_autograd_registration and test_faketensor SUCCESS on a float16 sample and a float64 "
        "sample that requires grad (a transposed); outputs right (test_aot_dispatch_dynamic: opcheck.cuda)");
  fail("torch.library.opcheck failed on CPU samples (Triton's interpreter)",
       "test_schema, test_autograd_registration and test_faketensor all SUCCESS", problems);
}

TEST_CASE("mutation.declared") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  const EpilogueCase& e = epilogue_cases().front();
  std::string why;
  json o = answer(g, e.name, "epilogue", &why);
  if (o.is_null()) return fail("course::scale_bias_ was not probed: " + why);
  const std::vector<std::string> args = o["arguments"].get<std::vector<std::string>>();
  const std::vector<bool> writes = o["writes"].get<std::vector<bool>>();
  const std::string schema = o["schema"].get<std::string>();
  if (args.size() != 3 || writes.size() != 3)
    return fail("course::scale_bias_ does not take (out, scale, bias)",
                "scale_bias_(Tensor(a!) out, float scale, "
                "Tensor bias) -> ()",
                schema);
  if (o["raised"] == true)
    return fail("course::scale_bias_ raised on a valid call (" + shape_of(e) + ")", "it changes out and returns",
                raised_text(o));
  // the judge's own before/after: what changed is what the schema must declare
  std::vector<std::string> problems;
  const bool out_changed = !compare(tensor(g, e.name + ".out"), as_sent(e.out, {e.out.rows, e.out.cols}), {0, 0}).ok;
  const bool bias_changed = !compare(tensor(g, e.name + ".bias"), as_sent(e.bias, {e.bias.cols}), {0, 0}).ok;
  if (out_changed && !writes[0])
    problems.push_back("the call changed " + args[0] + " but the schema does not declare it written: " + schema);
  if (bias_changed && !writes[2])
    problems.push_back("the call changed " + args[2] + " but the schema does not declare it written: " + schema);
  if (!out_changed)
    problems.push_back("the call left " + args[0] + " as it was (nothing to declare: see epilogue.cpu)");
  const json checked = o.value("opcheck", json::object());
  const std::string verdict = checked.value("test_schema", std::string("(did not run)"));
  if (verdict != "SUCCESS") problems.push_back("opcheck's test_schema: " + verdict.substr(0, 400));
  if (problems.empty())
    return pass(schema + ": " + args[0] + " declared written and changed, " + args[2] +
                " unchanged; opcheck's test_schema SUCCESS");
  fail("course::scale_bias_ changes an argument its schema does not declare",
       "mutates_args names every argument the call changes: out is Tensor(a!) in the schema", lines(problems));
}

TEST_CASE("epilogue.cpu") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::vector<std::string> problems, shapes;
  for (const EpilogueCase& e : epilogue_cases()) {
    std::string why;
    json o = answer(g, e.name, "epilogue", &why);
    const std::string where = "out " + shape_of(e) + ", bias [" + std::to_string(e.bias.cols) + "]";
    if (o.is_null()) {
      problems.push_back(where + ": " + why);
      continue;
    }
    if (!e.valid) {  // a bias of the wrong length: refused, out untouched
      if (o["raised"] != true) problems.push_back(where + ": returned; a bias of the wrong size must raise");
      continue;
    }
    shapes.push_back(shape_of(e));
    if (o["raised"] == true) {
      problems.push_back(where + ": " + raised_text(o));
      continue;
    }
    if (o.value("returned", std::string()) != "NoneType")
      problems.push_back(where + ": returned a " + o.value("returned", std::string("?")) + ", not None");
    Comparison cmp = compare(tensor(g, e.name + ".out"), epilogue_expected(e), {1e-6, 1e-6});
    if (!cmp.ok) problems.push_back(where + ": out after the call: " + cmp.detail);
    Comparison kept = compare(tensor(g, e.name + ".bias"), as_sent(e.bias, {e.bias.cols}), {0, 0});
    if (!kept.ok) problems.push_back(where + ": bias changed: " + kept.detail);
  }
  if (problems.empty()) {
    std::string list;
    for (auto& s : shapes) list += (list.empty() ? "" : ", ") + s;
    return pass("out * scale + bias in place for out " + list + "; a bias of the wrong size refused");
  }
  fail("course::scale_bias_ is wrong",
       "out becomes out * scale + bias (bias over the rows), bias unchanged, None "
       "returned; a bias that is not [out.size(1)] raises",
       lines(problems));
}

TEST_CASE("compile.cuda") {
  if (skip_without_cuda()) return;
  const Plan& p = cuda_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::vector<std::string> problems;
  std::string s = compiled_problem(g, p, "compiled.cuda", {"cuda.f16.0.0", "cuda.f16.2.0"}, 0);
  if (!s.empty()) problems.push_back("static shapes: " + s);
  s = compiled_problem(g, p, "compiled.cuda.dynamic", {"cuda.f16.0.0", "cuda.f16.2.0", "cuda.f16.3.0"}, 1);
  if (!s.empty()) problems.push_back("dynamic=True, M and N marked dynamic: " + s);
  if (problems.empty())
    return pass(
        "Inductor, fullgraph=True: right products with static shapes, and one graph for three shapes with "
        "M and N dynamic");
  fail("torch.compile (Inductor) of f(a, b) = 2 * mm16(a, b) failed on CUDA",
       "fullgraph=True compiles and gives 2 * (a @ b); with M and N marked dynamic, one compilation for three shapes",
       lines(problems));
}

TEST_CASE("compile.sees_kernel") {
  if (skip_without_cuda()) return;
  const Plan& p = cuda_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  const std::vector<std::string> names = triton_kernels();
  if (names.empty()) return fail("the module has no @triton.jit function for Inductor to compile");
  std::string why;
  json o = answer(g, "compiled_code", "compiled_code", &why);
  if (o.is_null()) return fail("the compiled code was not read: " + why);
  const std::string want = "Inductor's generated code holds your kernel (" + names.front() +
                           ") and calls no torch.ops.course.mm16; one graph";
  if (o["raised"] == true) return fail("torch.compile (Inductor, fullgraph=True) failed", want, raised_text(o));
  std::vector<std::string> problems;
  std::string inside;
  const auto seen = o.value("names_in_code", std::vector<bool>{});
  for (std::size_t i = 0; i < names.size() && i < seen.size(); ++i)
    if (seen[i]) inside += (inside.empty() ? "" : ", ") + names[i];
  if (inside.empty())
    problems.push_back("none of the module's @triton.jit kernels is in the generated code: Inductor did not see it");
  if (o.value("calls_op", false))
    problems.push_back("the generated code calls torch.ops.course.mm16: the operator stayed an opaque call");
  if (o.value("graphs", 0) != 1) problems.push_back(std::to_string(o.value("graphs", 0)) + " graphs compiled, not 1");
  std::string wrong = doubled_problem(g, "compiled_code", p.call("cuda.f16.0.0"));
  if (!wrong.empty()) problems.push_back(wrong);
  if (problems.empty())
    return pass("Inductor compiled " + inside + " into the graph (" + std::to_string(o.value("code_files", 0)) +
                " code file(s), no call of course.mm16, one graph); right values");
  fail("torch.compile did not see into the operator", want, lines(problems));
}

TEST_SUITE_END();
