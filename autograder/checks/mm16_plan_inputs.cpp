// The plans of a grade of course::mm16 (chapters 3 to 6): every input the judge draws from the grade's seed (twelve
// shape classes, each called twice with new values, views, three dtypes, the autograd cases, the invalid calls of
// the contract) and every probe it asks the worker to run on them, only for the checks the exercise lists.
#include "mm16_plan.hpp"
#include "mm16_plan_draw.hpp"

#include <cmath>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

namespace judge::mm16 {

bool has_check(const std::string& id) { return Session::get().exercise.find_check(id) != nullptr; }

int64_t pick(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}
int64_t pick_not16(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  int64_t x;
  do x = pick(rng, lo, hi);
  while (x % 16 == 0);
  return x;
}

// Values exactly representable in float16, so every dtype sees the same numbers and the judge's float64 product is
// the exact one.
Matrix random_matrix(int64_t rows, int64_t cols, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Matrix m{rows, cols, std::vector<double>(static_cast<std::size_t>(rows * cols))};
  for (auto& x : m.v) x = half_to_float(float_to_half(u(rng)));
  return m;
}

namespace {

// Square and not, multiples of 16 and not, tiny, tall and wide, a K long enough to test accumulation, and empty
// operands (torch.mm's answer: zeros for K = 0, an empty output for M = 0; a grid of no blocks cannot be launched).
std::vector<ShapeClass> draw_shapes(std::mt19937_64& rng) {
  std::vector<ShapeClass> s;
  int64_t m = pick_not16(rng, 17, 70), k = pick_not16(rng, 17, 70), n;
  do n = pick_not16(rng, 17, 70);
  while (n == m);
  s.push_back({"non-square, not multiples of 16", m, k, n});
  int64_t q = 16 * pick(rng, 2, 4);
  s.push_back({"square, a multiple of 16", q, q, q});
  q = pick_not16(rng, 18, 60);
  s.push_back({"square, not a multiple of 16", q, q, q});
  m = 16 * pick(rng, 1, 4);
  k = 16 * pick(rng, 1, 4);
  do n = 16 * pick(rng, 1, 4);
  while (n == m);
  s.push_back({"multiples of 16, not square", m, k, n});
  s.push_back({"1 x 1", 1, 1, 1});
  s.push_back({"one row (M = 1)", 1, pick_not16(rng, 2, 40), pick_not16(rng, 2, 40)});
  s.push_back({"K = 1", pick_not16(rng, 2, 40), 1, pick_not16(rng, 2, 40)});
  // (the last three are never aligned to 16 in every size, so "wrong only when aligned" shows in a fixed set of rows)
  s.push_back({"tall", pick(rng, 300, 520), pick(rng, 8, 24), pick_not16(rng, 3, 20)});
  s.push_back({"wide", pick_not16(rng, 3, 20), pick(rng, 8, 24), pick(rng, 300, 520)});
  s.push_back({"long K", pick_not16(rng, 5, 20), pick(rng, 1024, 2048), pick(rng, 5, 20)});
  // drawn last, so the classes above keep their sizes for a given seed
  s.push_back({"K = 0 (an empty sum)", pick_not16(rng, 2, 20), 0, pick_not16(rng, 2, 20)});
  s.push_back({"M = 0 (an empty output)", 0, pick_not16(rng, 2, 20), pick_not16(rng, 2, 20)});
  return s;
}

const std::vector<ShapeClass>& shapes() {
  static std::vector<ShapeClass> s = [] {
    auto rng = rng_for("mm16 shapes");
    return draw_shapes(rng);
  }();
  return s;
}

std::string dtype_word(const std::string& d) { return torch_dtype(d); }

// Two calls of one shape: new values each time; the second in the very tensors of the first (same data pointers),
// so an operator that caches its result by shape or by pointer is seen.
void add_pair(Plan& p, std::mt19937_64& rng, const std::string& prefix, const ShapeClass& sc, const std::string& dtype,
              const std::string& device, Role role, View va = View::Contiguous, View vb = View::Contiguous) {
  for (int i = 0; i < 2; ++i) {
    Call c;
    c.name = prefix + "." + std::to_string(i);
    c.shape_class = sc.label;
    c.dtype = dtype;
    c.device = device;
    c.role = role;
    c.a = random_matrix(sc.M, sc.K, rng);
    c.b = random_matrix(sc.K, sc.N, rng);
    c.view_a = va;
    c.view_b = vb;
    if (i == 1) c.same_tensors_as = prefix + ".0";
    p.add(std::move(c));
  }
}

// Two calls of one shape in new tensors, the second's values the first's but one element of a (or of b), drawn in
// the far half of the operand: a product kept from an earlier call and looked up by a partial fingerprint of the
// inputs (the shape and a few leading values, a sample of them) is returned for a call that asked another product.
// Its own stream, so the draws of every other call stay as they were for a seed.
void add_near_repeat(Plan& p, const std::string& prefix, const ShapeClass& sc, const std::string& device, char which,
                     Role role = Role::Forward) {
  auto rng = rng_for("mm16 near repeats " + prefix);
  Call first;
  first.name = prefix + ".0";
  first.shape_class = sc.label + ", then one element of " + which + " changed";
  first.dtype = "F16";
  first.device = device;
  first.role = role;
  first.a = random_matrix(sc.M, sc.K, rng);
  first.b = random_matrix(sc.K, sc.N, rng);
  Call second = first;
  second.name = prefix + ".1";
  second.near_repeat_of = first.name;
  Matrix& m = which == 'a' ? second.a : second.b;
  const int64_t n = m.rows * m.cols;
  const int64_t at = pick(rng, n / 2, n - 1);
  double& x = m.v[static_cast<std::size_t>(at)];
  const double was = x;
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  do x = half_to_float(float_to_half(u(rng)));  // exact in float16, and far enough to move the product
  while (std::abs(x - was) < 0.5);  // not a value comparison: the judge drawing an input far from the old one
  second.changed = std::string(1, which) + "[" + std::to_string(at / m.cols) + ", " + std::to_string(at % m.cols) + "]";
  p.add(std::move(first));
  p.add(std::move(second));
}

}  // namespace

Call single(const std::string& name, const std::string& cls, int64_t M, int64_t K, int64_t N, const std::string& dtype,
            const std::string& device, Role role, std::mt19937_64& rng, View va) {
  Call c;
  c.name = name;
  c.shape_class = cls;
  c.dtype = dtype;
  c.device = device;
  c.role = role;
  c.a = random_matrix(M, K, rng);
  c.b = random_matrix(K, N, rng);
  c.view_a = va;
  return c;
}

namespace {

// --- the float64 autograd cases: square, non-square, and one through a view. Each call NAME has its upstream
// gradient NAME.g and the inputs of its central differences NAME.fd_a / NAME.fd_b. --------------------------------
void add_autograd(Plan& p, std::mt19937_64& rng) {
  const struct {
    const char* name;
    const char* cls;
    int64_t M, K, N;
    View va;
  } cases[] = {{"ag.square", "square", 4, 4, 4, View::Contiguous},
               {"ag.nonsquare", "non-square", 3, 5, 4, View::Contiguous},
               {"ag.view", "non-square, a transposed", 4, 3, 5, View::Transposed}};
  const double h = 1.0 / 16;  // exact in float16 and float64: the perturbed inputs stay exact
  for (auto& cs : cases) {
    const Call& c = p.add(single(cs.name, cs.cls, cs.M, cs.K, cs.N, "F64", "cpu", Role::Autograd, rng, cs.va));
    Matrix g = random_matrix(cs.M, cs.N, rng);
    p.inputs[c.name + ".g"] = Tensor{"F64", {g.rows, g.cols}, g.v};
    // central differences, one element at a time: (+h, -h) for each element of a, then of b
    const int64_t P = 2 * (cs.M * cs.K + cs.K * cs.N);
    Tensor fa{"F64", {P, cs.M, cs.K}, {}}, fb{"F64", {P, cs.K, cs.N}, {}};
    auto push = [&](int which, int64_t idx, double sign) {
      Matrix a = c.a, b = c.b;
      (which == 0 ? a : b).v[static_cast<std::size_t>(idx)] += sign * h;
      fa.values.insert(fa.values.end(), a.v.begin(), a.v.end());
      fb.values.insert(fb.values.end(), b.v.begin(), b.v.end());
    };
    for (int64_t e = 0; e < cs.M * cs.K; ++e) {
      push(0, e, +1);
      push(0, e, -1);
    }
    for (int64_t e = 0; e < cs.K * cs.N; ++e) {
      push(1, e, +1);
      push(1, e, -1);
    }
    p.inputs[c.name + ".fd_a"] = fa;
    p.inputs[c.name + ".fd_b"] = fb;
    p.probe({{"kind", "grad"}, {"name", "grad." + c.name}, {"of", c.name}, {"g", c.name + ".g"}});
    p.probe({{"kind", "fd"}, {"name", "fd." + c.name}, {"a", c.name + ".fd_a"}, {"b", c.name + ".fd_b"}});
    p.probe({{"kind", "gradcheck"}, {"name", "gradcheck." + c.name}, {"of", c.name}});
  }
  if (has_check("negative_control"))
    p.probe({{"kind", "negative_control"},
             {"name", "negative.ag.nonsquare"},
             {"of", "ag.nonsquare"},
             {"g", "ag.nonsquare.g"}});
  if (has_check("backward.cases")) {
    // one input requiring grad at a time: the backward is asked for one gradient (ctx->needs_input_grad)
    for (const char* only : {"a", "b"})
      p.probe({{"kind", "grad"},
               {"name", std::string("grad.only_") + only + ".ag.nonsquare"},
               {"of", "ag.nonsquare"},
               {"g", "ag.nonsquare.g"},
               {"requires", only}});
    // a and b changed in place between the forward and the backward: refused by the version counter of the tensors
    // saved with save_for_backward, or gradients of the values the forward saw; never of the changed ones
    p.probe({{"kind", "grad"},
             {"name", "grad.changed_in_place.ag.nonsquare"},
             {"of", "ag.nonsquare"},
             {"g", "ag.nonsquare.g"},
             {"changed_in_place", true}});
    // the upstream gradient as autograd may hand it over: a transposed view ((out.t() * w).sum()), and one value
    // expanded with strides 0 (out.sum()). A backward that reads g's memory as row-major gets them wrong.
    const Call& ns = p.call("ag.nonsquare");
    p.inputs["ag.nonsquare.g_ones"] = Tensor{"F64", {ns.M(), ns.N()}, std::vector<double>(ns.M() * ns.N(), 1.0)};
    p.probe({{"kind", "grad"},
             {"name", "grad.g_transposed.ag.nonsquare"},
             {"of", "ag.nonsquare"},
             {"g", "ag.nonsquare.g"},
             {"g_layout", "transposed"}});
    p.probe({{"kind", "grad"},
             {"name", "grad.g_expanded.ag.nonsquare"},
             {"of", "ag.nonsquare"},
             {"g", "ag.nonsquare.g_ones"},
             {"g_layout", "expanded"}});
    // float16 inputs: the output, so the upstream gradient, is float32; each input's gradient is float16
    const Call& h = p.add(single("ag.f16", "non-square, float16", 5, 6, 3, "F16", "cpu", Role::Backward, rng));
    Matrix g = random_matrix(h.M(), h.N(), rng);
    p.inputs[h.name + ".g"] = Tensor{"F32", {g.rows, g.cols}, g.v};
    p.probe({{"kind", "grad"}, {"name", "grad.ag.f16"}, {"of", "ag.f16"}, {"g", "ag.f16.g"}});
  }
}

Plan build_cpu() {
  Plan p;
  auto rng = rng_for("mm16 cpu");
  const auto& sc = shapes();
  for (std::size_t i = 0; i < sc.size(); ++i)
    add_pair(p, rng, "cpu.f16." + std::to_string(i), sc[i], "F16", "cpu", Role::Forward);
  add_pair(p, rng, "cpu.f64", sc[0], "F64", "cpu", Role::Forward);
  add_pair(p, rng, "cpu.f32", sc[2], "F32", "cpu", Role::Dtype);
  add_pair(p, rng, "cpu.view.t_s", sc[0], "F16", "cpu", Role::View, View::Transposed, View::ColumnSliced);
  add_pair(p, rng, "cpu.view.o_t", sc[1], "F16", "cpu", Role::View, View::Offset, View::Transposed);
  add_pair(p, rng, "cpu.view.s_o", sc[3], "F16", "cpu", Role::View, View::ColumnSliced, View::Offset);
  add_near_repeat(p, "cpu.near_a", sc[0], "cpu", 'a');
  add_near_repeat(p, "cpu.near_b", sc[7], "cpu", 'b');  // the tall class: a long operand, a change far into it
  if (has_check("kernel.cpu"))  // which operators ran inside the op: a contiguous float16 product, and one of views
    for (const char* of : {"cpu.f16.0.0", "cpu.view.t_s.0"})
      p.probe({{"kind", "kernels"}, {"name", std::string("kernels.") + of}, {"of", of}});
  if (has_check("fake.meta"))  // per input dtype, and through views
    for (const char* of : {"cpu.f16.0.0", "cpu.f32.0", "cpu.f64.0", "cpu.view.t_s.0", "cpu.view.o_t.0"})
      for (const char* kind : {"fake", "meta"})
        p.probe({{"kind", kind}, {"name", std::string(kind) + "." + of}, {"of", of}});
  if (has_check("compile.fullgraph"))
    p.probe({{"kind", "compile"}, {"name", "compiled"}, {"of", {"cpu.f16.0.0", "cpu.f16.2.0"}}, {"dynamic", false}});
  if (has_check("compile.dynamic"))  // three shapes, none with a size of 1 (torch specialises 0 and 1 anyway)
    p.probe({{"kind", "compile"},
             {"name", "compiled.dynamic"},
             {"of", {"cpu.f16.0.0", "cpu.f16.2.0", "cpu.f16.3.0"}},
             {"dynamic", true}});
  if (has_check("gradcheck.float64") || has_check("negative_control") || has_check("backward.cases"))
    add_autograd(p, rng);
  if (has_check("opcheck.cpu")) {
    p.add(single("opcheck.f32.square", "square", 8, 8, 8, "F32", "cpu", Role::Opcheck, rng));
    p.add(single("opcheck.f64.nonsquare", "non-square", 5, 2, 7, "F64", "cpu", Role::Opcheck, rng));
    p.add(single("opcheck.f64.view", "non-square, a transposed", 4, 6, 3, "F64", "cpu", Role::Opcheck, rng,
                 View::Transposed));
    for (const char* of : {"opcheck.f32.square", "opcheck.f64.nonsquare", "opcheck.f64.view"})
      p.probe({{"kind", "opcheck"}, {"name", std::string("opcheck.") + of}, {"of", of}, {"requires_grad", true}});
  }
  add_python_op_probes(p, rng, sc);
  return p;
}

Plan build_cuda() {
  Plan p;
  p.gpu = true;
  auto rng = rng_for("mm16 cuda");
  const auto& sc = shapes();
  for (std::size_t i = 0; i < sc.size(); ++i)
    add_pair(p, rng, "cuda.f16." + std::to_string(i), sc[i], "F16", "cuda", Role::Forward);
  add_pair(p, rng, "cuda.view.t_s", sc[0], "F16", "cuda", Role::View, View::Transposed, View::ColumnSliced);
  add_pair(p, rng, "cuda.view.o_t", sc[1], "F16", "cuda", Role::View, View::Offset, View::Transposed);
  add_pair(p, rng, "cuda.view.s_o", sc[3], "F16", "cuda", Role::View, View::ColumnSliced, View::Offset);
  add_near_repeat(p, "cuda.near_a", sc[0], "cuda", 'a');
  add_near_repeat(p, "cuda.near_b", sc[7], "cuda", 'b');
  if (has_check("stream.cuda"))
    for (const char* of : {"cuda.f16.0.0", "cuda.f16.7.0"})  // a small product and a tall one
      p.probe({{"kind", "stream"}, {"name", std::string("stream.") + of}, {"of", of}});
  if (has_check("compile.cuda")) {  // Inductor's own code generation, static and dynamic (chapter 11)
    p.probe({{"kind", "compile"},
             {"name", "compiled.cuda"},
             {"of", {"cuda.f16.0.0", "cuda.f16.2.0"}},
             {"dynamic", false},
             {"backend", "inductor"}});
    p.probe({{"kind", "compile"},
             {"name", "compiled.cuda.dynamic"},
             {"of", {"cuda.f16.0.0", "cuda.f16.2.0", "cuda.f16.3.0"}},
             {"dynamic", true},
             {"backend", "inductor"}});
  }
  if (has_check("compile.sees_kernel"))
    p.probe(
        {{"kind", "compiled_code"}, {"name", "compiled_code"}, {"of", "cuda.f16.0.0"}, {"names", triton_kernels()}});
  if (has_check("kernel.cuda") || has_check("kernel.triton"))  // what ran: an edge-tile product, and one of views
    for (const char* of : {"cuda.f16.0.0", "cuda.view.t_s.0"})
      p.probe({{"kind", "kernels"}, {"name", std::string("kernels.") + of}, {"of", of}});
  if (Session::get().cuda_device_count() > 1)
    p.probe({{"kind", "guard"}, {"name", "guard.cuda.f16.0.0"}, {"of", "cuda.f16.0.0"}});
  if (has_check("opcheck.cuda"))
    for (const char* of : {"cuda.f16.1.0", "cuda.f16.0.0"})  // square, and not
      p.probe({{"kind", "opcheck"}, {"name", std::string("opcheck.") + of}, {"of", of}, {"requires_grad", true}});
  return p;
}

Plan build_ptx() {  // the PTX-only build: one product of every shape class
  Plan p;
  p.gpu = true;
  auto rng = rng_for("mm16 ptx");
  const auto& sc = shapes();
  for (std::size_t i = 0; i < sc.size(); ++i) {
    Call c = single("ptx.f16." + std::to_string(i), sc[i].label, sc[i].M, sc[i].K, sc[i].N, "F16", "cuda",
                    Role::Forward, rng);
    p.add(std::move(c));
  }
  return p;
}

Plan build_capture() {  // every shape class: an operator that synchronises only above some size is seen
  Plan p;
  p.gpu = true;
  auto rng = rng_for("mm16 capture");
  const auto& sc = shapes();
  for (std::size_t i = 0; i < sc.size(); ++i) {
    const Call& c = p.add(single("capture.f16." + std::to_string(i), sc[i].label, sc[i].M, sc[i].K, sc[i].N, "F16",
                                 "cuda", Role::Forward, rng));
    p.probe({{"kind", "capture"}, {"name", "graph." + c.name}, {"of", c.name}});
  }
  return p;
}

Plan build_contract(const std::string& device) {
  Plan p;
  p.gpu = device == "cuda";
  auto spec = [](const char* dtype, std::vector<int64_t> shape, const char* on = nullptr) {
    json s = {{"dtype", dtype}, {"shape", shape}};
    if (on) s["device"] = on;
    return s;
  };
  const std::string on = device == "meta" ? " on meta tensors" : "";
  // `arrived`: what the message must name (chapter 3: "what was expected and what arrived, with the sizes"), one
  // group per fact, any spelling of the group. A message that misquotes the sizes, or an exception thrown while the
  // message was being formatted (b.size(2) on a 2-D b), names something else.
  auto add = [&](const std::string& label, json a, json b, bool valid,
                 std::vector<std::vector<std::string>> arrived = {}) {
    p.probe({{"kind", "invalid"},
             {"name", std::string("contract.") + std::to_string(p.probes.size())},
             {"label", label + on},
             {"a", a},
             {"b", b},
             {"device", device},
             {"valid", valid},
             {"arrived", arrived}});
  };
  const std::vector<std::string> float16{"Half", "float16"}, float32{"Float", "float32"}, int32{"Int", "int32"};
  // The 3-D operands have a size(1) (for a) or size(0) (for b) that lines up with the other operand: only the rank
  // check rejects them. Without it, a kernel reads the first two sizes and strides and returns a wrong product.
  if (device == "cpu" || device == "meta") {  // meta: the Meta kernel must reject what the real kernels reject
    add("a is 1-D: mm16(a[6], b[6, 4])", spec("float32", {6}), spec("float32", {6, 4}), false);
    add("a is 3-D: mm16(a[2, 3, 4], b[3, 2])", spec("float32", {2, 3, 4}), spec("float32", {3, 2}), false);
    add("b is 3-D: mm16(a[3, 4], b[4, 2, 5])", spec("float32", {3, 4}), spec("float32", {4, 2, 5}), false);
    add("inner sizes differ: mm16(a[3, 5], b[4, 2])", spec("float32", {3, 5}), spec("float32", {4, 2}), false,
        {{"5"}, {"4"}});
    add("dtypes differ: mm16(float16 a, float32 b)", spec("float16", {3, 4}), spec("float32", {4, 2}), false,
        {float16, float32});
    add("integer inputs: mm16(int32 a, int32 b)", spec("int32", {3, 4}), spec("int32", {4, 2}), false, {int32});
    add("valid call: mm16(float32 a[3, 4], float32 b[4, 2])", spec("float32", {3, 4}), spec("float32", {4, 2}), true);
  } else {
    add("devices differ: mm16(CUDA a, CPU b)", spec("float16", {3, 4}), spec("float16", {4, 2}, "cpu"), false,
        {{"cuda"}, {"cpu"}});
    add("float32 on CUDA: mm16(float32 a, float32 b)", spec("float32", {3, 4}), spec("float32", {4, 2}), false,
        {float32});
    add("inner sizes differ on CUDA: mm16(a[3, 5], b[4, 2])", spec("float16", {3, 5}), spec("float16", {4, 2}), false,
        {{"5"}, {"4"}});
    add("a is 3-D on CUDA: mm16(a[2, 3, 4], b[3, 2])", spec("float16", {2, 3, 4}), spec("float16", {3, 2}), false);
    add("b is 3-D on CUDA: mm16(a[3, 4], b[4, 2, 5])", spec("float16", {3, 4}), spec("float16", {4, 2, 5}), false);
    add("valid call: mm16(float16 CUDA a[3, 4], b[4, 2])", spec("float16", {3, 4}), spec("float16", {4, 2}), true);
  }
  return p;
}

Plan build_memcheck() {  // every shape class (edge tiles, 1 x 1, K = 1, tall, wide, long K, empty) and every view kind
  Plan p;
  p.gpu = true;
  auto rng = rng_for("mm16 memcheck");
  const auto& sc = shapes();
  for (std::size_t i = 0; i < sc.size(); ++i)
    p.add(single("memcheck.f16." + std::to_string(i), sc[i].label, sc[i].M, sc[i].K, sc[i].N, "F16", "cuda",
                 Role::Forward, rng));
  Call v =
      single("memcheck.view", sc[0].label, sc[0].M, sc[0].K, sc[0].N, "F16", "cuda", Role::View, rng, View::Offset);
  v.view_b = View::ColumnSliced;
  p.add(std::move(v));
  return p;
}

Plan build_racecheck() {  // the shared-memory staging, with edge tiles and with full tiles
  Plan p;
  p.gpu = true;
  auto rng = rng_for("mm16 racecheck");
  const auto& sc = shapes();
  for (std::size_t i : {0, 1})
    p.add(single("racecheck.f16." + std::to_string(i), sc[i].label, sc[i].M, sc[i].K, sc[i].N, "F16", "cuda",
                 Role::Forward, rng));
  return p;
}

// Four products of four shapes (so four output sizes), each first called alone, then by one thread each, all four
// threads started together and calling twelve times: an operator that keeps state between calls (a static scratch
// buffer) gives another thread's partial sums, or ends the process. A worker process of its own, so such an end costs
// this row only. Sizes large enough (millions of multiply-adds) that calls overlap even on a busy machine.
Plan build_threads() {
  Plan p;
  auto rng = rng_for("mm16 threads");
  json of = json::array();  // thread t repeats call t: the plan holds these calls and no other
  for (int t = 0; t < 4; ++t) {
    const int64_t M = pick(rng, 40, 90), K = pick(rng, 300, 500), N = pick(rng, 40, 90);
    of.push_back(p.add(single("threads.f16." + std::to_string(t), "thread " + std::to_string(t), M, K, N, "F16", "cpu",
                              Role::Forward, rng))
                     .name);
  }
  p.probe({{"kind", "threads"}, {"name", "threads"}, {"of", of}, {"rounds", kThreadRounds}});
  return p;
}

}  // namespace

std::string Call::text() const {
  std::string t = dtype_word(dtype) + " " + shape_text({M(), K()}) + " @ " + shape_text({K(), N()});
  std::string views;
  auto note = [&](const char* which, View v) {
    if (v == View::Contiguous) return;
    const char* how = v == View::Transposed     ? "transposed"
                      : v == View::ColumnSliced ? "every other column of a wider tensor"
                      : v == View::InNanBuffer  ? "the corner of a NaN-filled buffer"
                                                : "with a storage offset";
    views += std::string(views.empty() ? "" : ", ") + which + " " + how;
  };
  note("a", view_a);
  note("b", view_b);
  if (!views.empty()) t += " (" + views + ")";
  if (!same_tensors_as.empty()) t += " [new values in the same tensors]";
  if (!near_repeat_of.empty()) t += " [the values of the call before, but " + changed + "]";
  return t;
}

const Plan& cpu_plan() {
  static Plan p = build_cpu();
  return p;
}
const Plan& cuda_plan() {
  static Plan p = build_cuda();
  return p;
}
const Plan& capture_plan() {
  static Plan p = build_capture();
  return p;
}
const Plan& contract_plan(const std::string& device) {
  static std::map<std::string, Plan> plans;
  auto it = plans.find(device);
  if (it == plans.end()) it = plans.emplace(device, build_contract(device)).first;
  return it->second;
}
const Plan& ptx_plan() {
  static Plan p = build_ptx();
  return p;
}

const Plan& memcheck_plan() {
  static Plan p = build_memcheck();
  return p;
}
const Plan& threads_plan() {
  static Plan p = build_threads();
  return p;
}
const Plan& racecheck_plan() {
  static Plan p = build_racecheck();
  return p;
}

}  // namespace judge::mm16
