// Chapter 1: course::scale_add, a raw-pointer kernel made into a dispatcher operator. The judge chooses the inputs,
// computes alpha * x + y itself in float64, and reads torch.compile's graph counts for the op and its pybind11 twin.
#include <doctest/doctest.h>

#include <csignal>
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
      {"x", random_tensor(kRows, kCols, 1)}, {"y", random_tensor(kRows, kCols, 2)}, {"xt", random_tensor(kCols, kRows, 3)},
      {"yt", random_tensor(kCols, kRows, 4)}};
  return in;
}

json alpha_args(bool guard = false) {
  json a = {{"alpha", alpha()}};
  if (guard) a["guard"] = true;
  return a;
}


constexpr Tolerance kTol{1e-6, 1e-5};

// Element [r, c] of the stored input `name` (row-major), or of its transpose when the worker passes name.t().
struct At {
  const Tensor* t;
  bool transposed;
  double operator()(int64_t r, int64_t c) const { return t->values[transposed ? c * kRows + r : r * kCols + c]; }
};
At plain(const char* name) { return {&inputs().at(name), false}; }
At transposed(const char* name) { return {&inputs().at(name), true}; }

// alpha * x + y as the judge computes it in float64 (x and y read as the op must read them, through their views),
// plus `extra` (the compiled function adds 1 and doubles alpha).
Expected reference(At x_at, double a, double extra = 0, At y_at = plain("y")) {
  Expected e{{kRows, kCols}, {}, "F32", ""};
  for (int64_t i = 0; i < kRows * kCols; ++i)
    e.values.push_back(a * x_at(i / kCols, i % kCols) + y_at(i / kCols, i % kCols) + extra);
  return e;
}

struct Call {
  const char* call;  // the worker's name of the call
  const char* what;
  At x_at, y_at;
};

// Compares the returned tensors with the judge's own float64 references, through the judge's one comparator: one
// verdict for the row, naming every call that went wrong. `guard`: the worker's inputs sit against guard pages.
void check_results(std::initializer_list<Call> list, bool guard = false) {
  const GroupResult& found_group = Session::get().group("scale_add", alpha_args(guard), inputs());
  if (guard && !found_group.ok && found_group.process.term_signal == SIGSEGV)
    return fail("course::scale_add reads or writes outside its inputs: with x and y placed right before (then right "
                "after) a page that cannot be touched, the process was killed by SIGSEGV. A loop bound one too far "
                "(i <= n) or a pointer one element early touches memory that belongs to something else",
                "every access within x.numel() elements of x's and y's data", found_group.failure);
  const GroupResult& g = Session::get().require("scale_add", alpha_args(guard), inputs());
  const json calls = g.report.value("calls", json::object());
  char a[32];
  std::snprintf(a, sizeof a, "%g", alpha());
  std::string right, wrong, seen;
  for (const Call& k : list) {
    const json c = calls.is_object() ? calls.value(k.call, json::object()) : json::object();
    if (c.value("raised", false)) {
      wrong += std::string(wrong.empty() ? "" : "; ") + "raised on a valid call (" + k.what + ")";
      seen += std::string("\n  ") + k.what + ": " + c.value("type", "") + ": " + c.value("message", "");
      continue;
    }
    auto found = g.tensors.find(k.call);
    Comparison cmp = compare(found == g.tensors.end() ? nullptr : &found->second, reference(k.x_at, alpha(), 0, k.y_at), kTol);
    if (cmp.ok) right += std::string(right.empty() ? "" : "; ") + k.what + ": " + cmp.detail;
    else {
      wrong += std::string(wrong.empty() ? "" : "; ") + "wrong values (" + k.what + ")";
      seen += std::string("\n  ") + k.what + ": " + cmp.detail;
    }
  }
  if (wrong.empty()) return pass(right + " (alpha * x + y, alpha = " + a + ", against the float64 reference)");
  fail("course::scale_add: " + wrong, std::string("alpha * x + y with alpha = ") + a + ", float32 of shape " +
       shape_text({kRows, kCols}), list.size() == 1 ? seen.substr(3) : seen);
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
    // each input's data ends (then starts) at a guard page: one element read past either end is a SIGSEGV
    check_results({{"plain", "contiguous 7x13 inputs ending at a guard page", plain("x"), plain("y")},
                   {"plain_start", "starting after a guard page", plain("x"), plain("y")}},
                  /*guard=*/true);
  }

  TEST_CASE("op.strides") {
    // the worker passes xt.t() (then yt.t()): element [r, c] is xt[c, r]. Each operand alone, so a copy of one
    // and not the other is seen.
    check_results({{"transposed", "x is a transposed view, strides (1, 7)", transposed("xt"), plain("y")},
                   {"y_transposed", "y is a transposed view, strides (1, 7)", plain("x"), transposed("yt")}});
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
    Comparison cmp = compare(&found->second, reference(plain("x"), 2 * alpha(), 1.0), kTol);
    if (!cmp.ok) return fail("torch.compile ran the op but the values are wrong", "2 * alpha * x + y + 1", cmp.detail);
    pass(op_seen + "; " + twin_seen.substr(0, twin_seen.find("; first break:")) +
         "; compiled values match the float64 reference");
  }
}
