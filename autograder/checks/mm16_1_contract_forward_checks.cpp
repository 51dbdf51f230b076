// Chapter 3's rows of course::mm16: the contract (invalid calls raise with a message, on the CPU and on CUDA) and
// the CPU forward (products, views, output dtypes, the op's own loops, calls from several threads).
//
// The mm16 rows: the judge chooses every input from the grade's seed (mm16_plan_inputs.cpp: twelve shape classes,
// each called twice with new values, views, three dtypes), the worker runs the submission on them and returns raw
// data, and every verdict is computed in the judge: values against its own float64 product through the one
// comparator (judge/compare.hpp), gradients against finite differences of forward values the worker returned, fake
// metadata against the real outputs, error behaviour from the worker's report and its exit status. opcheck,
// gradcheck and torch.compile run in the worker for their standard messages, but a row passes only on evidence
// checked here. The rows are in five files, numbered because the judge runs its checks in doctest's file order
// (file name, then line: main.cpp's order-by file): 1 contract and CPU forward, 2 CUDA build, 3 fake, 4 autograd,
// 5 CUDA device; the order they ran in when they were one file.
#include <doctest/doctest.h>

#include <set>

#include "../judge/grading.hpp"
#include "dispatched_ops.hpp"
#include "mm16_plan.hpp"
#include "mm16_rows.hpp"

using namespace judge;
using namespace judge::mm16;

namespace {

void check_contract(const std::string& device) {
  ContractOutcome c = contract_outcome(device);
  if (!c.not_run.empty())
    return fail(c.not_run,
                "each invalid call raises an exception (TORCH_CHECK) that the caller catches, and the process goes on",
                "the worker did not finish normally");
  if (c.problems.empty())
    return pass(std::to_string(c.invalid) +
                " invalid calls raised with a message, the valid call worked, the process survived");
  fail(std::to_string(c.problems.size()) + " of the " + device + " contract calls went wrong",
       "every invalid call raises (RuntimeError from TORCH_CHECK) with a message saying what is wrong and what arrived "
       "(the sizes, dtypes or devices); the valid call returns",
       lines(c.problems));
}

}  // namespace

TEST_SUITE_BEGIN("mm16");

TEST_CASE("contract.cpu") { check_contract("cpu"); }

TEST_CASE("contract.cuda") {
  if (skip_without_cuda()) return;
  check_contract("cuda");
}

TEST_CASE("forward.cpu") {
  const Plan& p = cpu_plan();
  products_row(
      run(p), forward_calls(p), "CPU products",
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
  for (auto [name, want] : {std::pair<const char*, const char*>{"cpu.f16.0.0", "float32"},
                            {"cpu.f32.0", "float32"},
                            {"cpu.f64.0", "float64"}}) {
    const Call& c = p.call(name);
    std::string why;
    json o = answer(g, name, "call", &why);
    std::string got = o.is_null()           ? why
                      : o["raised"] == true ? "an exception (see forward.cpu)"
                                            : o.value("dtype", std::string("(no dtype)"));
    seen += std::string(seen.empty() ? "" : ", ") + torch_dtype(c.dtype) + " -> " + got;
    if (got != want)
      problems += std::string(problems.empty() ? "" : ", ") + torch_dtype(c.dtype) + " inputs gave " + got;
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
    if (o.is_null()) {
      problems.push_back(c.text() + ": " + why);
      continue;
    }
    if (o["raised"] == true) {
      raised.push_back(c.text() + ": " + raised_text(o));
      continue;
    }
    const auto ops = o.value("ops", std::vector<std::string>{});
    seen.insert(ops.begin(), ops.end());
    const std::string computing = computing_ops(ops);
    if (!computing.empty()) problems.push_back(c.text() + ": " + other_ops_ran("course::mm16", computing));
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
    if (alone.is_null())
      alone_problems.push_back(c.text() + " alone: " + why);
    else if (alone["raised"] == true)
      alone_problems.push_back(c.text() + " alone: " + raised_text(alone));
    else if (!(once[t] = tensor(g, c.name)))
      alone_problems.push_back(c.text() + " alone: no output came back");
  }
  if (!alone_problems.empty())
    return fail(
        "the op did not give a product when called alone, so its calls from threads could not be compared "
        "(see forward.cpu)",
        "each of the four products alone, then from four threads at once", lines(alone_problems));
  json r = answer(g, "threads", "threads", &why);
  if (r.is_null())
    problems.push_back("the threads' calls: " + why);
  else if (r["raised"] == true)
    problems.push_back("a call from a thread " + raised_text(r));
  for (std::size_t t = 0; t < p.calls.size() && !r.is_null(); ++t) {
    // a deterministic operator gives the same bits from any thread: compared exactly with its own call alone
    const Expected same{once[t]->shape, once[t]->values, once[t]->dtype, ""};
    int wrong = 0;
    std::string first;
    for (int round = 0; round < kThreadRounds; ++round) {
      Comparison cmp =
          compare(tensor(g, "threads." + std::to_string(t) + "." + std::to_string(round)), same, Tolerance{0, 0});
      if (cmp.ok) continue;
      if (wrong++ == 0) first = "round " + std::to_string(round + 1) + ": " + cmp.detail;
    }
    if (wrong)
      problems.push_back(p.calls[t].text() + " in thread " + std::to_string(t + 1) + ": " + std::to_string(wrong) +
                         " of " + std::to_string(kThreadRounds) + " calls differ from the same call alone; first, " +
                         first);
  }
  if (problems.empty())
    return pass("four threads at once, " + std::to_string(kThreadRounds) + " calls each (" + shapes +
                "): every output equals the same call made alone");
  fail("calls from several threads at once give other results than one at a time",
       "each thread's outputs equal the same call made alone (four threads, " + std::to_string(kThreadRounds) +
           " calls each, started together)",
       lines(problems));
}

TEST_SUITE_END();
