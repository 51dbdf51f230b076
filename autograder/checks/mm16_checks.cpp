// Chapters 3-6: course::mm16 on the CPU and on CUDA, its Meta kernel and its backward. The judge chooses every
// input from the grade's seed (mm16_plan.cpp: twelve shape classes, each called twice with new values, views, three
// dtypes), the worker runs the submission on them and returns raw data, and every verdict is computed here: values
// against the judge's own float64 product through the one comparator (judge/compare.hpp), gradients against finite
// differences of forward values the worker returned, fake metadata against the real outputs, error behaviour from
// the worker's report and its exit status. opcheck, gradcheck and torch.compile run in the worker for their
// standard messages, but a row passes only on evidence checked here.
#include <doctest/doctest.h>

#include <cxxabi.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <set>

#include "../judge/grading.hpp"
#include "cuobjdump.hpp"
#include "dispatched_ops.hpp"
#include "mm16_plan.hpp"

using namespace judge;
using namespace judge::mm16;

namespace {

std::string lines(const std::vector<std::string>& items, std::size_t at_most = 8) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < at_most; ++i) out += "\n    " + items[i];
  if (items.size() > at_most) out += "\n    ... and " + std::to_string(items.size() - at_most) + " more";
  return out;
}

std::string shapes_of(const std::vector<const Call*>& calls) {
  std::set<std::string> seen;
  std::string out;
  for (auto* c : calls) {
    std::string s = shape_text({c->M(), c->K()}) + "@" + shape_text({c->K(), c->N()});
    if (seen.insert(s).second) out += (out.empty() ? "" : ", ") + s;
  }
  return out;
}

// Fails the row with the run's own failure when the worker did not answer; true when it did.
bool answered(const GroupResult& g) {
  if (g.ok) return true;
  fail(g.failure, "the worker runs your operator on the judge's inputs and answers");
  return false;
}

// Why one call's output is wrong ("" when right): it raised, returned nothing, or differs from a @ b.
std::string call_problem(const GroupResult& g, const Call& c) {
  std::string why;
  json o = answer(g, c.name, "call", &why);
  if (o.is_null()) return c.text() + ": " + why;
  if (o["raised"] == true) return c.text() + ": " + raised_text(o);
  Comparison cmp = compare(tensor(g, c.name), c.expected(), c.tolerance());
  return cmp.ok ? "" : c.text() + ": " + cmp.detail;
}

// Why the op left an operand other than it found it ("" when it did not): a and b are inputs, not outputs. In C++ a
// Tensor is a handle, so an in-place op through `const at::Tensor&` (a.mul_(), b.t_()) reaches the caller's tensor.
std::string inputs_problem(const GroupResult& g, const Call& c) {
  std::string out;
  for (auto [label, m] : {std::pair<const char*, const Matrix*>{"a", &c.a}, {"b", &c.b}}) {
    Comparison cmp = compare(tensor(g, c.name + "." + label + "_after"), Expected{{m->rows, m->cols}, m->v, c.dtype, ""},
                             Tolerance{0, 0});
    if (!cmp.ok) out += std::string(out.empty() ? "" : "; ") + "the op changed its input " + label + ": " + cmp.detail;
  }
  return out.empty() ? out : c.text() + ": " + out;
}

// Why the output the caller holds changed after the call returned ("" when it did not): an op that returns a buffer
// it keeps (one per shape, to save an allocation) overwrites its earlier results with its later ones.
std::string output_kept_problem(const GroupResult& g, const Call& c) {
  const Tensor* then = tensor(g, c.name);
  if (!then) return "";  // no output: call_problem said so
  Comparison cmp = compare(tensor(g, c.name + ".at_end"), Expected{then->shape, then->values, then->dtype, ""}, Tolerance{0, 0});
  return cmp.ok ? "" : c.text() + ": the output changed after the call returned (read again after the later calls: " +
                           cmp.detail + "); the op writes a later result into a tensor it returned before";
}

// A row over calls: every output right, or the wrong ones listed with the worst element of each.
void products_row(const GroupResult& g, const std::vector<const Call*>& calls, const std::string& what,
                  const std::string& expected) {
  if (!answered(g)) return;
  std::vector<std::string> problems;
  std::set<std::string> raised;  // the distinct exceptions: a stub raises the same one for every call
  for (auto* c : calls) {
    std::string p = call_problem(g, *c), why;
    json o = answer(g, c->name, "call", &why);
    if (!o.is_null() && o["raised"] == true) raised.insert(raised_text(o));
    if (p.empty()) p = inputs_problem(g, *c);
    if (p.empty()) p = output_kept_problem(g, *c);
    if (!p.empty()) problems.push_back(p);
  }
  if (problems.empty())
    return pass(std::to_string(calls.size()) + " " + what + " right: " + shapes_of(calls));
  if (raised.size() == 1 && problems.size() == calls.size())
    return fail("all " + std::to_string(calls.size()) + " " + what + " " + *raised.begin(), expected,
                "every call (" + shapes_of(calls) + ") " + *raised.begin());
  fail(std::to_string(problems.size()) + " of " + std::to_string(calls.size()) + " " + what + " wrong", expected,
       lines(problems));
}

std::string tolerance_text() { return "within atol = rtol = 1e-3 * max(1, sqrt(K/16)) for float16 inputs (1e-5 float32, 1e-9 float64)"; }

// --- the contract -----------------------------------------------------------------------------------------------
// The contract probes of one device: each invalid call must raise with a message, the valid one must return.
struct ContractOutcome {
  std::string not_run;  // the worker did not finish normally
  std::vector<std::string> problems;
  int invalid = 0;
};

// The facts of `arrived` (groups of spellings, case ignored) that `message` names in no spelling, e.g.
// "5 and 4"; "" when it names all.
std::string unnamed(const std::string& message, const json& arrived) {
  auto lower = [](std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  const std::string text = lower(message);
  std::vector<std::string> missing;
  for (const auto& group : arrived) {
    bool named = false;
    for (const auto& spelling : group) named = named || text.find(lower(spelling.get<std::string>())) != std::string::npos;
    std::string spellings = group[0].get<std::string>();  // Half (float16)
    for (std::size_t i = 1; i < group.size(); ++i)
      spellings += (i == 1 ? " (" : "/") + group[i].get<std::string>() + (i + 1 == group.size() ? ")" : "");
    if (!named) missing.push_back(spellings);
  }
  std::string out;
  for (std::size_t i = 0; i < missing.size(); ++i)
    out += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  return out;
}

ContractOutcome contract_outcome(const std::string& device) {
  ContractOutcome out;
  const Plan& plan = contract_plan(device);
  const GroupResult& g = run(plan);
  if (!g.ok) {
    out.not_run = "the invalid calls did not leave the process running: " + g.failure;
    return out;
  }
  if (g.report.value("survived", false) != true) {
    out.not_run = "the worker did not report that it survived the calls";
    return out;
  }
  for (auto& p : plan.probes) {
    std::string label = p["label"].get<std::string>(), why;
    json o = answer(g, p["name"].get<std::string>(), "invalid", &why);
    if (o.is_null()) { out.problems.push_back(label + ": " + why); continue; }
    bool raised = o["raised"] == true;
    if (p["valid"] == true) {
      if (raised) out.problems.push_back(label + ": " + raised_text(o) + " (an operator that always raises proves nothing)");
      continue;
    }
    ++out.invalid;
    if (!raised)
      out.problems.push_back(label + ": returned " + (o.contains("shape") ? "a " + o.value("dtype", std::string("?")) +
                             " tensor of shape " + shape_text(o["shape"].get<std::vector<int64_t>>()) : std::string("a value")) +
                             " instead of raising");
    else if (const std::string message = o.value("message", std::string()); message.empty())
      out.problems.push_back(label + ": raised " + o.value("type", std::string("?")) + " with an empty message");
    else if (message.rfind("Dimension out of range", 0) == 0)  // c10's wrap_dim
      out.problems.push_back(label + ": " + raised_text(o) + ": that is torch's own error for a dimension the tensor "
                             "does not have (a size(i) out of range), not a check of the operator's");
    else if (std::string missing = unnamed(message, p["arrived"]); !missing.empty())
      out.problems.push_back(label + ": " + raised_text(o) + ": the message does not name what arrived: " + missing);
  }
  return out;
}

void check_contract(const std::string& device) {
  ContractOutcome c = contract_outcome(device);
  if (!c.not_run.empty())
    return fail(c.not_run,
                "each invalid call raises an exception (TORCH_CHECK) that the caller catches, and the process goes on",
                "the worker did not finish normally");
  if (c.problems.empty())
    return pass(std::to_string(c.invalid) + " invalid calls raised with a message, the valid call worked, the process survived");
  fail(std::to_string(c.problems.size()) + " of the " + device + " contract calls went wrong",
       "every invalid call raises (RuntimeError from TORCH_CHECK) with a message saying what is wrong and what arrived "
       "(the sizes, dtypes or devices); the valid call returns",
       lines(c.problems));
}

// --- views: the operands were laid out as the call says -----------------------------------------------------------
std::vector<int64_t> view_strides(const Matrix& m, View v) {
  switch (v) {
    case View::Contiguous: return {m.cols, 1};
    case View::Transposed: return {1, m.rows};
    case View::ColumnSliced: return {2 * m.cols, 2};
    case View::Offset: return {m.cols, 1};
  }
  return {};
}

// The layout the worker reported for the call's operands, against its views: evidence that they were not contiguous.
std::string layout_problem(const GroupResult& g, const Plan& plan, const Call& c) {
  std::string why;
  json o = answer(g, c.name, "call", &why);
  if (o.is_null()) return why;
  if (!c.same_tensors_as.empty()) {  // the tensors of an earlier call, as that call left them
    const Call& before = plan.call(c.same_tensors_as);
    if (!inputs_problem(g, before).empty())
      return c.text() + ": not run as asked: the op's earlier call changed these tensors (" + before.text() + ")";
  }
  if (o["raised"] == true && !o.contains("operand_strides")) return "";  // the worker could not make the call: call_problem says why
  if (!o.contains("operand_strides") || !o.contains("operand_offsets")) return c.name + ": the operands' layout was not reported";
  auto sa = view_strides(c.a, c.view_a), sb = view_strides(c.b, c.view_b);
  std::vector<int64_t> want{sa[0], sa[1], sb[0], sb[1]};
  std::vector<int64_t> offsets{c.view_a == View::Offset ? c.K() : 0, c.view_b == View::Offset ? c.N() : 0};
  if (o["operand_strides"].get<std::vector<int64_t>>() != want || o["operand_offsets"].get<std::vector<int64_t>>() != offsets)
    return c.name + ": the operands reached the op as strides " + o["operand_strides"].dump() + ", offsets " +
           o["operand_offsets"].dump() + ", not the views asked for";
  return "";
}

void views_row(const GroupResult& g, const Plan& plan, const std::vector<const Call*>& calls) {
  if (!answered(g)) return;
  std::vector<std::string> problems;
  for (auto* c : calls) {
    std::string p = layout_problem(g, plan, *c);
    if (p.empty()) p = call_problem(g, *c);
    if (p.empty()) p = inputs_problem(g, *c);
    if (p.empty()) p = output_kept_problem(g, *c);
    if (!p.empty()) problems.push_back(p);
  }
  if (problems.empty())
    return pass(std::to_string(calls.size()) + " products of transposed, sliced and offset views right: " + shapes_of(calls));
  fail("wrong products for non-contiguous inputs (contiguous ones are checked by the forward row)",
       "a @ b for transposed operands (strides (1, rows)), every other column of a wider tensor (strides (2 * cols, 2)) "
       "and views with a storage offset, " + tolerance_text() + "; the views left as they were",
       lines(problems));
}

// --- autograd -----------------------------------------------------------------------------------------------------
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
  if (o.is_null()) { fd.why = why; return fd; }
  if (o["raised"] == true) { fd.why = "the forward calls at the perturbed inputs " + raised_text(o); return fd; }
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
  Comparison a = compare(tensor(g, key + ".grad_a"), ea, kGradTol), b = compare(tensor(g, key + ".grad_b"), eb, kGradTol);
  std::string out;
  if (!a.ok) out += "grad_a: " + a.detail;
  if (!b.ok) out += std::string(out.empty() ? "" : "; ") + "grad_b: " + b.detail;
  return out;
}

std::string opcheck_problems(const GroupResult& g, const Plan& plan, const std::vector<std::string>& of) {
  static const char* tests[] = {"test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"};
  std::vector<std::string> problems;
  for (auto& name : of) {
    const Call& c = plan.call(name);
    std::string why, where = c.text();
    json o = answer(g, "opcheck." + name, "opcheck", &why);
    if (o.is_null()) { problems.push_back(where + ": " + why); continue; }
    if (o.value("requires_grad", json()) != json::array({true, true}))
      problems.push_back(where + ": the sample did not require grad (the judge asked it to)");
    if (o["raised"] == true) { problems.push_back(where + ": opcheck " + raised_text(o)); continue; }
    const json results = o.value("results", json::object());
    for (const char* t : tests) {
      if (!results.contains(t)) problems.push_back(where + ": " + t + " did not run");
      else if (results[t] != "SUCCESS") {
        std::string msg = results[t].is_string() ? results[t].get<std::string>() : results[t].dump();
        auto nl = msg.find('\n');
        if (nl != std::string::npos && nl < 400) msg = msg.substr(0, nl);
        if (msg.size() > 400) msg = msg.substr(0, 400) + "...";
        problems.push_back(where + ": " + t + " failed: " + msg);
      }
    }
    // numbers: opcheck compares the op with itself, never with the right answer; the judge does that
    Comparison cmp = compare(tensor(g, "opcheck." + name), c.expected(), c.tolerance());
    if (!cmp.ok) problems.push_back(where + ": the op's output on the sample is wrong: " + cmp.detail);
  }
  return lines(problems, 12);
}

std::string describe_meta(const json& m) {
  if (!m.is_object()) return "(nothing)";
  auto ints = [&](const char* k) { return m.contains(k) && m[k].is_array() ? m[k].dump() : std::string("?"); };
  return "shape " + ints("shape") + ", dtype " + m.value("dtype", std::string("?")) + ", strides " + ints("strides") +
         ", device " + m.value("device", std::string("?"));
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

std::vector<const Call*> forward_calls(const Plan& p) { return p.with_role(Role::Forward); }

// "(anonymous namespace)::mm16_wmma_kernel(__half const*, ...)" -> "mm16_wmma_kernel": the function's own name, as
// both cuobjdump's (demangled) symbols and the profiler's kernel names spell it.
std::string function_name(const std::string& demangled) {
  std::string s = demangled;
  if (!s.empty() && s.back() == ')') {  // drop the parameter list: from the '(' that balances the last ')'
    int depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      else if (s[i] == '(' && --depth == 0) { s = s.substr(0, i); break; }
    }
  }
  int angle = 0;  // drop template arguments
  std::string plain;
  for (char ch : s) {
    if (ch == '<') ++angle;
    else if (ch == '>') --angle;
    else if (angle == 0) plain += ch;
  }
  auto colons = plain.rfind("::");
  plain = colons == std::string::npos ? plain : plain.substr(colons + 2);
  auto space = plain.rfind(' ');  // "void f" -> "f"
  return space == std::string::npos ? plain : plain.substr(space + 1);
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d ? d : mangled;
  std::free(d);
  return out;
}

// The __global__ functions the submission's library defines: cuobjdump --list-text, read by the judge itself.
std::set<std::string> defined_kernels(const fs::path& lib, std::string* why) {
  std::set<std::string> names;
  Listing l = cuobjdump(lib, {"--list-text"});
  if (!l.ok) { *why = l.why; return names; }
  static const std::regex section(R"(: x-(\S+?)\.sm_\d+[a-z]?\.elf\.bin)");
  for (auto it = std::sregex_iterator(l.text.begin(), l.text.end(), section); it != std::sregex_iterator(); ++it)
    names.insert(function_name(demangle((*it)[1].str())));
  return names;
}

// A kernel of a vendor GEMM library (cuBLAS, cuBLASLt, CUTLASS), as ATen's mm launches them.
bool library_gemm(const std::string& kernel) {
  static const std::regex gemm("gemm|gemv|cutlass|cublas|xmma|splitk", std::regex::icase);
  return std::regex_search(kernel, gemm);
}

// Whether compute-sanitizer works on this machine at all, asked of a program that is not the submission's (a
// submission cannot make the row SKIPPED by upsetting the tool): "" when it does, else why not.
std::string sanitizer_unusable() {
  static std::optional<std::string> why;
  if (why) return *why;
  auto& s = Session::get();
  ProcessSpec spec{{s.toolchain.value("compute_sanitizer", ""), "--tool", "memcheck", "--error-exitcode", "97",
                    s.toolchain.value("python", ""), "-c", "import torch; print(torch.ones(8, device='cuda').sum().item())"},
                   current_environment(), s.cfg.work_dir.string(), 300, 16 * 1024};
  const GpuTurn turn;  // a GPU run like any other: a neighbour's grade holding the GPU must not fail it
  ProcessResult r = run_process(spec);
  if (r.exited && r.exit_code == 0 && r.out.find("8.0") != std::string::npos) {
    why = "";
  } else {
    std::string said = r.out + r.err, first;
    for (std::size_t pos = 0; pos < said.size() && first.empty();) {  // the tool's first error line
      std::size_t nl = said.find('\n', pos);
      std::string line = said.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (line.find("rror") != std::string::npos || line.find("not supported") != std::string::npos) first = line;
      pos = nl == std::string::npos ? said.size() : nl + 1;
    }
    why = "compute-sanitizer cannot run on this machine (it " + r.describe() + " on a one-line torch program" +
          (first.empty() ? std::string(")") : ": " + first.substr(0, 200) + ")") + ": not run, not passed";
  }
  return *why;
}

// The last report of compute-sanitizer's log: its first error block, or its summary line.
struct SanitizerLog {
  bool read = false;
  std::string first_error, summary;
};
SanitizerLog read_sanitizer_log(const fs::path& file) {
  SanitizerLog out;
  std::ifstream in(file);
  if (!in) return out;
  out.read = true;
  std::string line, block;
  std::size_t read_bytes = 0, block_lines = 0;
  bool in_block = false;
  while (std::getline(in, line) && read_bytes < (1u << 20)) {  // bounded: the log comes from the sandbox
    read_bytes += line.size() + 1;
    if (line.find("ERROR SUMMARY:") != std::string::npos || line.find("RACECHECK SUMMARY:") != std::string::npos) {
      out.summary = line.substr(0, 300);
      continue;
    }
    if (line.rfind("=========", 0) != 0 || line.find("COMPUTE-SANITIZER") != std::string::npos) continue;
    std::string body = line.substr(9);
    bool blank = body.find_first_not_of(' ') == std::string::npos;
    if (out.first_error.empty() && !in_block && !blank) in_block = true;
    if (in_block) {
      if (blank || block_lines >= 12) { out.first_error = block; in_block = false; continue; }
      block += (block.empty() ? "" : "\n") + body.substr(std::min(body.find_first_not_of(' '), body.size()));
      ++block_lines;
    }
  }
  if (in_block && out.first_error.empty()) out.first_error = block;
  return out;
}

}  // namespace

TEST_SUITE("mm16") {
  TEST_CASE("contract.cpu") { check_contract("cpu"); }

  TEST_CASE("contract.cuda") {
    if (skip_without_cuda()) return;
    check_contract("cuda");
  }

  TEST_CASE("forward.cpu") {
    const Plan& p = cpu_plan();
    products_row(run(p), forward_calls(p), "CPU products",
                 "each output matches a @ b computed by the judge in float64, " + tolerance_text() +
                     "; every shape class twice, with new values in the same tensors the second time; a and b left as they were");
  }

  TEST_CASE("noncontig.cpu") {
    const Plan& p = cpu_plan();
    views_row(run(p), p, p.with_role(Role::View));
  }

  TEST_CASE("dtype.cpu") {
    const Plan& p = cpu_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    std::string problems, seen;
    for (auto [name, want] : {std::pair<const char*, const char*>{"cpu.f16.0.0", "float32"}, {"cpu.f32.0", "float32"},
                              {"cpu.f64.0", "float64"}}) {
      const Call& c = p.call(name);
      std::string why;
      json o = answer(g, name, "call", &why);
      std::string got = o.is_null() ? why : o["raised"] == true ? "an exception (see forward.cpu)"
                                                               : o.value("dtype", std::string("(no dtype)"));
      seen += std::string(seen.empty() ? "" : ", ") + torch_dtype(c.dtype) + " -> " + got;
      if (got != want) problems += std::string(problems.empty() ? "" : ", ") + torch_dtype(c.dtype) + " inputs gave " + got;
    }
    if (problems.empty()) return pass(seen);
    fail("the output dtype is wrong: " + problems, "float16 -> float32, float32 -> float32, float64 -> float64", seen);
  }

  TEST_CASE("kernel.cpu") {
    const Plan& p = cpu_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    std::vector<std::string> raised, problems;
    std::set<std::string> seen;
    std::string why;
    for (const char* of : {"cpu.f16.0.0", "cpu.view.t_s.0"}) {
      const Call& c = p.call(of);
      json o = answer(g, std::string("kernels.") + of, "kernels", &why);
      if (o.is_null()) { problems.push_back(c.text() + ": " + why); continue; }
      if (o["raised"] == true) { raised.push_back(c.text() + ": " + raised_text(o)); continue; }
      const auto ops = o.value("ops", std::vector<std::string>{});
      seen.insert(ops.begin(), ops.end());
      const std::string computing = computing_ops(ops);
      if (!computing.empty())
        problems.push_back(c.text() + ": " + other_ops_ran("course::mm16", computing));
    }
    if (!raised.empty() && problems.empty())
      return fail("the op raised, so what it runs could not be seen (see forward.cpu)",
                  "a product from the op's own loops", lines(raised));
    if (problems.empty()) return pass(only_layout_ran(seen, "course::mm16") + ": your loops did the product");
    for (auto& r : raised) problems.push_back(r);
    fail("the product was computed by PyTorch's operators, not by the op's own loops",
         std::string("inside course::mm16 (the profiler's record of what it dispatched) ") + kAllowedInsideTheOp +
             ": no aten::mm, matmul, mul or sum",
         lines(problems));
  }

  TEST_CASE("threads.cpu") {
    const Plan& p = threads_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    std::vector<std::string> alone_problems, problems;
    std::string shapes, why;
    std::vector<const Tensor*> once(p.calls.size(), nullptr);  // thread t repeats the plan's call t
    for (std::size_t t = 0; t < p.calls.size(); ++t) {  // each call alone first: the outputs the threads' must equal
      const Call& c = p.calls[t];
      shapes += (shapes.empty() ? "" : ", ") + c.text();
      json alone = answer(g, c.name, "call", &why);
      if (alone.is_null()) alone_problems.push_back(c.text() + " alone: " + why);
      else if (alone["raised"] == true) alone_problems.push_back(c.text() + " alone: " + raised_text(alone));
      else if (!(once[t] = tensor(g, c.name))) alone_problems.push_back(c.text() + " alone: no output came back");
    }
    if (!alone_problems.empty())
      return fail("the op did not give a product when called alone, so its calls from threads could not be compared "
                  "(see forward.cpu)",
                  "each of the four products alone, then from four threads at once", lines(alone_problems));
    json r = answer(g, "threads", "threads", &why);
    if (r.is_null()) problems.push_back("the threads' calls: " + why);
    else if (r["raised"] == true) problems.push_back("a call from a thread " + raised_text(r));
    for (std::size_t t = 0; t < p.calls.size() && !r.is_null(); ++t) {
      // a deterministic operator gives the same bits from any thread: compared exactly with its own call alone
      const Expected same{once[t]->shape, once[t]->values, once[t]->dtype, ""};
      int wrong = 0;
      std::string first;
      for (int round = 0; round < kThreadRounds; ++round) {
        Comparison cmp = compare(tensor(g, "threads." + std::to_string(t) + "." + std::to_string(round)), same,
                                 Tolerance{0, 0});
        if (cmp.ok) continue;
        if (wrong++ == 0) first = "round " + std::to_string(round + 1) + ": " + cmp.detail;
      }
      if (wrong)
        problems.push_back(p.calls[t].text() + " in thread " + std::to_string(t + 1) +
                           ": " + std::to_string(wrong) + " of " + std::to_string(kThreadRounds) +
                           " calls differ from the same call alone; first, " + first);
    }
    if (problems.empty())
      return pass("four threads at once, " + std::to_string(kThreadRounds) + " calls each (" + shapes +
                  "): every output equals the same call made alone");
    fail("calls from several threads at once give other results than one at a time",
         "each thread's outputs equal the same call made alone (four threads, " + std::to_string(kThreadRounds) +
             " calls each, started together)",
         lines(problems));
  }

  TEST_CASE("cuda.registered") {
    const GroupResult& g = Session::get().require("inspect");
    for (auto& op : g.report.value("ops", json::array())) {
      if (!op.is_object() || op.value("name", "") != "course::mm16" || op.value("overload", "x") != "") continue;
      auto kernels = op.value("kernels", json::array());
      std::string ks;
      for (auto& k : kernels) ks += (ks.empty() ? "" : ", ") + (k.is_string() ? k.get<std::string>() : k.dump());
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
        if (f.is_null()) { problems.push_back(c.text() + " under " + what + ": " + why); continue; }
        if (f["raised"] == true) { problems.push_back(c.text() + " under " + what + ": " + raised_text(f)); continue; }
        std::string want_device = mode == "meta" ? "meta" : real.value("device", std::string("?"));
        bool same = f.value("shape", json()) == real.value("shape", json()) && f.value("dtype", json()) == real.value("dtype", json()) &&
                    f.value("strides", json()) == real.value("strides", json()) && f.value("device", std::string()) == want_device;
        if (!same) {
          json want = real;
          want["device"] = want_device;
          problems.push_back(c.text() + " under " + what + ": " + describe_meta(f) + ", but the real output has " +
                             describe_meta(want));
        }
      }
      seen += std::string(seen.empty() ? "" : "; ") + torch_dtype(c.dtype) + " " + shape_text(real["shape"].get<std::vector<int64_t>>());
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
      Expected want = c.expected();
      for (auto& v : want.values) v *= 2;
      Tolerance tol = c.tolerance();
      Comparison cmp = compare(tensor(g, "compiled." + std::to_string(i++)), want, {2 * tol.atol, tol.rtol});
      if (!cmp.ok) problems.push_back("2 * (" + c.text() + "): " + cmp.detail);
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
    const std::string want = "one compilation for " + shapes + " with M and N marked dynamic (torch._dynamo.mark_dynamic), "
                             "right values";
    if (e.is_null()) return fail("torch.compile(dynamic=True) gave no result: " + why, want);
    if (e["raised"] == true) {
      const std::string seen = raised_text(e);
      // Without any fake kernel, compile fails before a size can be specialised: say which of the two it was.
      if (seen.find("fake tensors") != std::string::npos || seen.find("Meta kernel") != std::string::npos)
        return fail("torch.compile(dynamic=True) failed: the op has no fake (Meta) kernel to trace with", want, seen);
      return fail("torch.compile(dynamic=True) failed: a size the op was marked dynamic in was made a constant "
                  "(a.size(i) instead of a.sym_size(i)?)", want, seen);
    }
    int compilations = e.value("compilations", 0);
    if (compilations != 1)
      return fail("torch.compile(dynamic=True) compiled " + std::to_string(compilations) + " times for three shapes: "
                  "the fake (Meta) kernel specialised a size, so every new shape recompiles",
                  want, std::to_string(compilations) + " compilations");
    std::vector<std::string> problems;
    for (std::size_t i = 0; i < used.size(); ++i) {
      Expected ref = used[i]->expected();
      for (auto& v : ref.values) v *= 2;
      Tolerance tol = used[i]->tolerance();
      Comparison cmp = compare(tensor(g, "compiled.dynamic." + std::to_string(i)), ref, {2 * tol.atol, tol.rtol});
      if (!cmp.ok) problems.push_back("2 * (" + used[i]->text() + "): " + cmp.detail);
    }
    if (problems.empty()) return pass("one compilation, symbolic M and N, right values for " + shapes);
    fail("the dynamically compiled function's output is wrong", "2 * (a @ b)", lines(problems));
  }

  TEST_CASE("opcheck.cpu") {
    const Plan& p = cpu_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    std::vector<std::string> of{"opcheck.f32.square", "opcheck.f64.nonsquare", "opcheck.f64.view"};
    std::string problems = opcheck_problems(g, p, of);
    if (problems.empty())
      return pass("4 opcheck tests x 3 samples (float32 square, float64 non-square, float64 through a transposed view; "
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
      if (gc.is_null()) problems.push_back(where + ": gradcheck: " + why);
      else if (gc["raised"] == true) problems.push_back(where + ": gradcheck " + raised_text(gc));
      else if (gc.value("returned", false) != true) problems.push_back(where + ": gradcheck returned False");
      json gr = answer(g, "grad." + c->name, "grad", &why);
      if (gr.is_null()) { problems.push_back(where + ": backward: " + why); continue; }
      if (gr["raised"] == true) { problems.push_back(where + ": backward with the judge's upstream gradient " + raised_text(gr)); continue; }
      if (gr.value("grad_a", false) != true || gr.value("grad_b", false) != true) {
        problems.push_back(where + ": no gradient reached " + (gr.value("grad_a", false) != true ? "a" : "b") +
                           " (torch.autograd.grad returned None: is an Autograd kernel registered for course::mm16?)");
        continue;
      }
      FiniteDiff fd = finite_differences(g, p, *c);
      if (!fd.ok) { problems.push_back(where + ": finite differences: " + fd.why); continue; }
      std::string d = grads_problem(g, "grad." + c->name, fd.grad_a, fd.grad_b);
      if (!d.empty()) problems.push_back(where + ": gradients vs the judge's finite differences: " + d);
    }
    if (problems.empty())
      return pass("gradcheck(float64) passed and the gradients match the judge's central differences for " + shapes);
    fail("the backward of course::mm16 is wrong or missing",
         "gradcheck passes, and for the judge's upstream gradient g: grad_a = g @ b^T (a's shape), grad_b = a^T @ g (b's shape)",
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
    if (gc.is_null()) problems.push_back("gradcheck of the 2x backward: " + why);
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
      return pass("a 2x backward around your forward (" + c.text() + "): GradcheckError raised, and the judge rejects its gradients");
    if (!forward.empty())
      return fail("the wrong-backward control is unreliable because your forward is wrong on its inputs (see forward.cpu): " +
                      forward,
                  "GradcheckError for a 2x backward wrapped around a correct forward", lines(problems));
    fail("the wrong-backward control was not caught", "GradcheckError, and gradients the judge rejects", lines(problems));
  }

  TEST_CASE("backward.cases") {
    const Plan& p = cpu_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    std::vector<std::string> problems;
    std::string why;
    // one input requiring grad: the one gradient asked for is there and right
    const Call& c = p.call("ag.nonsquare");
    auto [ea, eb] = exact_gradients(p, c);
    for (std::string only : {"a", "b"}) {
      const std::string key = "grad.only_" + only + ".ag.nonsquare", where = c.text() + ", only " + only + " requiring grad";
      json r = answer(g, key, "grad", &why);
      if (r.is_null()) { problems.push_back(where + ": " + why); continue; }
      if (r["raised"] == true) { problems.push_back(where + ": backward " + raised_text(r)); continue; }
      if (r.value("grad_" + only, false) != true) {
        problems.push_back(where + ": no gradient reached " + only + " (ctx->needs_input_grad(i) asks about input i: "
                           "a is 0, b is 1)");
        continue;
      }
      Comparison cmp = compare(tensor(g, key + ".grad_" + only), only == "a" ? ea : eb, kGradTol);
      if (!cmp.ok) problems.push_back(where + ": grad_" + only + ": " + cmp.detail);
    }
    // a and b changed in place after the forward: the version counter's refusal, or the forward's values' gradients
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
          problems.push_back(changed + ": grad_" + of + " (expected the gradient at the values the forward saw): " +
                             cmp.detail + "; the backward read the changed values: keep a and b with "
                             "ctx->save_for_backward, whose version counter refuses a changed input");
      }
    }
    // the upstream gradient as a view: its values are right only if the backward reads g through its strides
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
      if (r.is_null()) problems.push_back(where + ": " + why);
      else if (r["raised"] == true) problems.push_back(where + ": backward " + raised_text(r));
      else if (std::string bad = grads_problem(g, key, la, lb); !bad.empty())
        problems.push_back(where + ": " + bad + "; the backward read g's memory as row-major: use at:: operations on "
                           "g, or g.contiguous() before a raw pointer");
    }
    // float16 inputs: a float32 upstream gradient, float16 gradients
    const Call& h = p.call("ag.f16");
    auto [ha, hb] = exact_gradients(p, h);
    const std::string where = h.text();
    json r = answer(g, "grad.ag.f16", "grad", &why);
    if (r.is_null()) problems.push_back(where + ": " + why);
    else if (r["raised"] == true)
      problems.push_back(where + ": backward " + raised_text(r) + " (the upstream gradient has the output's dtype, "
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
    if (problems.empty())
      return pass("only a, then only b requiring grad (" + c.text() + "): the gradient asked for is right; a and b "
                  "changed in place after the forward: " + (refused ? "the backward refused (version counter)" :
                  "the gradients of the forward's values") + "; g transposed and g expanded: right; float16 inputs (" + h.text() +
                  "): float16 gradients, right values");
    fail("the backward is wrong when one input requires grad, for a transposed or expanded g, for float16 inputs, or "
         "after an input changed in place",
         "the gradient of each input that requires grad, in that input's dtype: grad_a = g @ b^T, grad_b = a^T @ g, "
         "g any view, float32 for float16 inputs",
         lines(problems));
  }

  // --- CUDA rows ------------------------------------------------------------------------------------------------
  TEST_CASE("forward.cuda") {
    if (skip_without_cuda()) return;
    const Plan& p = cuda_plan();
    products_row(run(p), forward_calls(p), "CUDA products",
                 "each output matches a @ b computed by the judge in float64, " + tolerance_text() +
                     "; every shape class (edge tiles, 1 x 1, K = 1, tall, wide, long K, K = 0, M = 0) twice; a and b "
                     "left as they were");
  }

  TEST_CASE("noncontig.cuda") {
    if (skip_without_cuda()) return;
    const Plan& p = cuda_plan();
    views_row(run(p), p, p.with_role(Role::View));
  }

  TEST_CASE("device.cuda") {
    if (skip_without_cuda()) return;
    const Plan& p = cuda_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    // A call that raised has no output to place: forward.cuda counts it. This row judges the outputs that exist, and
    // needs at least one.
    std::vector<std::string> problems, raised;
    auto calls = forward_calls(p);
    for (auto* c : calls) {
      std::string why;
      json o = answer(g, c->name, "call", &why);
      if (o.is_null()) problems.push_back(c->text() + ": " + why);
      else if (o["raised"] == true) raised.push_back(c->text() + ": " + raised_text(o));
      else if (o.value("device", std::string()) != "cuda:0")
        problems.push_back(c->text() + ": the output is on " + o.value("device", std::string("?")));
    }
    size_t placed = calls.size() - raised.size();
    if (placed == 0)
      return fail("every call raised: no output to check the device of (forward.cuda names the errors)",
                  "outputs on cuda:0, where the inputs are", lines(raised));
    std::string not_judged = raised.empty() ? std::string()
                                            : "; " + std::to_string(raised.size()) + " call(s) raised and returned no "
                                                  "output (forward.cuda counts them)";
    if (problems.empty())
      return pass("all " + std::to_string(placed) + " outputs on cuda:0, the inputs' device" + not_judged);
    fail("the output is not on the inputs' device", "every output on cuda:0, where the inputs are", lines(problems));
  }

  TEST_CASE("guard.cuda") {
    if (skip_without_cuda()) return;
    int count = Session::get().cuda_device_count();
    if (count < 2)
      return skip("needs two CUDA devices (this machine has " + std::to_string(count) +
                  "): the device guard is exercised only with inputs on another device than the current one");
    const Plan& p = cuda_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    const Call& c = p.call("cuda.f16.0.0");
    std::string want = "cuda:" + std::to_string(count - 1), why;
    json o = answer(g, "guard.cuda.f16.0.0", "guard", &why);
    if (o.is_null()) return fail("with inputs on " + want + " while cuda:0 is current: " + why);
    if (o["raised"] == true)
      return fail("with inputs on " + want + " while cuda:0 is current, the op raised", "a tensor on " + want, raised_text(o));
    if (o.value("device", std::string()) != want)
      return fail("with inputs on " + want + " while cuda:0 is current, the output is elsewhere", "device " + want,
                  "device " + o.value("device", std::string("?")));
    Comparison cmp = compare(tensor(g, "guard.cuda.f16.0.0"), c.expected(), c.tolerance());
    if (!cmp.ok) return fail("inputs on " + want + " while cuda:0 is current: wrong values (device guard?)", "a @ b", cmp.detail);
    pass("with inputs on " + want + " while cuda:0 is current: output on " + want + ", right values (" + c.text() + ")");
  }

  TEST_CASE("stream.cuda") {
    if (skip_without_cuda()) return;
    const Plan& p = cuda_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    std::vector<std::string> problems, used;
    for (const char* of : {"cuda.f16.0.0", "cuda.f16.7.0"}) {
      const Call& c = p.call(of);
      used.push_back(c.text());
      std::string why;
      json o = answer(g, std::string("stream.") + of, "stream", &why);
      if (o.is_null()) { problems.push_back(c.text() + ": " + why); continue; }
      if (o["raised"] == true) { problems.push_back(c.text() + ": " + raised_text(o)); continue; }
      Comparison cmp = compare(tensor(g, std::string("stream.") + of), c.expected(), c.tolerance());
      if (!cmp.ok) problems.push_back(c.text() + ": what the next kernel on the stream read: " + cmp.detail);
    }
    if (problems.empty())
      return pass("on a busy side stream: the op read its freshly written input and its output was ready for the next "
                  "kernel on that stream (" + used[0] + "; " + used[1] + ")");
    fail("on a side stream, the op's work was not ordered on PyTorch's current stream",
         "the kernel runs on the current stream: after the (delayed) write of its input, before the next kernel there",
         lines(problems) + "\n    (zeros read from a, or a result not there yet: a launch on the legacy default stream, "
                           "on the per-thread default stream, or on a stream of the op's own does that)");
  }

  TEST_CASE("sync.cuda") {
    if (skip_without_cuda()) return;
    const Plan& p = capture_plan();
    const GroupResult& g = run(p);
    if (!g.ok)
      return fail("capturing the op in a CUDA graph ended the worker: " + g.failure,
                  "the op can be captured (no device-wide synchronisation inside it)");
    std::vector<std::string> problems;
    size_t not_captured = 0;  // shape classes whose eager call raised: no capture to judge there
    for (auto& c : p.calls) {
      std::string why;
      json eager = answer(g, c.name, "call", &why);
      if (eager.is_null() || eager["raised"] == true) {
        problems.push_back(c.text() + ": the op did not run before the capture: " + (eager.is_null() ? why : raised_text(eager)));
        ++not_captured;
        continue;
      }
      json cap = answer(g, "graph." + c.name, "capture", &why);
      if (cap.is_null()) problems.push_back(c.text() + ": capture: " + why);
      else if (cap["raised"] == true) problems.push_back(c.text() + ": capture " + raised_text(cap));
    }
    if (problems.empty())
      return pass("the op was captured in a CUDA graph for every shape class (" + std::to_string(p.calls.size()) +
                  " captures): no device-wide synchronisation inside it");
    if (not_captured == problems.size())
      return fail("the op raised on " + std::to_string(not_captured) + " of " + std::to_string(p.calls.size()) +
                      " shape classes before the capture: the capture could not be checked there (forward.cuda names "
                      "the errors)",
                  "the op runs, then is captured, for every shape class", lines(problems));
    fail("capturing the op in a CUDA graph (torch.cuda.graph) failed: a synchronisation inside the op",
         "capture succeeds for every shape: the op only enqueues work on the current stream", lines(problems));
  }

  TEST_CASE("ptx.cuda") {
    if (skip_without_cuda()) return;
    const BuildResult& b = Session::get().build("ptx");
    if (!b.ok) return fail("the PTX-only build (compute_75 PTX, no machine code) failed: " + b.failure, "it builds", b.log);
    Listing l = cuobjdump(b.library, {"--list-elf", "--list-ptx"});
    if (l.ok && l.text.find(".cubin") != std::string::npos)
      return fail("the PTX-only build holds machine code: the PTX path would not be exercised", "PTX only", l.text);
    const Plan& p = ptx_plan();
    const GroupResult& g = run(p, "ptx");
    if (!answered(g)) return;
    std::vector<std::string> problems;
    for (auto& c : p.calls) {
      std::string pr = call_problem(g, c);
      if (!pr.empty()) problems.push_back(pr);
    }
    std::vector<const Call*> all;
    for (auto& c : p.calls) all.push_back(&c);
    if (problems.empty()) return pass("built as compute_75 PTX only, JIT-compiled by the driver: " + shapes_of(all) + " right");
    fail("the PTX-only build gives wrong results", "the same products as the machine-code build", lines(problems));
  }

  TEST_CASE("opcheck.cuda") {
    if (skip_without_cuda()) return;
    const Plan& p = cuda_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    std::string problems = opcheck_problems(g, p, {"cuda.f16.1.0", "cuda.f16.0.0"});
    if (problems.empty())
      return pass("4 opcheck tests x 2 float16 CUDA samples (square and not; requires_grad) SUCCESS; outputs right");
    fail("torch.library.opcheck failed on CUDA samples that require grad",
         "test_schema, test_autograd_registration, test_faketensor and test_aot_dispatch_dynamic all SUCCESS", problems);
  }

  TEST_CASE("kernel.cuda") {
    if (skip_without_cuda()) return;
    const BuildResult& b = Session::get().build();
    if (!b.ok) return fail("not run: the submission did not build (" + b.failure + ")");
    std::string why;
    std::set<std::string> own = defined_kernels(b.library, &why);
    if (!why.empty()) return fail("cuobjdump could not list the library's kernels: " + why);
    const Plan& p = cuda_plan();
    const GroupResult& g = run(p);
    if (!answered(g)) return;
    std::vector<std::string> problems;
    std::set<std::string> ran_own, all;
    for (const char* of : {"cuda.f16.0.0", "cuda.view.t_s.0"}) {
      const Call& c = p.call(of);
      json o = answer(g, std::string("kernels.") + of, "kernels", &why);
      if (o.is_null()) { problems.push_back(c.text() + ": " + why); continue; }
      if (o["raised"] == true) { problems.push_back(c.text() + ": " + raised_text(o)); continue; }
      std::vector<std::string> names = o.value("kernels", std::vector<std::string>{});
      bool mine = false;
      std::string listed;
      for (auto& k : names) {
        all.insert(k);
        listed += (listed.empty() ? "" : ", ") + k;
        if (own.count(function_name(k))) { mine = true; ran_own.insert(function_name(k)); }
        else if (library_gemm(k)) problems.push_back(c.text() + ": the product was done by a library GEMM: " + k);
      }
      if (!mine) problems.push_back(c.text() + ": none of the kernels it launched is yours (launched: " +
                                    (listed.empty() ? std::string("none") : listed) + ")");
    }
    std::string defined;
    for (auto& k : own) defined += (defined.empty() ? "" : ", ") + k;
    if (problems.empty())
      return pass("your kernel did the work: " + std::string(ran_own.begin()->c_str()) + " ran inside course::mm16 (" +
                  std::to_string(all.size()) + " kernel(s) launched, no library GEMM)");
    fail("the operator's own kernel did not do the work",
         "the kernels launched inside course::mm16 (the profiler's trace) include one your library defines (" +
             (defined.empty() ? std::string("cuobjdump lists none") : defined) + "), and no cuBLAS/CUTLASS GEMM",
         lines(problems));
  }

  TEST_CASE("memcheck.cuda") {
    if (skip_without_cuda()) return;
    if (Session::get().toolchain.value("compute_sanitizer", "").empty())
      return skip("compute-sanitizer is not installed here (it comes with the CUDA toolkit): the memory-safety "
                  "row needs it");
    std::string unusable = sanitizer_unusable();
    if (!unusable.empty()) return skip(unusable);
    std::vector<std::string> problems;
    bool found = false;  // the tool reported something (else the operator did not run to the end under it)
    std::string summaries;
    for (auto [tool, plan] : {std::pair<std::string, const Plan*>{"memcheck", &memcheck_plan()}, {"racecheck", &racecheck_plan()}}) {
      const GroupResult& g = run_sanitized(*plan, tool);
      SanitizerLog log = read_sanitizer_log(g.dir / (tool + ".log"));
      const ProcessResult& pr = g.process;
      if (pr.exited && pr.exit_code == kSanitizerFoundErrors) {
        problems.push_back(tool + " reported: " + (log.first_error.empty() ? log.summary : log.first_error));
        found = true;
        continue;
      }
      if (!g.ok) { problems.push_back(tool + ": " + g.failure); continue; }
      if (log.summary.empty()) { problems.push_back(tool + ": compute-sanitizer wrote no summary"); continue; }
      for (auto& c : plan->calls) {  // a clean run proves something only if the products ran
        std::string why;
        json o = answer(g, c.name, "call", &why);
        if (o.is_null() || o["raised"] == true)
          problems.push_back(tool + ": " + c.text() + " did not run: " + (o.is_null() ? why : raised_text(o)));
      }
      summaries += (summaries.empty() ? "" : "; ") + log.summary.substr(std::min<std::size_t>(10, log.summary.size()));
    }
    if (problems.empty())
      return pass("under compute-sanitizer, every shape class (edge tiles included) and the views: " + summaries);
    std::vector<const Call*> calls;
    for (auto& c : memcheck_plan().calls) calls.push_back(&c);
    fail(found ? "compute-sanitizer found a memory error or a shared-memory hazard in the operator"
               : "the operator did not run to the end under compute-sanitizer: nothing was checked",
         "no out-of-bounds or misaligned access (memcheck) and no shared-memory race (racecheck) for " + shapes_of(calls),
         lines(problems));
  }
}
