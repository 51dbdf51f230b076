// Chapter 4's rows of course::mm16 on a CUDA device: products and views, the output's device, the device guard, the
// current stream, CUDA-graph capture, the PTX-only build, opcheck, the op's own kernel doing the work, and
// compute-sanitizer. (mm16_1_contract_forward_checks.cpp says why the files are numbered.)
#include <doctest/doctest.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <set>

#include "../judge/grading.hpp"
#include "mm16_plan.hpp"
#include "mm16_rows.hpp"

using namespace judge;
using namespace judge::mm16;

namespace {

// "(anonymous namespace)::mm16_wmma_kernel(__half const*, ...)" -> "mm16_wmma_kernel": the function's own name, as
// both cuobjdump's (demangled) symbols and the profiler's kernel names spell it.
std::string function_name(const std::string& demangled) {
  std::string s = demangled;
  if (!s.empty() && s.back() == ')') {  // drop the parameter list: from the '(' that balances the last ')'
    int depth = 0;
    for (std::size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')')
        ++depth;
      else if (s[i] == '(' && --depth == 0) {
        s = s.substr(0, i);
        break;
      }
    }
  }
  int angle = 0;  // drop template arguments
  std::string plain;
  for (char ch : s) {
    if (ch == '<')
      ++angle;
    else if (ch == '>')
      --angle;
    else if (angle == 0)
      plain += ch;
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
  if (!l.ok) {
    *why = l.why;
    return names;
  }
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
  ProcessSpec spec{
      {s.toolchain.value("compute_sanitizer", ""), "--tool", "memcheck", "--error-exitcode", "97",
       s.toolchain.value("python", ""), "-c", "import torch; print(torch.ones(8, device='cuda').sum().item())"},
      current_environment(),
      s.cfg.work_dir.string(),
      300,
      16 * 1024};
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
      if (blank || block_lines >= 12) {
        out.first_error = block;
        in_block = false;
        continue;
      }
      block += (block.empty() ? "" : "\n") + body.substr(std::min(body.find_first_not_of(' '), body.size()));
      ++block_lines;
    }
  }
  if (in_block && out.first_error.empty()) out.first_error = block;
  return out;
}

}  // namespace

TEST_SUITE_BEGIN("mm16");

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
    if (o.is_null())
      problems.push_back(c->text() + ": " + why);
    else if (o["raised"] == true)
      raised.push_back(c->text() + ": " + raised_text(o));
    else if (o.value("device", std::string()) != "cuda:0")
      problems.push_back(c->text() + ": the output is on " + o.value("device", std::string("?")));
  }
  size_t placed = calls.size() - raised.size();
  if (placed == 0)
    return fail("every call raised: no output to check the device of (forward.cuda names the errors)",
                "outputs on cuda:0, where the inputs are", lines(raised));
  std::string not_judged = raised.empty() ? std::string()
                                          : "; " + std::to_string(raised.size()) +
                                                " call(s) raised and returned no "
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
    return fail("with inputs on " + want + " while cuda:0 is current, the op raised", "a tensor on " + want,
                raised_text(o));
  if (o.value("device", std::string()) != want)
    return fail("with inputs on " + want + " while cuda:0 is current, the output is elsewhere", "device " + want,
                "device " + o.value("device", std::string("?")));
  Comparison cmp = compare(tensor(g, "guard.cuda.f16.0.0"), c.expected(), c.tolerance());
  if (!cmp.ok)
    return fail("inputs on " + want + " while cuda:0 is current: wrong values (device guard?)", "a @ b", cmp.detail);
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
    if (o.is_null()) {
      problems.push_back(c.text() + ": " + why);
      continue;
    }
    if (o["raised"] == true) {
      problems.push_back(c.text() + ": " + raised_text(o));
      continue;
    }
    Comparison cmp = compare(tensor(g, std::string("stream.") + of), c.expected(), c.tolerance());
    if (!cmp.ok) problems.push_back(c.text() + ": what the next kernel on the stream read: " + cmp.detail);
  }
  if (problems.empty())
    return pass(
        "on a busy side stream: the op read its freshly written input and its output was ready for the next "
        "kernel on that stream (" +
        used[0] + "; " + used[1] + ")");
  fail("on a side stream, the op's work was not ordered on PyTorch's current stream",
       "the kernel runs on the current stream: after the (delayed) write of its input, before the next kernel there",
       lines(problems) +
           "\n    (zeros read from a, or a result not there yet: a launch on the legacy default stream, "
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
      problems.push_back(c.text() +
                         ": the op did not run before the capture: " + (eager.is_null() ? why : raised_text(eager)));
      ++not_captured;
      continue;
    }
    json cap = answer(g, "graph." + c.name, "capture", &why);
    if (cap.is_null())
      problems.push_back(c.text() + ": capture: " + why);
    else if (cap["raised"] == true)
      problems.push_back(c.text() + ": capture " + raised_text(cap));
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
  if (!b.ok)
    return fail("the PTX-only build (compute_75 PTX, no machine code) failed: " + b.failure, "it builds", b.log);
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
  if (problems.empty())
    return pass("built as compute_75 PTX only, JIT-compiled by the driver: " + shapes_of(all) + " right");
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

// The row of kernel.cuda and kernel.triton: the kernels the profiler saw inside course::mm16 include one of `own`
// (the submission's kernels; `none`: what to say when there are none), and no library GEMM.
static void kernels_row(const std::set<std::string>& own, const std::string& none) {
  std::string why;
  const Plan& p = cuda_plan();
  const GroupResult& g = run(p);
  if (!answered(g)) return;
  std::vector<std::string> problems;
  std::set<std::string> ran_own, all;
  for (const char* of : {"cuda.f16.0.0", "cuda.view.t_s.0"}) {
    const Call& c = p.call(of);
    json o = answer(g, std::string("kernels.") + of, "kernels", &why);
    if (o.is_null()) {
      problems.push_back(c.text() + ": " + why);
      continue;
    }
    if (o["raised"] == true) {
      problems.push_back(c.text() + ": " + raised_text(o));
      continue;
    }
    std::vector<std::string> names = o.value("kernels", std::vector<std::string>{});
    bool mine = false;
    std::string listed;
    for (auto& k : names) {
      all.insert(k);
      listed += (listed.empty() ? "" : ", ") + k;
      if (own.count(function_name(k))) {
        mine = true;
        ran_own.insert(function_name(k));
      } else if (library_gemm(k))
        problems.push_back(c.text() + ": the product was done by a library GEMM: " + k);
    }
    if (!mine)
      problems.push_back(c.text() + ": none of the kernels it launched is yours (launched: " +
                         (listed.empty() ? std::string("none") : listed) + ")");
  }
  std::string defined;
  for (auto& k : own) defined += (defined.empty() ? "" : ", ") + k;
  if (problems.empty())
    return pass("your kernel did the work: " + std::string(ran_own.begin()->c_str()) + " ran inside course::mm16 (" +
                std::to_string(all.size()) + " kernel(s) launched, no library GEMM)");
  fail("the operator's own kernel did not do the work",
       "the kernels launched inside course::mm16 (the profiler's trace) include one your library defines (" +
           (defined.empty() ? none : defined) + "), and no cuBLAS/CUTLASS GEMM",
       lines(problems));
}

TEST_CASE("kernel.cuda") {
  if (skip_without_cuda()) return;
  const BuildResult& b = Session::get().build();
  if (!b.ok) return fail("not run: the submission did not build (" + b.failure + ")");
  std::string why;
  std::set<std::string> own = defined_kernels(b.library, &why);
  if (!why.empty()) return fail("cuobjdump could not list the library's kernels: " + why);
  kernels_row(own, "cuobjdump lists none");
}

// Chapter 11: a Triton kernel is compiled at its first launch, so no library lists it; the judge reads the names of
// the module's @triton.jit functions from its source (the profiler names a Triton kernel after its function).
TEST_CASE("kernel.triton") {
  if (skip_without_cuda()) return;
  const BuildResult& b = Session::get().build();
  if (!b.ok) return fail("not run: the submission could not be taken (" + b.failure + ")");
  const std::vector<std::string> names = triton_kernels();
  kernels_row(std::set<std::string>(names.begin(), names.end()), "the module has no @triton.jit function");
}

TEST_CASE("memcheck.cuda") {
  if (skip_without_cuda()) return;
  if (Session::get().toolchain.value("compute_sanitizer", "").empty())
    return skip(
        "compute-sanitizer is not installed here (it comes with the CUDA toolkit): the memory-safety "
        "row needs it");
  std::string unusable = sanitizer_unusable();
  if (!unusable.empty()) return skip(unusable);
  std::vector<std::string> problems;
  bool found = false;  // the tool reported something (else the operator did not run to the end under it)
  std::string summaries;
  for (auto [tool, plan] :
       {std::pair<std::string, const Plan*>{"memcheck", &memcheck_plan()}, {"racecheck", &racecheck_plan()}}) {
    const GroupResult& g = run_sanitized(*plan, tool);
    SanitizerLog log = read_sanitizer_log(g.dir / (tool + ".log"));
    const ProcessResult& pr = g.process;
    if (pr.exited && pr.exit_code == kSanitizerFoundErrors) {
      problems.push_back(tool + " reported: " + (log.first_error.empty() ? log.summary : log.first_error));
      found = true;
      continue;
    }
    if (!g.ok) {
      problems.push_back(tool + ": " + g.failure);
      continue;
    }
    if (log.summary.empty()) {
      problems.push_back(tool + ": compute-sanitizer wrote no summary");
      continue;
    }
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

TEST_SUITE_END();
