// Chapters 3-6: course::mm16 on the CPU and on CUDA, its Meta kernel and its backward. The judge chooses every
// input (float16-representable values from the run's seed), the worker runs the submission on them and returns raw
// data, and every verdict is computed here: forward values against the judge's own float64 product, gradients
// against finite differences of forward values the worker returned, fake metadata against the real output, error
// behaviour from the worker's report and its exit status. opcheck, gradcheck and torch.compile run in the worker
// for their standard messages, but a row passes only on evidence checked here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "../judge/grading.hpp"
#include "cuobjdump.hpp"

using namespace judge;

namespace {

// --- inputs the judge chooses ----------------------------------------------------------------------------------
Tensor matrix(const std::string& dtype, std::vector<int64_t> shape, std::mt19937_64& rng) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  t.values.resize(static_cast<std::size_t>(t.numel()));
  for (auto& v : t.values) v = half_to_float(float_to_half(u(rng)));  // exactly representable in float16
  return t;
}

std::mt19937_64 rng_for(const std::string& tag) {
  return std::mt19937_64(Session::get().cfg.seed ^ std::hash<std::string>{}(tag));
}

bool has_check(const std::string& id) { return Session::get().exercise.find_check(id) != nullptr; }

// A logical M x K matrix stored row-major (after the judge resolved any view).
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  double at(int64_t i, int64_t j) const { return v[static_cast<std::size_t>(i * cols + j)]; }
};
Mat as_mat(const Tensor& t) { return Mat{t.shape.at(0), t.shape.at(1), t.values}; }

Mat product(const Mat& a, const Mat& b) {
  Mat c{a.rows, b.cols, std::vector<double>(static_cast<std::size_t>(a.rows * b.cols), 0.0)};
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k)
      for (int64_t j = 0; j < b.cols; ++j) c.v[static_cast<std::size_t>(i * c.cols + j)] += a.at(i, k) * b.at(k, j);
  return c;
}
Mat transpose(const Mat& m) {
  Mat t{m.cols, m.rows, std::vector<double>(m.v.size())};
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) t.v[static_cast<std::size_t>(j * t.cols + i)] = m.at(i, j);
  return t;
}

// The non-contiguous case: the worker passes a = at.t() and b = bw[:, ::2].
Mat nc_a(const Tensor& at) { return transpose(as_mat(at)); }
Mat nc_b(const Tensor& bw) {
  Mat w = as_mat(bw), b{w.rows, w.cols / 2, {}};
  for (int64_t k = 0; k < b.rows; ++k)
    for (int64_t j = 0; j < b.cols; ++j) b.v.push_back(w.at(k, 2 * j));
  return b;
}

// Shapes of the forward cases: non-square, and not multiples of 16 (edge tiles on CUDA).
const std::map<std::string, Tensor>& cpu_inputs() {
  static std::map<std::string, Tensor> in;
  if (!in.empty()) return in;
  auto rng = rng_for("mm16_cpu");
  in["fwd0_a"] = matrix("F16", {37, 45}, rng);
  in["fwd0_b"] = matrix("F16", {45, 29}, rng);
  in["fwd1_a"] = matrix("F64", {23, 64}, rng);
  in["fwd1_b"] = matrix("F64", {64, 11}, rng);
  in["fwd2_a"] = matrix("F32", {5, 7}, rng);
  in["fwd2_b"] = matrix("F32", {7, 3}, rng);
  in["nc_at"] = matrix("F16", {45, 21}, rng);  // a = at.t(): 21 x 45, strides (1, 21)
  in["nc_bw"] = matrix("F16", {45, 26}, rng);  // b = bw[:, ::2]: 45 x 13, strides (26, 2)
  if (has_check("gradcheck.float64") || has_check("negative_control")) {
    const int64_t M = 3, K = 4, N = 5;
    in["ag_a"] = matrix("F64", {M, K}, rng);
    in["ag_b"] = matrix("F64", {K, N}, rng);
    in["ag_g"] = matrix("F64", {M, N}, rng);
    // Central differences, one element of a or b at a time: pairs (+h, -h) for a's elements, then b's.
    const double h = 1.0 / 16;
    Tensor fa{"F64", {2 * (M * K + K * N), M, K}, {}}, fb{"F64", {2 * (M * K + K * N), K, N}, {}};
    auto push = [&](int64_t which, int64_t idx, double sign) {
      Tensor a = in["ag_a"], b = in["ag_b"];
      (which == 0 ? a : b).values[static_cast<std::size_t>(idx)] += sign * h;
      fa.values.insert(fa.values.end(), a.values.begin(), a.values.end());
      fb.values.insert(fb.values.end(), b.values.begin(), b.values.end());
    };
    for (int64_t p = 0; p < M * K; ++p) { push(0, p, +1); push(0, p, -1); }
    for (int64_t p = 0; p < K * N; ++p) { push(1, p, +1); push(1, p, -1); }
    in["fd_a"] = fa;
    in["fd_b"] = fb;
  }
  if (has_check("opcheck.cpu")) {
    in["oc0_a"] = matrix("F32", {4, 6}, rng);
    in["oc0_b"] = matrix("F32", {6, 3}, rng);
    in["oc1_a"] = matrix("F64", {5, 2}, rng);
    in["oc1_b"] = matrix("F64", {2, 7}, rng);
  }
  return in;
}

const std::map<std::string, Tensor>& cuda_inputs() {
  static std::map<std::string, Tensor> in;
  if (!in.empty()) return in;
  auto rng = rng_for("mm16_cuda");
  in["cuda_fwd0_a"] = matrix("F16", {37, 45}, rng);
  in["cuda_fwd0_b"] = matrix("F16", {45, 29}, rng);
  in["cuda_fwd1_a"] = matrix("F16", {70, 130}, rng);
  in["cuda_fwd1_b"] = matrix("F16", {130, 18}, rng);
  in["cuda_nc_at"] = matrix("F16", {45, 21}, rng);
  in["cuda_nc_bw"] = matrix("F16", {45, 26}, rng);
  return in;
}

json cpu_args() {
  return {{"fake", has_check("fake.meta")}, {"compile", has_check("compile.fullgraph")},
          {"autograd", has_check("gradcheck.float64") || has_check("negative_control")},
          {"opcheck", has_check("opcheck.cpu")}};
}
json cuda_args() { return {{"opcheck", has_check("opcheck.cuda")}}; }

const GroupResult& cpu_group() { return Session::get().group("mm16_cpu", cpu_args(), cpu_inputs()); }
const GroupResult& cuda_group() { return Session::get().group("mm16_cuda", cuda_args(), cuda_inputs()); }

// --- reading the worker's report --------------------------------------------------------------------------------
std::string shape_str(const json& shape) {
  std::string s = "[";
  if (shape.is_array())
    for (std::size_t i = 0; i < shape.size(); ++i)
      s += (i ? ", " : "") + (shape[i].is_number_integer() ? std::to_string(shape[i].get<int64_t>()) : "?");
  return s + "]";
}
std::string shape_str(const std::vector<int64_t>& shape) { return shape_str(json(shape)); }

// "raised RuntimeError: message" for an entry that raised (first line of the message only, capped)
std::string raised_str(const json& e) {
  std::string msg = e.value("message", "");
  auto nl = msg.find('\n');
  if (nl != std::string::npos) msg = msg.substr(0, nl);
  if (msg.size() > 300) msg = msg.substr(0, 300) + "...";
  return "raised " + e.value("type", std::string("an exception")) + ": " + msg;
}


struct Compare {
  bool ok = false;
  std::string detail;  // where the largest error is, and how large
};

// |seen - ref| <= atol + rtol * |ref| elementwise; the shape first.
Compare compare(const Tensor* seen, const Mat& ref, double atol, double rtol) {
  Compare c;
  if (!seen) {
    c.detail = "no output tensor came back";
    return c;
  }
  if (seen->shape != std::vector<int64_t>{ref.rows, ref.cols}) {
    c.detail = "shape " + shape_str(seen->shape) + " instead of " + shape_str(std::vector<int64_t>{ref.rows, ref.cols});
    return c;
  }
  double worst = -1, worst_excess = -1;
  std::size_t at = 0, bad = 0;
  for (std::size_t i = 0; i < ref.v.size(); ++i) {
    double err = std::fabs(seen->values[i] - ref.v[i]);
    if (std::isnan(seen->values[i])) err = INFINITY;
    double excess = err - (atol + rtol * std::fabs(ref.v[i]));
    if (excess > 0) ++bad;
    if (excess > worst_excess) { worst_excess = excess; worst = err; at = i; }
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "largest error %.3g at [%zu, %zu] (got %.6g, reference %.6g); %zu of %zu elements outside atol=%.2g rtol=%.2g",
                worst, at / static_cast<std::size_t>(ref.cols), at % static_cast<std::size_t>(ref.cols),
                seen->values[at], ref.v[at], bad, ref.v.size(), atol, rtol);
  c.detail = buf;
  c.ok = bad == 0;
  return c;
}

const Tensor* tensor_of(const GroupResult& g, const std::string& key) {
  auto it = g.tensors.find(key);
  return it == g.tensors.end() ? nullptr : &it->second;
}

// float16 inputs, float32 (or wider) accumulation: 1e-3, growing with sqrt(K) for long sums.
double fp16_tol(int64_t K) { return 1e-3 * std::max(1.0, std::sqrt(static_cast<double>(K) / 16.0)); }

// One forward case: the output's values against the judge's product. Returns "" when right, else what is wrong.
std::string check_case(const GroupResult& g, const std::string& key, const Mat& ref, double tol, std::string* ok_note) {
  const json& e = g.report[key];
  if (!e.is_object()) return key + ": no result in the worker's report";
  if (e.value("raised", false)) return key + ": " + raised_str(e);
  Compare c = compare(tensor_of(g, key), ref, tol, tol);
  if (!c.ok) return key + ": " + c.detail;
  if (ok_note) *ok_note += (ok_note->empty() ? "" : "; ") + key + " " + shape_str(std::vector<int64_t>{ref.rows, ref.cols}) + " ok";
  return "";
}

// Fails the row with the group's own failure when the worker did not answer.
bool group_ok_or_fail(const GroupResult& g) {
  if (g.ok) return true;
  fail(g.failure, "the worker runs your operator on the judge's inputs and answers");
  return false;
}

// --- the contract -----------------------------------------------------------------------------------------------
json contract_calls(const std::string& device) {
  auto spec = [](const char* dtype, std::vector<int64_t> shape, bool cpu = false) {
    json s = {{"dtype", dtype}, {"shape", shape}};
    if (cpu) s["cpu"] = true;
    return s;
  };
  json calls = json::array();
  auto add = [&](const char* device, const char* label, json a, json b, bool valid = false) {
    calls.push_back({{"device", device}, {"label", label}, {"a", a}, {"b", b}, {"valid", valid}});
  };
  add("cpu", "a is 1-D: mm16(a[6], b[6, 4])", spec("float32", {6}), spec("float32", {6, 4}));
  add("cpu", "inner sizes differ: mm16(a[3, 5], b[4, 2])", spec("float32", {3, 5}), spec("float32", {4, 2}));
  add("cpu", "dtypes differ: mm16(float16 a, float32 b)", spec("float16", {3, 4}), spec("float32", {4, 2}));
  add("cpu", "integer inputs: mm16(int32 a, int32 b)", spec("int32", {3, 4}), spec("int32", {4, 2}));
  add("cpu", "valid call: mm16(float32 a[3, 4], float32 b[4, 2])", spec("float32", {3, 4}), spec("float32", {4, 2}), true);
  if (has_check("contract.cuda")) {
    add("cuda", "devices differ: mm16(CUDA a, CPU b)", spec("float16", {3, 4}), spec("float16", {4, 2}, true));
    add("cuda", "float32 on CUDA: mm16(float32 a, float32 b)", spec("float32", {3, 4}), spec("float32", {4, 2}));
    add("cuda", "inner sizes differ on CUDA: mm16(a[3, 5], b[4, 2])", spec("float16", {3, 5}), spec("float16", {4, 2}));
    add("cuda", "3-D input on CUDA: mm16(a[2, 3, 4], b[4, 2])", spec("float16", {2, 3, 4}), spec("float16", {4, 2}));
    add("cuda", "valid call: mm16(float16 CUDA a[3, 4], b[4, 2])", spec("float16", {3, 4}), spec("float16", {4, 2}), true);
  }
  json mine = json::array();  // one worker per device: a CUDA call that hangs or crashes costs only the CUDA row
  for (auto& c : calls)
    if (c["device"] == device) mine.push_back(c);
  return mine;
}

void check_contract(const std::string& device) {
  json calls = contract_calls(device);
  const GroupResult& g = Session::get().group("mm16_contract", {{"calls", calls}});
  if (!g.ok) {
    return fail("the invalid calls did not leave the process running: " + g.failure,
                "each invalid call raises an exception (TORCH_CHECK) that the caller catches, and the process goes on",
                "the worker did not finish normally");
  }
  if (!g.report.value("survived", false)) return fail("the worker did not report that it survived the calls");
  std::map<std::string, json> seen;
  for (auto& c : g.report.value("calls", json::array()))
    if (c.is_object() && c.contains("label") && c["label"].is_string()) seen[c["label"].get<std::string>()] = c;
  std::vector<std::string> problems;
  int invalid = 0;
  for (auto& c : calls) {
    if (c["device"] != device) continue;
    std::string label = c["label"].get<std::string>();
    auto it = seen.find(label);
    if (it == seen.end()) { problems.push_back(label + ": no result (missing)"); continue; }
    const json& r = it->second;
    bool raised = r.value("raised", false);
    if (c["valid"].get<bool>()) {
      if (raised) problems.push_back(label + ": " + raised_str(r) + " (an operator that always raises proves nothing)");
      continue;
    }
    ++invalid;
    if (!raised) {
      std::string res = r.contains("result") && r["result"].is_object()
                            ? "a " + r["result"].value("dtype", std::string("?")) + " tensor of shape " + shape_str(r["result"]["shape"])
                            : "a value";
      problems.push_back(label + ": returned " + res + " instead of raising");
    } else if (r.value("message", "").empty()) {
      problems.push_back(label + ": raised " + r.value("type", std::string("?")) + " with an empty message");
    }
  }
  if (problems.empty())
    return pass(std::to_string(invalid) + " invalid calls raised with a message, the valid call worked, the process survived");
  std::string seen_text;
  for (auto& p : problems) seen_text += "\n    " + p;
  fail(std::to_string(problems.size()) + " of the " + device + " contract calls went wrong",
       "every invalid call raises (RuntimeError from TORCH_CHECK) with a message saying what is wrong; the valid call returns",
       seen_text);
}

// --- finite differences (autograd) ------------------------------------------------------------------------------
struct FiniteDiff {
  bool ok = false;
  std::string why;
  Mat grad_a, grad_b;  // <g, dC> / (2h) for each element of a and b
};

FiniteDiff finite_differences(const GroupResult& g) {
  FiniteDiff fd;
  const auto& in = cpu_inputs();
  const Tensor& A = in.at("ag_a");
  const Tensor& B = in.at("ag_b");
  const Tensor& G = in.at("ag_g");
  const int64_t M = A.shape[0], K = A.shape[1], N = B.shape[1];
  const Tensor* out = tensor_of(g, "fd_out");
  if (!out) {
    fd.why = g.report.contains("fd") && g.report["fd"].value("raised", false)
                 ? "the forward calls for the finite differences " + raised_str(g.report["fd"])
                 : "no forward values came back for the finite differences";
    return fd;
  }
  const int64_t P = 2 * (M * K + K * N);
  if (out->shape != std::vector<int64_t>{P, M, N}) {
    fd.why = "the forward values for the finite differences have shape " + shape_str(out->shape) + ", expected " +
             shape_str(std::vector<int64_t>{P, M, N});
    return fd;
  }
  const double h = 1.0 / 16;
  std::vector<double> d(static_cast<std::size_t>(P / 2));
  for (int64_t p = 0; p < P / 2; ++p) {
    double s = 0;
    for (int64_t e = 0; e < M * N; ++e)
      s += G.values[static_cast<std::size_t>(e)] *
           (out->values[static_cast<std::size_t>((2 * p) * M * N + e)] - out->values[static_cast<std::size_t>((2 * p + 1) * M * N + e)]);
    d[static_cast<std::size_t>(p)] = s / (2 * h);
  }
  fd.grad_a = Mat{M, K, std::vector<double>(d.begin(), d.begin() + M * K)};
  fd.grad_b = Mat{K, N, std::vector<double>(d.begin() + M * K, d.end())};
  fd.ok = true;
  return fd;
}

// Compares gradients the worker returned (grad_a_key, grad_b_key) with the finite differences.
// Returns "" when both match.
std::string compare_grads(const GroupResult& g, const FiniteDiff& fd, const std::string& ka, const std::string& kb) {
  std::string out;
  Compare ca = compare(tensor_of(g, ka), fd.grad_a, 1e-6, 1e-6);
  Compare cb = compare(tensor_of(g, kb), fd.grad_b, 1e-6, 1e-6);
  if (!ca.ok) out += "grad_a: " + ca.detail;
  if (!cb.ok) out += std::string(out.empty() ? "" : "; ") + "grad_b: " + cb.detail;
  return out;
}

std::string opcheck_problems(const GroupResult& g, const std::string& key,
                             const std::vector<std::pair<std::string, std::string>>& samples, bool cuda) {
  if (!g.report.contains(key) || !g.report[key].is_array() || g.report[key].size() != samples.size())
    return "no opcheck results came back (a missing result is a failure)";
  const auto& in = cuda ? cuda_inputs() : cpu_inputs();
  std::string problems;
  auto add = [&](const std::string& s) { problems += (problems.empty() ? "" : "\n    ") + s; };
  const std::vector<std::string> tests{"test_schema", "test_autograd_registration", "test_faketensor",
                                       "test_aot_dispatch_dynamic"};
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const json& e = g.report[key][i];
    std::string name = "sample " + std::to_string(i) + " (" + e.value("dtype", std::string("?")) + ")";
    if (!e.is_object()) { add(name + ": no result"); continue; }
    auto rg = e.value("requires_grad", json::array());
    if (rg != json::array({true, true})) add(name + ": the sample did not require grad (the judge asked it to)");
    if (e.contains("error")) { add(name + ": opcheck " + raised_str(e["error"])); continue; }
    const json results = e.value("results", json::object());
    for (auto& t : tests) {
      if (!results.contains(t)) add(name + ": " + t + " did not run");
      else if (results[t] != "SUCCESS") {
        std::string msg = results[t].is_string() ? results[t].get<std::string>() : results[t].dump();
        auto nl = msg.find('\n');
        if (nl != std::string::npos && nl < 400) msg = msg.substr(0, nl);
        if (msg.size() > 400) msg = msg.substr(0, 400) + "...";
        add(name + ": " + t + " failed: " + msg);
      }
    }
    // numbers: opcheck compares the op with itself, never with the right answer; the judge does that
    const Tensor& a = in.at(samples[i].first);
    const Tensor& b = in.at(samples[i].second);
    Mat ref = product(as_mat(a), as_mat(b));
    double tol = a.dtype == "F64" ? 1e-9 : a.dtype == "F32" ? 1e-5 : fp16_tol(a.shape[1]);
    Compare c = compare(tensor_of(g, key + "_out" + std::to_string(i)), ref, tol, tol);
    if (!c.ok) add(name + ": the op's output on the sample is wrong: " + c.detail);
  }
  return problems;
}

std::string describe_meta(const json& m) {
  if (!m.is_object()) return "(nothing)";
  return "shape " + shape_str(m.value("shape", json::array())) + ", dtype " + m.value("dtype", std::string("?")) +
         ", strides " + shape_str(m.value("strides", json::array())) + ", device " + m.value("device", std::string("?"));
}

// cuobjdump's listing of a built library
struct Listing {
  bool ok = false;
  std::string text, why;
};
Listing cuobjdump(const fs::path& lib, const std::vector<std::string>& flags) {
  auto c = run_cuobjdump(lib, flags);
  return Listing{c.ok, c.text, c.why};
}

}  // namespace

TEST_SUITE("mm16") {
  TEST_CASE("contract.cpu") { check_contract("cpu"); }

  TEST_CASE("contract.cuda") {
    if (skip_without_cuda()) return;
    check_contract("cuda");
  }

  TEST_CASE("forward.cpu") {
    const GroupResult& g = cpu_group();
    if (!group_ok_or_fail(g)) return;
    const auto& in = cpu_inputs();
    std::string note, problems;
    for (auto [key, tol] : {std::pair<std::string, double>{"fwd0", fp16_tol(45)}, {"fwd1", 1e-9}}) {
      Mat ref = product(as_mat(in.at(key + "_a")), as_mat(in.at(key + "_b")));
      std::string p = check_case(g, key, ref, tol, &note);
      if (!p.empty()) problems += (problems.empty() ? "" : "\n    ") + p;
    }
    if (problems.empty()) return pass(note + " (float16 37x45 @ 45x29 and float64 23x64 @ 64x11 vs float64 products)");
    fail("the CPU output does not match the judge's float64 product",
         "fwd0 = float16 [37, 45] @ [45, 29] and fwd1 = float64 [23, 64] @ [64, 11] match a @ b computed in float64",
         "\n    " + problems);
  }

  TEST_CASE("noncontig.cpu") {
    const GroupResult& g = cpu_group();
    if (!group_ok_or_fail(g)) return;
    const auto& in = cpu_inputs();
    const json& ni = g.report.value("nc_inputs", json::object());
    if (ni.value("a_contiguous", true) || ni.value("b_contiguous", true))
      return fail("the worker did not pass non-contiguous inputs (no evidence)");
    Mat ref = product(nc_a(in.at("nc_at")), nc_b(in.at("nc_bw")));
    std::string note;
    std::string p = check_case(g, "nc", ref, fp16_tol(45), &note);
    if (p.empty()) return pass("a = at.t() (strides (1, 21)) and b = bw[:, ::2] (strides (26, 2)): right product");
    fail("wrong product for non-contiguous inputs (contiguous ones are checked by forward.cpu)",
         "a = at.t() with strides " + shape_str(ni.value("a", json::object()).value("strides", json::array())) +
             " and b = bw[:, ::2] with strides " + shape_str(ni.value("b", json::object()).value("strides", json::array())) +
             " give a @ b",
         p);
  }

  TEST_CASE("dtype.cpu") {
    const GroupResult& g = cpu_group();
    if (!group_ok_or_fail(g)) return;
    std::string problems, seen;
    for (auto [key, in_dt, want] : {std::tuple<const char*, const char*, const char*>{"fwd0", "float16", "float32"},
                                    {"fwd2", "float32", "float32"}, {"fwd1", "float64", "float64"}}) {
      const json& e = g.report.value(key, json::object());
      std::string got = e.value("raised", false) ? "an exception (see forward.cpu)" : e.value("dtype", std::string("(no result)"));
      seen += std::string(seen.empty() ? "" : ", ") + in_dt + " -> " + got;
      if (got != want) problems += std::string(problems.empty() ? "" : ", ") + in_dt + " inputs gave " + got;
    }
    if (problems.empty()) return pass(seen);
    fail("the output dtype is wrong: " + problems, "float16 -> float32, float32 -> float32, float64 -> float64", seen);
  }

  TEST_CASE("cuda.registered") {
    const GroupResult& g = Session::get().require("inspect");
    for (auto& op : g.report.value("ops", json::array())) {
      if (!op.is_object() || op.value("name", "") != "course::mm16" || op.value("overload", "x") != "") continue;
      auto kernels = op.value("kernels", json::array());
      std::string ks;
      for (auto& k : kernels) ks += (ks.empty() ? "" : ", ") + k.get<std::string>();
      if (std::find(kernels.begin(), kernels.end(), "CUDA") != kernels.end())
        return pass("course::mm16 has kernels for " + ks);
      return fail("course::mm16 has no kernel for the CUDA dispatch key", "kernels for CPU and CUDA",
                  ks.empty() ? "no kernels" : "kernels for " + ks);
    }
    fail("course::mm16 is not registered", "TORCH_LIBRARY(course, m) { m.def(\"mm16(Tensor a, Tensor b) -> Tensor\"); }",
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

  TEST_CASE("fake.meta") {
    const GroupResult& g = cpu_group();
    if (!group_ok_or_fail(g)) return;
    std::string problems, note;
    auto add = [&](const std::string& s) { problems += (problems.empty() ? "" : "\n    ") + s; };
    for (std::string key : {"fwd0", "fwd1"}) {
      const json& real = g.report.value(key, json::object());
      if (!real.is_object() || real.value("raised", true)) { add(key + ": the real CPU call gave no output to compare with"); continue; }
      for (std::string mode : {"fake", "meta"}) {
        const json& f = g.report.value(mode + "_" + key, json::object());
        std::string what = mode == "fake" ? "FakeTensorMode" : "meta-device tensors";
        if (!f.is_object() || f.empty()) { add(key + " under " + what + ": no result (missing)"); continue; }
        if (f.value("raised", false)) { add(key + " under " + what + ": " + raised_str(f)); continue; }
        std::string want_device = mode == "meta" ? "meta" : real.value("device", std::string("?"));
        bool same = f.value("shape", json()) == real.value("shape", json()) && f.value("dtype", json()) == real.value("dtype", json()) &&
                    f.value("strides", json()) == real.value("strides", json()) && f.value("device", std::string()) == want_device;
        if (!same) {
          json want = real;
          want["device"] = want_device;
          add(key + " under " + what + ": " + describe_meta(f) + ", but the real output has " + describe_meta(want));
        }
      }
      if (problems.empty()) note = describe_meta(real);
    }
    if (problems.empty()) return pass("FakeTensorMode and meta tensors agree with the real output (" + note + ", ...)");
    fail("the fake (Meta) output's metadata does not match the real output's",
         "the same shape, dtype and strides as the real output; device meta for meta inputs", "\n    " + problems);
  }

  TEST_CASE("compile.fullgraph") {
    const GroupResult& g = cpu_group();
    if (!group_ok_or_fail(g)) return;
    const json& e = g.report.value("compiled", json::object());
    if (!e.is_object() || e.empty()) return fail("torch.compile gave no result (missing)");
    if (e.value("raised", false))
      return fail("torch.compile(f, fullgraph=True) failed on f(a, b) = course.mm16(a, b) * 2",
                  "the whole function compiles into one graph and runs", raised_str(e));
    const auto& in = cpu_inputs();
    Mat ref = product(as_mat(in.at("fwd0_a")), as_mat(in.at("fwd0_b")));
    for (auto& v : ref.v) v *= 2;
    Compare c = compare(tensor_of(g, "compiled"), ref, 2 * fp16_tol(45), fp16_tol(45));
    if (c.ok) return pass("torch.compile(fullgraph=True, backend=aot_eager): one graph, right values");
    fail("the compiled function's output is wrong", "2 * (a @ b) for float16 a [37, 45], b [45, 29]", c.detail);
  }

  TEST_CASE("opcheck.cpu") {
    const GroupResult& g = cpu_group();
    if (!group_ok_or_fail(g)) return;
    std::string p = opcheck_problems(g, "opcheck", {{"oc0_a", "oc0_b"}, {"oc1_a", "oc1_b"}}, false);
    if (p.empty()) return pass("4 opcheck tests x 2 samples (float32, float64; requires_grad) SUCCESS; outputs right");
    fail("torch.library.opcheck failed on CPU samples that require grad",
         "test_schema, test_autograd_registration, test_faketensor and test_aot_dispatch_dynamic all SUCCESS",
         "\n    " + p);
  }

  TEST_CASE("gradcheck.float64") {
    const GroupResult& g = cpu_group();
    if (!group_ok_or_fail(g)) return;
    std::vector<std::string> problems;
    const json& gc = g.report.value("gradcheck", json::object());
    if (!gc.is_object() || gc.empty()) problems.push_back("gradcheck: no result (missing)");
    else if (gc.value("raised", false)) problems.push_back("gradcheck " + raised_str(gc));
    else if (!gc.value("returned", false)) problems.push_back("gradcheck returned False");
    const json& ag = g.report.value("ag_grad", json::object());
    FiniteDiff fd = finite_differences(g);
    if (!ag.is_object() || ag.empty()) problems.push_back("backward: no result (missing)");
    else if (ag.value("raised", false)) problems.push_back("backward with the judge's upstream gradient " + raised_str(ag));
    else if (ag.value("grad_a", json()).is_null() || ag.value("grad_b", json()).is_null())
      problems.push_back(std::string("backward: no gradient reached ") +
                         (ag.value("grad_a", json()).is_null() ? "a" : "b") +
                         " (torch.autograd.grad returned None: is an Autograd kernel registered for course::mm16?)");
    else if (!fd.ok) problems.push_back("finite differences: " + fd.why);
    else {
      std::string d = compare_grads(g, fd, "ag_grad_a", "ag_grad_b");
      if (!d.empty()) problems.push_back("gradients vs the judge's finite differences: " + d);
    }
    if (problems.empty())
      return pass("gradcheck(float64) passed; grad_a [3, 4] and grad_b [4, 5] match the judge's central differences");
    std::string seen;
    for (auto& p : problems) seen += "\n    " + p;
    fail("the backward of course::mm16 is wrong or missing",
         "gradcheck passes, and for the judge's upstream gradient g: grad_a = g @ b^T [3, 4], grad_b = a^T @ g [4, 5]",
         seen);
  }

  TEST_CASE("negative_control") {
    const GroupResult& g = cpu_group();
    if (!group_ok_or_fail(g)) return;
    std::vector<std::string> problems;
    const json& gc = g.report.value("negative_gradcheck", json::object());
    if (!gc.is_object() || gc.empty()) problems.push_back("gradcheck of the 2x backward: no result (missing)");
    else if (!gc.value("gradcheck_error", false))
      problems.push_back("gradcheck of the 2x backward did not raise GradcheckError (" +
                         (gc.value("raised", false) ? raised_str(gc) : std::string("it passed")) + ")");
    FiniteDiff fd = finite_differences(g);
    if (!fd.ok) problems.push_back("the judge's finite differences: " + fd.why);
    else if (!tensor_of(g, "neg_grad_a") || !tensor_of(g, "neg_grad_b"))
      problems.push_back("the 2x backward's gradients did not come back");
    else if (compare_grads(g, fd, "neg_grad_a", "neg_grad_b").empty())
      problems.push_back("the judge's finite differences did not reject the 2x gradients");
    if (problems.empty())
      return pass("a 2x backward around your forward: GradcheckError raised, and rejected by the judge's finite differences");
    std::string seen;
    for (auto& p : problems) seen += "\n    " + p;
    fail("the wrong-backward control was not caught", "GradcheckError, and a mismatch with the finite differences", seen);
  }

  // --- CUDA rows ------------------------------------------------------------------------------------------------
  TEST_CASE("forward.cuda") {
    if (skip_without_cuda()) return;
    const GroupResult& g = cuda_group();
    if (!group_ok_or_fail(g)) return;
    const auto& in = cuda_inputs();
    std::string note, problems;
    for (std::string key : {"cuda_fwd0", "cuda_fwd1"}) {
      const Tensor& a = in.at(key + "_a");
      Mat ref = product(as_mat(a), as_mat(in.at(key + "_b")));
      std::string p = check_case(g, key, ref, fp16_tol(a.shape[1]), &note);
      if (!p.empty()) problems += (problems.empty() ? "" : "\n    ") + p;
    }
    if (problems.empty()) return pass(note + " (float16 37x45 @ 45x29 and 70x130 @ 130x18: edge tiles)");
    fail("the CUDA output does not match the judge's float64 product",
         "float16 [37, 45] @ [45, 29] and [70, 130] @ [130, 18] (sizes not multiples of 16) within atol=rtol=1e-3*max(1, sqrt(K/16))",
         "\n    " + problems);
  }

  TEST_CASE("noncontig.cuda") {
    if (skip_without_cuda()) return;
    const GroupResult& g = cuda_group();
    if (!group_ok_or_fail(g)) return;
    const auto& in = cuda_inputs();
    Mat ref = product(nc_a(in.at("cuda_nc_at")), nc_b(in.at("cuda_nc_bw")));
    std::string p = check_case(g, "cuda_nc", ref, fp16_tol(45), nullptr);
    if (p.empty()) return pass("a = at.t() and b = bw[:, ::2] on CUDA: right product");
    fail("wrong product for non-contiguous CUDA inputs", "a = at.t() (strides (1, 21)), b = bw[:, ::2] (strides (26, 2)) give a @ b", p);
  }

  TEST_CASE("device.cuda") {
    if (skip_without_cuda()) return;
    const GroupResult& g = cuda_group();
    if (!group_ok_or_fail(g)) return;
    const json& e = g.report.value("cuda_fwd0", json::object());
    if (!e.is_object() || e.empty() || e.value("raised", false))
      return fail("no CUDA output to inspect", "a tensor", e.is_object() && e.value("raised", false) ? raised_str(e) : "nothing");
    std::string dev = e.value("device", std::string("?"));
    if (dev != "cuda:0") return fail("the output is not on the inputs' device", "device cuda:0 (the inputs')", "device " + dev);
    int count = g.report.value("device_count", 1);
    if (count > 1) {
      const json& gd = g.report.value("cuda_guard", json::object());
      std::string want = "cuda:" + std::to_string(count - 1);
      if (!gd.is_object() || gd.empty() || gd.value("raised", false))
        return fail("with inputs on " + want + " while cuda:0 is current, the op gave no output", "a tensor on " + want,
                    gd.is_object() && gd.value("raised", false) ? raised_str(gd) : "nothing");
      if (gd.value("device", std::string()) != want)
        return fail("with inputs on " + want + " while cuda:0 is current, the output is elsewhere", "device " + want,
                    "device " + gd.value("device", std::string("?")));
      const auto& in = cuda_inputs();
      Compare c = compare(tensor_of(g, "cuda_guard"), product(as_mat(in.at("cuda_fwd0_a")), as_mat(in.at("cuda_fwd0_b"))),
                          fp16_tol(45), fp16_tol(45));
      if (!c.ok) return fail("inputs on " + want + " while cuda:0 is current: wrong values (device guard?)", "a @ b", c.detail);
      return pass("output on the inputs' device, also for " + want + " while cuda:0 is current");
    }
    pass("output on cuda:0, the inputs' device (one GPU: the guard with another current device is not exercised)");
  }

  TEST_CASE("stream.cuda") {
    if (skip_without_cuda()) return;
    const GroupResult& g = cuda_group();
    if (!group_ok_or_fail(g)) return;
    const auto& in = cuda_inputs();
    Mat ref = product(as_mat(in.at("cuda_fwd0_a")), as_mat(in.at("cuda_fwd0_b")));
    std::string p = check_case(g, "cuda_stream", ref, fp16_tol(45), nullptr);
    if (p.empty()) return pass("on a side stream (sleep, write a, call): the kernel ran after the write, on that stream");
    fail("called on a side stream right after a (delayed) write of its input, the op read the input before the write",
         "the kernel is ordered after earlier work on PyTorch's current stream, so it reads the written a", p +
         " (zeros read from a give a zero product: a launch on the legacy default stream does that)");
  }

  TEST_CASE("sync.cuda") {
    if (skip_without_cuda()) return;
    const GroupResult& g = Session::get().group("mm16_sync", json::object(), cuda_inputs());
    if (!g.ok)
      return fail("capturing the op in a CUDA graph ended the worker: " + g.failure,
                  "the op can be captured (no device-wide synchronisation inside it)");
    // evidence that the op ran at all (its values are forward.cuda's business)
    const json& eager = g.report.value("eager", json::object());
    if (!eager.is_object() || eager.empty() || eager.value("raised", false))
      return fail("the op did not run before the capture", "a tensor",
                  eager.is_object() && eager.value("raised", false) ? raised_str(eager) : "no result (missing)");
    const json& c = g.report.value("capture", json::object());
    if (!c.is_object() || c.empty()) return fail("no result for the CUDA-graph capture (missing)");
    if (c.value("raised", false))
      return fail("capturing the op in a CUDA graph (torch.cuda.graph) failed: a synchronisation inside the op",
                  "capture succeeds: the op only enqueues work on the current stream", raised_str(c));
    pass("the op was captured in a CUDA graph: no device-wide synchronisation inside it");
  }

  TEST_CASE("ptx.cuda") {
    if (skip_without_cuda()) return;
    const BuildResult& b = Session::get().build("ptx");
    if (!b.ok) return fail("the PTX-only build (compute_75 PTX, no machine code) failed: " + b.failure, "it builds", b.log);
    Listing l = cuobjdump(b.library, {"--list-elf", "--list-ptx"});
    if (l.ok && l.text.find(".cubin") != std::string::npos)
      return fail("the PTX-only build holds machine code: the PTX path would not be exercised", "PTX only", l.text);
    const GroupResult& g = Session::get().group("mm16_cuda", {{"forward_only", true}}, cuda_inputs(), "ptx");
    if (!group_ok_or_fail(g)) return;
    const auto& in = cuda_inputs();
    std::string note, problems;
    for (std::string key : {"cuda_fwd0", "cuda_fwd1"}) {
      const Tensor& a = in.at(key + "_a");
      std::string p = check_case(g, key, product(as_mat(a), as_mat(in.at(key + "_b"))), fp16_tol(a.shape[1]), &note);
      if (!p.empty()) problems += (problems.empty() ? "" : "\n    ") + p;
    }
    if (problems.empty()) return pass("built as compute_75 PTX only, JIT-compiled by the driver: " + note);
    fail("the PTX-only build gives wrong results", "the same products as the machine-code build", "\n    " + problems);
  }

  TEST_CASE("opcheck.cuda") {
    if (skip_without_cuda()) return;
    const GroupResult& g = cuda_group();
    if (!group_ok_or_fail(g)) return;
    std::string p = opcheck_problems(g, "cuda_opcheck", {{"cuda_fwd0_a", "cuda_fwd0_b"}, {"cuda_fwd1_a", "cuda_fwd1_b"}}, true);
    if (p.empty()) return pass("4 opcheck tests x 2 float16 CUDA samples (requires_grad) SUCCESS; outputs right");
    fail("torch.library.opcheck failed on CUDA samples that require grad",
         "test_schema, test_autograd_registration, test_faketensor and test_aot_dispatch_dynamic all SUCCESS", "\n    " + p);
  }
}
