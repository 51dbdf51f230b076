// Chapter 1: course::scale_add, a raw-pointer kernel made into a dispatcher operator. The judge chooses the inputs,
// computes alpha * x + y itself in float64, and reads torch.compile's graph counts for the op and its pybind11 twin.
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <random>
#include <sstream>

#include "../judge/compare.hpp"
#include "../judge/grading.hpp"
#include "dispatched_ops.hpp"

using namespace judge;

namespace {
constexpr int64_t kRows = 7, kCols = 13;  // non-square, so a transposed input cannot pass by accident

// alpha of the grade's call i. Each row's two calls get one negative and one positive alpha (which call gets which, the
// seed decides), so every grade uses all four exactly representable values and every row sees a sign change; never
// 1, so a missing alpha must show.
double alpha(int i) {
  static const std::vector<double> order = [] {
    auto rng = rng_for("scale_add alphas");
    std::vector<double> out;
    for (auto pair : {std::pair<double, double>{-1.5, 3.25}, {0.75, -0.625}}) {
      if (rng() % 2) std::swap(pair.first, pair.second);
      out.push_back(pair.first);
      out.push_back(pair.second);
    }
    return out;
  }();
  return order[static_cast<std::size_t>(i) % order.size()];
}

Tensor random_tensor(int64_t rows, int64_t cols, const std::string& name) {
  auto rng = rng_for("scale_add input " + name);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  Tensor t{"F32", {rows, cols}, {}};
  for (int64_t i = 0; i < rows * cols; ++i) t.values.push_back(dist(rng));
  return t;
}

const std::map<std::string, Tensor>& inputs() {
  static std::map<std::string, Tensor> in = {{"x", random_tensor(kRows, kCols, "x")},
                                             {"y", random_tensor(kRows, kCols, "y")},
                                             {"xt", random_tensor(kCols, kRows, "xt")},
                                             {"yt", random_tensor(kCols, kRows, "yt")}};
  return in;
}

// The compiled function's: negative, as one of each row's two calls is, so a sign mistake shows in every value row.
constexpr double kCompileAlpha = -1.5;

// The op.forward calls (guard) or the op.strides calls, each with its alpha.
json alpha_args(bool guard) {
  json a = {{"alphas", guard ? json{{"plain", alpha(0)}, {"plain_start", alpha(1)}}
                             : json{{"transposed", alpha(2)}, {"y_transposed", alpha(3)}}}};
  if (guard)
    a["guard"] = true;
  else
    a["profile"] = true;  // op.kernel: what the op dispatches for a transposed x, in the same worker run
  return a;
}

constexpr Tolerance kTol{1e-6, 1e-5};

// Element [r, c] of the stored input `name` (row-major), or of its transpose when the worker passes name.t().
struct At {
  const Tensor* t;
  bool transposed;
  int64_t rows() const { return t->shape[transposed ? 1 : 0]; }
  int64_t cols() const { return t->shape[transposed ? 0 : 1]; }
  double operator()(int64_t r, int64_t c) const {
    return t->values[static_cast<std::size_t>(transposed ? c * t->shape[1] + r : r * t->shape[1] + c)];
  }
};
At plain(const char* name) { return {&inputs().at(name), false}; }
At transposed(const char* name) { return {&inputs().at(name), true}; }

// The input `at` as it was before the call (the op must leave x and y as they were).
Expected unchanged(At at) {
  Expected e{{at.rows(), at.cols()}, {}, "F32", ""};
  for (int64_t i = 0; i < at.rows() * at.cols(); ++i) e.values.push_back(at(i / at.cols(), i % at.cols()));
  return e;
}

// alpha * x + y as the judge computes it in float64 (x and y read as the op must read them, through their views),
// plus `extra` (the compiled function adds 1 and doubles alpha).
Expected reference(At x_at, double a, double extra = 0, At y_at = plain("y")) {
  const int64_t rows = x_at.rows(), cols = x_at.cols();
  Expected e{{rows, cols}, {}, "F32", ""};
  for (int64_t i = 0; i < rows * cols; ++i)
    e.values.push_back(a * x_at(i / cols, i % cols) + y_at(i / cols, i % cols) + extra);
  return e;
}

struct Call {
  const char* call;  // the worker's name of the call
  const char* what;
  At x_at, y_at;
  int alpha_index;  // alpha(alpha_index) is its alpha
};

// Compares the returned tensors with the judge's own float64 references, through the judge's one comparator: one
// verdict for the row, naming every call that went wrong. `guard`: the worker's inputs sit against guard pages.
void check_results(std::initializer_list<Call> list, bool guard) {
  const GroupResult& found_group = Session::get().group("scale_add", alpha_args(guard), inputs());
  if (guard && !found_group.ok && found_group.process.term_signal == SIGSEGV)
    return fail(
        "course::scale_add reads or writes outside its inputs: with x and y placed right before (then right "
        "after) a page that cannot be touched, the process was killed by SIGSEGV. A loop bound one too far "
        "(i <= n) or a pointer one element early touches memory that belongs to something else",
        "every access within x.numel() elements of x's and y's data", found_group.failure);
  const GroupResult& g = Session::get().require("scale_add", alpha_args(guard), inputs());
  const json calls = g.report.value("calls", json::object());
  std::string right, wrong, seen, alphas;
  auto returned = [&](const std::string& name) {
    auto found = g.tensors.find(name);
    return found == g.tensors.end() ? nullptr : &found->second;
  };
  for (const Call& k : list) {
    char a[32];
    std::snprintf(a, sizeof a, "%g", alpha(k.alpha_index));
    alphas += std::string(alphas.empty() ? "" : ", ") + a + " (" + k.call + ")";
    const json c = calls.is_object() ? calls.value(k.call, json::object()) : json::object();
    if (c.value("raised", false)) {
      wrong += std::string(wrong.empty() ? "" : "; ") + "raised on a valid call (" + k.what + ")";
      seen += std::string("\n  ") + k.what + ": " + c.value("type", "") + ": " + c.value("message", "");
      continue;
    }
    Comparison cmp = compare(returned(k.call), reference(k.x_at, alpha(k.alpha_index), 0, k.y_at), kTol);
    if (cmp.ok)
      right += std::string(right.empty() ? "" : "; ") + k.what + ": " + cmp.detail;
    else {
      wrong += std::string(wrong.empty() ? "" : "; ") + "wrong values (" + k.what + ")";
      seen += std::string("\n  ") + k.what + ": " + cmp.detail;
    }
    // a Tensor is a handle: y.add_() inside the op reaches the caller's y, even through `const at::Tensor&`
    for (auto [input, at] : {std::pair<const char*, At>{"x", k.x_at}, {"y", k.y_at}}) {
      Comparison after =
          compare(returned(std::string(k.call) + "." + input + "_after"), unchanged(at), Tolerance{0, 0});
      if (after.ok) continue;
      wrong += std::string(wrong.empty() ? "" : "; ") + "changed its input " + input + " (" + k.what + ")";
      seen += std::string("\n  ") + k.what + ": " + input + " after the call: " + after.detail;
    }
  }
  if (wrong.empty()) return pass(right + " (alpha * x + y, alpha = " + alphas + ", against the float64 reference)");
  fail("course::scale_add: " + wrong,
       "alpha * x + y with alpha = " + alphas + ", in a new float32 tensor of x's shape; x and y left as they were",
       seen.find('\n', 1) == std::string::npos ? seen.substr(3) : seen);
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

TEST_SUITE_BEGIN("01_custom_op");

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
  // each input's data ends (then starts) at a guard page: one element read past either end is a SIGSEGV
  check_results({{"plain", "contiguous 7x13 inputs ending at a guard page", plain("x"), plain("y"), 0},
                 {"plain_start", "starting after a guard page", plain("x"), plain("y"), 1}},
                /*guard=*/true);
}

TEST_CASE("op.strides") {
  // the worker passes xt.t() (then yt.t()): element [r, c] is xt[c, r]. Each operand alone, so a copy of one
  // and not the other is seen.
  check_results({{"transposed", "x is a transposed view, strides (1, 7)", transposed("xt"), plain("y"), 2},
                 {"y_transposed", "y is a transposed view, strides (1, 7)", plain("x"), transposed("yt"), 3}},
                false);
}

TEST_CASE("op.kernel") {
  const GroupResult& g = Session::get().require("scale_add", alpha_args(false), inputs());
  const json d = g.report.value("dispatched", json::object());
  const std::string what = "a call with x a transposed view";
  if (d.value("raised", true))
    return fail("the op raised, so what it runs could not be seen (see op.strides)",
                "alpha * x + y from scale_add_kernel",
                what + ": " + d.value("type", "no answer") + ": " + d.value("message", ""));
  const auto ops = d.value("ops", std::vector<std::string>{});
  const std::string computing = computing_ops(ops);
  if (computing.empty())
    return pass(only_layout_ran({ops.begin(), ops.end()}, "course::scale_add") +
                ": scale_add_kernel did the arithmetic (" + what + ")");
  fail("PyTorch's operators computed alpha * x + y, not scale_add_kernel",
       std::string("inside course::scale_add (the profiler's record of what it dispatched) ") + kAllowedInsideTheOp +
           ": no aten::add, mul or other arithmetic",
       what + ": " + other_ops_ran("course::scale_add", computing));
}

TEST_CASE("op.contract") {
  const GroupResult& g = Session::get().require("contract", json::object(), inputs());
  const json calls = g.report.value("calls", json::object());
  const std::pair<const char*, const char*> cases[] = {
      {"shape_mismatch", "x of shape [7, 13] with y of shape [13, 7] (the same number of elements)"},
      {"float64", "float64 x and y (the kernel reads float32)"},
      {"shape_mismatch_meta", "the same shape mismatch on meta tensors (the Meta kernel torch.compile traces with)"}};
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
  if (all) return pass("the three invalid calls raised and the worker carried on");
  fail("an invalid call did not raise: the raw kernel ran on inputs it cannot handle",
       "each invalid call raises (TORCH_CHECK)", seen);
}

TEST_CASE("compile.graph") {
  json args = {{"alpha", kCompileAlpha}};
  args["twin_dir"] = (fs::path(COURSE_BINARY_DIR) / "twins").string();
  const GroupResult& g = Session::get().require("compile", args, inputs());
  const json op = g.report.value("op", json::object()), twin = g.report.value("twin", json::object());
  const std::string op_seen = "op: " + explain_summary(op), twin_seen = "pybind11 twin: " + explain_summary(twin);
  if (op.value("graph_count", -1) != 1 || op.value("graph_break_count", -1) != 0)
    return fail("torch.compile could not keep course::scale_add in its graph", "op: 1 graph(s), 0 graph break(s)",
                op_seen);
  if (twin.value("graph_break_count", 0) < 1)
    return fail("the pybind11 twin did not break the graph: the demonstration did not reproduce",
                "pybind11 twin: at least 1 graph break", twin_seen);
  // positive evidence the compiled function computed the right values: 2 * alpha * x + y + 1
  auto found = g.tensors.find("compiled");
  if (found == g.tensors.end())
    return fail("the compiled function returned nothing", "a tensor",
                g.report.value("compiled_error", std::string("(no tensor)")));
  Comparison cmp = compare(&found->second, reference(plain("x"), 2 * kCompileAlpha, 1.0), kTol);
  if (!cmp.ok) return fail("torch.compile ran the op but the values are wrong", "2 * alpha * x + y + 1", cmp.detail);
  pass(op_seen + "; " + twin_seen.substr(0, twin_seen.find("; first break:")) +
       "; compiled values match the float64 reference");
}

TEST_SUITE_END();
