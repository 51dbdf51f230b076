// Chapter 6's rows of course::mm16: opcheck on CPU samples that require grad, the backward against finite
// differences of the submission's own forward, the wrong-backward control, and the backward's harder cases (one
// input requiring grad, inputs changed in place, g a view, float16 inputs). (mm16_1_contract_forward_checks.cpp says
// why the files are numbered.)
#include <doctest/doctest.h>

#include "../judge/grading.hpp"
#include "mm16_plan.hpp"
#include "mm16_rows.hpp"

using namespace judge;
using namespace judge::mm16;

namespace {

// <g, (f(x + h e_i) - f(x - h e_i)) / 2h> for every element of a and b: the gradient the submission's own forward
// implies, from forward values it returned at the judge's perturbed inputs.
struct FiniteDiff {
  bool ok = false;
  std::string why;
  Expected grad_a, grad_b;
};

FiniteDiff finite_differences(const GroupResult& g, const Plan& plan, const Call& c) {
  FiniteDiff fd;
  std::string why;
  json o = answer(g, "fd." + c.name, "fd", &why);
  if (o.is_null()) {
    fd.why = why;
    return fd;
  }
  if (o["raised"] == true) {
    fd.why = "the forward calls at the perturbed inputs " + raised_text(o);
    return fd;
  }
  const Tensor* out = tensor(g, "fd." + c.name);
  const int64_t M = c.M(), K = c.K(), N = c.N(), P = 2 * (M * K + K * N);
  if (!out || out->shape != std::vector<int64_t>{P, M, N}) {
    fd.why = "the forward values at the perturbed inputs have shape " + (out ? shape_text(out->shape) : "(none)") +
             ", expected " + shape_text({P, M, N});
    return fd;
  }
  const Tensor& G = plan.inputs.at(c.name + ".g");
  const double h = 1.0 / 16;
  std::vector<double> d(static_cast<std::size_t>(P / 2));
  for (int64_t p = 0; p < P / 2; ++p) {
    double s = 0;
    for (int64_t e = 0; e < M * N; ++e)
      s += G.values[static_cast<std::size_t>(e)] * (out->values[static_cast<std::size_t>(2 * p * M * N + e)] -
                                                    out->values[static_cast<std::size_t>((2 * p + 1) * M * N + e)]);
    d[static_cast<std::size_t>(p)] = s / (2 * h);
  }
  fd.grad_a = Expected{{M, K}, std::vector<double>(d.begin(), d.begin() + M * K), "", ""};
  fd.grad_b = Expected{{K, N}, std::vector<double>(d.begin() + M * K, d.end()), "", ""};
  fd.ok = true;
  return fd;
}

// The exact gradients for the upstream gradient g: g @ b^T and a^T @ g, computed by the judge in float64.
std::pair<Expected, Expected> exact_gradients(const Plan& plan, const Call& c, const std::string& g_input = "") {
  const Tensor& G = plan.inputs.at(g_input.empty() ? c.name + ".g" : g_input);
  Matrix g{c.M(), c.N(), G.values};
  Matrix ga = product(g, transpose(c.b)), gb = product(transpose(c.a), g);
  return {Expected{{ga.rows, ga.cols}, ga.v, "", ""}, Expected{{gb.rows, gb.cols}, gb.v, "", ""}};
}

constexpr Tolerance kGradTol{1e-6, 1e-6};

std::string grads_problem(const GroupResult& g, const std::string& key, const Expected& ea, const Expected& eb) {
  Comparison a = compare(tensor(g, key + ".grad_a"), ea, kGradTol),
             b = compare(tensor(g, key + ".grad_b"), eb, kGradTol);
  std::string out;
  if (!a.ok) out += "grad_a: " + a.detail;
  if (!b.ok) out += std::string(out.empty() ? "" : "; ") + "grad_b: " + b.detail;
  return out;
}

// The cases of backward.cases, one function each, each adding what it finds wrong to `problems`.

// One input requiring grad: the one gradient asked for is there and right.
void one_input_problems(const GroupResult& g, const Call& c, const Expected& ea, const Expected& eb,
                        std::vector<std::string>& problems) {
  std::string why;
  for (std::string only : {"a", "b"}) {
    const std::string key = "grad.only_" + only + ".ag.nonsquare",
                      where = c.text() + ", only " + only + " requiring grad";
    json r = answer(g, key, "grad", &why);
    if (r.is_null()) {
      problems.push_back(where + ": " + why);
      continue;
    }
    if (r["raised"] == true) {
      problems.push_back(where + ": backward " + raised_text(r));
      continue;
    }
    if (r.value("grad_" + only, false) != true) {
      problems.push_back(where + ": no gradient reached " + only +
                         " (ctx->needs_input_grad(i) asks about input i: "
                         "a is 0, b is 1)");
      continue;
    }
    Comparison cmp = compare(tensor(g, key + ".grad_" + only), only == "a" ? ea : eb, kGradTol);
    if (!cmp.ok) problems.push_back(where + ": grad_" + only + ": " + cmp.detail);
  }
}

// a and b changed in place after the forward: the version counter's refusal (true), or the forward's values'
// gradients.
bool changed_in_place_problems(const GroupResult& g, const Call& c, const Expected& ea, const Expected& eb,
                               std::vector<std::string>& problems) {
  std::string why;
  const std::string changed_key = "grad.changed_in_place.ag.nonsquare";
  const std::string changed = c.text() + ", a and b changed in place (+1) between the forward and the backward";
  bool refused = false;
  if (json r = answer(g, changed_key, "grad", &why); r.is_null()) {
    problems.push_back(changed + ": " + why);
  } else if (r["raised"] == true) {
    refused = r.value("message", std::string()).find("modified by an inplace operation") != std::string::npos;
    if (!refused) problems.push_back(changed + ": backward " + raised_text(r));
  } else {
    for (std::string of : {"a", "b"}) {
      Comparison cmp = compare(tensor(g, changed_key + ".grad_" + of), of == "a" ? ea : eb, kGradTol);
      if (!cmp.ok)
        problems.push_back(changed + ": grad_" + of +
                           " (expected the gradient at the values the forward saw): " + cmp.detail +
                           "; the backward read the changed values: keep a and b with "
                           "ctx->save_for_backward, whose version counter refuses a changed input");
    }
  }
  return refused;
}

// The upstream gradient as a view: its values are right only if the backward reads g through its strides.
void g_layout_problems(const GroupResult& g, const Plan& p, const Call& c, std::vector<std::string>& problems) {
  std::string why;
  const struct {
    const char* key;
    const char* g;
    const char* text;
  } layouts[] = {{"g_transposed", "ag.nonsquare.g", "g a transposed view (as from (out.t() * w).sum())"},
                 {"g_expanded", "ag.nonsquare.g_ones", "g one value expanded, strides 0 (as from out.sum())"}};
  for (auto& l : layouts) {
    auto [la, lb] = exact_gradients(p, c, l.g);
    const std::string key = std::string("grad.") + l.key + ".ag.nonsquare", where = c.text() + ", " + l.text;
    json r = answer(g, key, "grad", &why);
    if (r.is_null())
      problems.push_back(where + ": " + why);
    else if (r["raised"] == true)
      problems.push_back(where + ": backward " + raised_text(r));
    else if (std::string bad = grads_problem(g, key, la, lb); !bad.empty())
      problems.push_back(where + ": " + bad +
                         "; the backward read g's memory as row-major: use at:: operations on "
                         "g, or g.contiguous() before a raw pointer");
  }
}

// float16 inputs: a float32 upstream gradient, float16 gradients.
void float16_problems(const GroupResult& g, const Plan& p, const Call& h, std::vector<std::string>& problems) {
  std::string why;
  auto [ha, hb] = exact_gradients(p, h);
  const std::string where = h.text();
  json r = answer(g, "grad.ag.f16", "grad", &why);
  if (r.is_null())
    problems.push_back(where + ": " + why);
  else if (r["raised"] == true)
    problems.push_back(where + ": backward " + raised_text(r) +
                       " (the upstream gradient has the output's dtype, "
                       "float32: at::mm needs both operands in one dtype)");
  else if (r.value("grad_a", false) != true || r.value("grad_b", false) != true)
    problems.push_back(where + ": no gradient reached " + (r.value("grad_a", false) != true ? "a" : "b"));
  else {
    for (std::string of : {"a", "b"}) {
      std::string dtype = r.value("grad_" + of + "_dtype", std::string("?"));
      if (dtype != "float16") problems.push_back(where + ": grad_" + of + " is " + dtype + ", not its input's float16");
    }
    // float16 gradients: a rounding of half an ulp of float16 on values near 1 (the formula's own error is far larger)
    constexpr Tolerance kHalfGradTol{4e-3, 4e-3};
    Comparison ca = compare(tensor(g, "grad.ag.f16.grad_a"), ha, kHalfGradTol);
    Comparison cb = compare(tensor(g, "grad.ag.f16.grad_b"), hb, kHalfGradTol);
    if (!ca.ok) problems.push_back(where + ": grad_a: " + ca.detail);
    if (!cb.ok) problems.push_back(where + ": grad_b: " + cb.detail);
  }
}

}  // namespace

TEST_SUITE_BEGIN("mm16");

TEST_CASE("opcheck.cpu") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::vector<std::string> of{"opcheck.f32.square", "opcheck.f64.nonsquare", "opcheck.f64.view"};
  std::string problems = opcheck_problems(g, p, of);
  if (problems.empty())
    return pass(
        "4 opcheck tests x 3 samples (float32 square, float64 non-square, float64 through a transposed view; "
        "requires_grad) SUCCESS; outputs right");
  fail("torch.library.opcheck failed on CPU samples that require grad",
       "test_schema, test_autograd_registration, test_faketensor and test_aot_dispatch_dynamic all SUCCESS", problems);
}

TEST_CASE("gradcheck.float64") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::vector<std::string> problems;
  std::string shapes;
  for (const Call* c : p.with_role(Role::Autograd)) {
    std::string why, where = c->text();
    shapes += (shapes.empty() ? "" : ", ") + shape_text({c->M(), c->K()}) + "@" + shape_text({c->K(), c->N()});
    json gc = answer(g, "gradcheck." + c->name, "gradcheck", &why);
    if (gc.is_null())
      problems.push_back(where + ": gradcheck: " + why);
    else if (gc["raised"] == true)
      problems.push_back(where + ": gradcheck " + raised_text(gc));
    else if (gc.value("returned", false) != true)
      problems.push_back(where + ": gradcheck returned False");
    json gr = answer(g, "grad." + c->name, "grad", &why);
    if (gr.is_null()) {
      problems.push_back(where + ": backward: " + why);
      continue;
    }
    if (gr["raised"] == true) {
      problems.push_back(where + ": backward with the judge's upstream gradient " + raised_text(gr));
      continue;
    }
    if (gr.value("grad_a", false) != true || gr.value("grad_b", false) != true) {
      problems.push_back(where + ": no gradient reached " + (gr.value("grad_a", false) != true ? "a" : "b") +
                         " (torch.autograd.grad returned None: is an Autograd kernel registered for course::mm16?)");
      continue;
    }
    FiniteDiff fd = finite_differences(g, p, *c);
    if (!fd.ok) {
      problems.push_back(where + ": finite differences: " + fd.why);
      continue;
    }
    std::string d = grads_problem(g, "grad." + c->name, fd.grad_a, fd.grad_b);
    if (!d.empty()) problems.push_back(where + ": gradients vs the judge's finite differences: " + d);
  }
  if (problems.empty())
    return pass("gradcheck(float64) passed and the gradients match the judge's central differences for " + shapes);
  fail("the backward of course::mm16 is wrong or missing",
       "gradcheck passes, and for the judge's upstream gradient g: grad_a = g @ b^T (a's shape), grad_b = a^T @ g (b's "
       "shape)",
       lines(problems));
}

TEST_CASE("negative_control") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  const Call& c = p.call("ag.nonsquare");
  // The control is only as good as the forward it wraps: a wrong or non-finite forward makes its verdict unreliable,
  // and that is the submission's fault, said so.
  std::string forward = call_problem(g, c);
  std::vector<std::string> problems;
  std::string why;
  json gc = answer(g, "negative.ag.nonsquare", "negative_control", &why);
  if (gc.is_null())
    problems.push_back("gradcheck of the 2x backward: " + why);
  else if (gc.value("gradcheck_error", false) != true)
    problems.push_back("gradcheck of the 2x backward did not raise GradcheckError (" +
                       (gc["raised"] == true ? raised_text(gc) : std::string("it passed")) + ")");
  // the judge's own verdict on the 2x gradients, against the exact ones (independent of the submission's forward)
  auto [ea, eb] = exact_gradients(p, c);
  if (!tensor(g, "negative.ag.nonsquare.grad_a") || !tensor(g, "negative.ag.nonsquare.grad_b"))
    problems.push_back("the 2x backward's gradients did not come back");
  else if (grads_problem(g, "negative.ag.nonsquare", ea, eb).empty())
    problems.push_back("the 2x backward's gradients equal the exact ones: the wrapped forward is not a @ b");
  if (problems.empty())
    return pass("a 2x backward around your forward (" + c.text() +
                "): GradcheckError raised, and the judge rejects its gradients");
  if (!forward.empty())
    return fail(
        "the wrong-backward control is unreliable because your forward is wrong on its inputs (see forward.cpu): " +
            forward,
        "GradcheckError for a 2x backward wrapped around a correct forward", lines(problems));
  fail("the wrong-backward control was not caught", "GradcheckError, and gradients the judge rejects", lines(problems));
}

TEST_CASE("backward.cases") {
  const Plan& p = cpu_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::vector<std::string> problems;
  const Call& c = p.call("ag.nonsquare");
  auto [ea, eb] = exact_gradients(p, c);
  one_input_problems(g, c, ea, eb, problems);
  const bool refused = changed_in_place_problems(g, c, ea, eb, problems);
  g_layout_problems(g, p, c, problems);
  const Call& h = p.call("ag.f16");
  float16_problems(g, p, h, problems);
  if (problems.empty())
    return pass("only a, then only b requiring grad (" + c.text() +
                "): the gradient asked for is right; a and b "
                "changed in place after the forward: " +
                (refused ? "the backward refused (version counter)" : "the gradients of the forward's values") +
                "; g transposed and g expanded: right; float16 inputs (" + h.text() +
                "): float16 gradients, right values");
  fail(
      "the backward is wrong when one input requires grad, for a transposed or expanded g, for float16 inputs, or "
      "after an input changed in place",
      "the gradient of each input that requires grad, in that input's dtype: grad_a = g @ b^T, grad_b = a^T @ g, "
      "g any view, float32 for float16 inputs",
      lines(problems));
}

TEST_SUITE_END();
