// What the judge asks of course::mm16 (chapters 3 to 6): every input, drawn from the grade's seed, and every probe
// the worker runs on them, named once here. The worker answers under these names (autograder/worker/groups_mm16.py,
// as autograder/schemas/worker/mm16_protocol.json declares); the checks (mm16_N_*_checks.cpp) read the answers through
// answer(), which holds them to the same declaration, and take every shape they name from the calls, never from
// literals. The plans are drawn in mm16_plan_inputs.cpp, sent, run and read back in mm16_plan.cpp, and what a call
// must return is mm16_expected.cpp's.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "../judge/compare.hpp"
#include "../judge/grading.hpp"

namespace judge::mm16 {

// How the worker turns a stored tensor into the operand (mm16_protocol.json "views").
// InNanBuffer: the top-left corner of a NaN-filled buffer 16 larger each way (chapter 11's edge tiles): a kernel that
// reads past the operand's edge reads NaN, deterministically, where past an allocation it would read anything.
enum class View { Contiguous, Transposed, ColumnSliced, Offset, InNanBuffer };
constexpr int64_t kNanMargin = 16;
const char* view_name(View v);

struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;  // row-major
  double at(int64_t i, int64_t j) const { return v[static_cast<std::size_t>(i * cols + j)]; }
};
Matrix product(const Matrix& a, const Matrix& b);
Matrix transpose(const Matrix& m);

// What a call is for: the rows that read it.
// Backward: outside float64 gradcheck; Edges: operands inside NaN buffers (triton.masked_edges)
enum class Role { Forward, Dtype, View, Autograd, Backward, Opcheck, Edges };

struct Call {
  std::string name;         // the probe's name, the key of its output
  std::string shape_class;  // "square, a multiple of 16", "K = 1", ...
  std::string dtype;        // of the inputs: F16, F32, F64
  std::string device;       // "cpu" or "cuda"
  Role role = Role::Forward;
  Matrix a, b;  // the operands' values, as the op sees them
  View view_a = View::Contiguous, view_b = View::Contiguous;
  std::string same_tensors_as;  // non-empty: the values were copied into that call's tensors (same data pointers)
  std::string near_repeat_of;   // non-empty: that call's values but one element (new tensors): `changed` says which
  std::string changed;          // "a[i, j]" or "b[i, j]"
  int64_t M() const { return a.rows; }
  int64_t K() const { return a.cols; }
  int64_t N() const { return b.cols; }
  std::string text() const;     // "float16 [37, 45] @ [45, 29]", with its views and in-place update said
  Expected expected() const;    // the judge's float64 product (shape and values)
  Tolerance tolerance() const;  // fitted to the input dtype and K
};

class Plan {
 public:
  std::vector<Call> calls;
  std::map<std::string, Tensor> inputs;  // the stored tensors the request carries
  json probes = json::array();           // request["probes"], in the order the worker runs them
  bool gpu = false;                      // its run uses the GPU (after a GPU run times out, it is not started)

  const Call& call(const std::string& name) const;
  std::vector<const Call*> with_role(Role r) const;
  json request_args() const { return {{"probes", probes}}; }
  // Adds a call: stores its operands (in the layout its views need) and asks the worker to run it.
  const Call& add(Call c);
  void probe(json p) { probes.push_back(std::move(p)); }
};

// The plans of one grade (built once, from the seed, for the checks the exercise lists).
const Plan& cpu_plan();        // forward, dtypes, views, fake/meta, torch.compile, autograd, opcheck
const Plan& cuda_plan();       // the same products on CUDA, views, the stream probe, the device guard, opcheck
const Plan& capture_plan();    // one eager call and one CUDA-graph capture per shape class
const Plan& ptx_plan();        // one product of every shape class, for the PTX-only build
const Plan& memcheck_plan();   // one product of every shape class and of every view kind, under compute-sanitizer
const Plan& racecheck_plan();  // two products (edge tiles, full tiles), under compute-sanitizer's racecheck
const Plan& threads_plan();    // four products, then the same from four threads at once (kThreadRounds calls each)
constexpr int kThreadRounds = 12;
const Plan& contract_plan(const std::string& device);  // invalid calls (and one valid one) on tensors of ones

// Chapter 11's in-place epilogue course::scale_bias_(out, scale, bias), called by the CPU plan's "epilogue" probes
// (epilogue.N: out M x N, bias N; the last one with a bias of the wrong size, which must raise).
struct EpilogueCase {
  std::string name;
  Matrix out, bias;  // bias: 1 x (its length)
  double scale = 1;
  bool valid = true;
};
const std::vector<EpilogueCase>& epilogue_cases();
// The names of the @triton.jit functions in the submission's module (chapter 11), read from its source by the judge.
std::vector<std::string> triton_kernels();

// The worker run of a plan (variant "ptx": the PTX-only build).
const GroupResult& run(const Plan& plan, const std::string& variant = "default");
// The worker run of a plan with another python of toolchain.json (`python`: its key, "older_torch_python").
const GroupResult& run_in(const Plan& plan, const std::string& python);
// The worker run of a plan under compute-sanitizer's `tool` (memcheck, racecheck): its log is TOOL.log in the run's
// folder, and the run exits with kSanitizerFoundErrors when the tool reported an error.
constexpr int kSanitizerFoundErrors = 97;
const GroupResult& run_sanitized(const Plan& plan, const std::string& tool);
// The answer to probe `name` of `kind`, held to mm16_protocol.json; null (json()) with `why` set when it is missing
// or does not match the declaration.
json answer(const GroupResult& g, const std::string& name, const std::string& kind, std::string* why);
// A tensor the worker returned under `name` (nullptr if none).
const Tensor* tensor(const GroupResult& g, const std::string& name);

// "raised RuntimeError: first line of the message"
std::string raised_text(const json& outcome);

}  // namespace judge::mm16
