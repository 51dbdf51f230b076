// Chapter 1: course::scale_add, a raw-pointer kernel made into a dispatcher operator. The judge chooses the inputs,
// computes alpha * x + y itself in float64, and reads torch.compile's graph counts for the op and its pybind11 twin.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "../judge/compare.hpp"
#include "../judge/grading.hpp"

using namespace judge;

namespace {
constexpr int64_t kRows = 7, kCols = 13;  // non-square, so a transposed input cannot pass by accident

double alpha() {
  // one of a few exactly representable values, chosen by the seed (never 1: a missing alpha must show)
  const double choices[] = {-1.5, 0.75, 2.5, 3.25};
  return choices[Session::get().cfg.seed % 4];
}

Tensor random_tensor(int64_t rows, int64_t cols, uint64_t salt) {
  std::mt19937_64 rng(Session::get().cfg.seed * 1000003u + salt);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  Tensor t{"F32", {rows, cols}, {}};
  for (int64_t i = 0; i < rows * cols; ++i) t.values.push_back(dist(rng));
  return t;
}

const std::map<std::string, Tensor>& inputs() {
  static std::map<std::string, Tensor> in = {
      {"x", random_tensor(kRows, kCols, 1)}, {"y", random_tensor(kRows, kCols, 2)}, {"xt", random_tensor(kCols, kRows, 3)}};
  return in;
}

json alpha_args() { return {{"alpha", alpha()}}; }


constexpr Tolerance kTol{1e-6, 1e-5};

// alpha * x + y as the judge computes it in float64 (x indexed through `x_at`, so a transposed x is read as the op
// must read it), plus `extra` (the compiled function adds 1 and doubles alpha).
template <class XAt>
Expected reference(XAt x_at, double a, double extra = 0) {
  const Tensor& y = inputs().at("y");
  Expected e{{kRows, kCols}, {}, "F32", ""};
  for (int64_t i = 0; i < kRows * kCols; ++i) e.values.push_back(a * x_at(i / kCols, i % kCols) + y.values[i] + extra);
  return e;
}

// Compares a returned tensor with the judge's own float64 reference, through the judge's one comparator.
template <class XAt>
void check_result(const std::string& call, const char* what, XAt x_at) {
  const GroupResult& g = Session::get().require("scale_add", alpha_args(), inputs());
  const json calls = g.report.value("calls", json::object());
  const json c = calls.is_object() ? calls.value(call, json::object()) : json::object();
  if (c.value("raised", false))
    return fail(std::string("course::scale_add raised on a valid call (") + what + ")",
                "a float32 tensor of shape " + shape_text({kRows, kCols}), c.value("type", "") + ": " + c.value("message", ""));
  auto found = g.tensors.find(call);
  Comparison cmp = compare(found == g.tensors.end() ? nullptr : &found->second, reference(x_at, alpha()), kTol);
  char a[32];
  std::snprintf(a, sizeof a, "%g", alpha());
  if (cmp.ok) return pass(std::string(what) + ": alpha * x + y (alpha = " + a + ") matches the float64 reference: " + cmp.detail);
  fail(std::string("wrong values (") + what + ")", std::string("alpha * x + y with alpha = ") + a + ", float32 of shape " +
       shape_text({kRows, kCols}), cmp.detail);
}

std::string explain_summary(const json& e) {
  if (e.contains("error")) return "torch._dynamo.explain raised " + e["error"].get<std::string>();
  std::string s = std::to_string(e.value("graph_count", -1)) + " graph(s), " +
                  std::to_string(e.value("graph_break_count", -1)) + " graph break(s)";
  for (auto& r : e.value("break_reasons", json::array()))
    if (r.is_string()) return s + "; first break: " + r.get<std::string>();
  return s;
}
}  // namespace

TEST_SUITE("01_custom_op") {
  TEST_CASE("op.schema") {
    const GroupResult& g = Session::get().require("inspect");
    const std::string want = "course::scale_add(Tensor x, Tensor y, float alpha) -> Tensor";
    std::string registered;
    for (auto& op : g.report.value("ops", json::array())) {
      if (!op.is_object() || !op["schema"].is_string()) continue;
      registered += (registered.empty() ? "" : ", ") + op["schema"].get<std::string>();
      if (op["name"] != "course::scale_add" || op.value("overload", "") != "") continue;
      const std::string seen = op["schema"];
      if (seen != want) return fail("course::scale_add is declared with a different schema", want, seen);
      bool cpu = false;
      for (auto& k : op.value("kernels", json::array())) cpu |= k == "CPU";
      if (!cpu)
        return fail("course::scale_add is declared but has no CPU kernel", "a kernel for the CPU dispatch key",
                    "kernels for: " + op.value("kernels", json::array()).dump());
      return pass(seen + ", with a CPU kernel");
    }
    fail("course::scale_add is not declared", want,
         registered.empty() ? "no operator in the namespace 'course'" : "only " + registered);
  }

  TEST_CASE("op.forward") {
    const Tensor& x = inputs().at("x");
    check_result("plain", "contiguous 7x13 inputs", [&](int64_t r, int64_t c) { return x.values[r * kCols + c]; });
  }

  TEST_CASE("op.strides") {
    const Tensor& xt = inputs().at("xt");  // the worker passes xt.t(): element [r, c] is xt[c, r]
    check_result("transposed", "x is a transposed view, strides (1, 7)",
                 [&](int64_t r, int64_t c) { return xt.values[c * kRows + r]; });
  }

  TEST_CASE("op.contract") {
    const GroupResult& g = Session::get().require("contract", json::object(), inputs());
    const json calls = g.report.value("calls", json::object());
    const std::pair<const char*, const char*> cases[] = {
        {"shape_mismatch", "x of shape [7, 13] with y of shape [13, 7] (the same number of elements)"},
        {"float64", "float64 x and y (the kernel reads float32)"}};
    std::string seen;
    bool all = true;
    for (auto& [key, what] : cases) {
      const json c = calls.value(key, json::object());
      const bool raised = c.value("raised", false);
      all &= raised;
      seen += std::string("\n  ") + what + ": " +
              (raised ? "raised " + c.value("type", "") + ": " + c.value("message", "").substr(0, 160)
                      : "returned " + c.value("returned", "nothing") + " " + c.value("dtype", "") + " " +
                            (c.contains("shape") ? shape_text(c["shape"].get<std::vector<int64_t>>()) : ""));
    }
    if (all) return pass("both invalid calls raised and the worker carried on");
    fail("an invalid call did not raise: the raw kernel ran on inputs it cannot handle",
         "each invalid call raises (TORCH_CHECK)", seen);
  }

  TEST_CASE("compile.graph") {
    json args = alpha_args();
    args["twin_dir"] = (fs::path(COURSE_BINARY_DIR) / "twins").string();
    const GroupResult& g = Session::get().require("compile", args, inputs());
    const json op = g.report.value("op", json::object()), twin = g.report.value("twin", json::object());
    const std::string op_seen = "op: " + explain_summary(op), twin_seen = "pybind11 twin: " + explain_summary(twin);
    if (op.value("graph_count", -1) != 1 || op.value("graph_break_count", -1) != 0)
      return fail("torch.compile could not keep course::scale_add in its graph",
                  "op: 1 graph(s), 0 graph break(s)", op_seen);
    if (twin.value("graph_break_count", 0) < 1)
      return fail("the pybind11 twin did not break the graph: the demonstration did not reproduce",
                  "pybind11 twin: at least 1 graph break", twin_seen);
    // positive evidence the compiled function computed the right values: 2 * alpha * x + y + 1
    auto found = g.tensors.find("compiled");
    if (found == g.tensors.end())
      return fail("the compiled function returned nothing", "a tensor",
                  g.report.value("compiled_error", std::string("(no tensor)")));
    const Tensor& x = inputs().at("x");
    Comparison cmp = compare(&found->second, reference([&](int64_t r, int64_t c) { return x.values[r * kCols + c]; },
                                                       2 * alpha(), 1.0), kTol);
    if (!cmp.ok) return fail("torch.compile ran the op but the values are wrong", "2 * alpha * x + y + 1", cmp.detail);
    pass(op_seen + "; " + twin_seen.substr(0, twin_seen.find("; first break:")) +
         "; compiled values match the float64 reference");
  }
}
