// What the rows of course::mm16 (chapters 3-6, the mm16_N_*_checks.cpp files) judge the same way: a row over
// products (every output right, the inputs untouched, no output overwritten later), the views row, the contract's
// invalid calls, opcheck's answers, and the library listings of cuobjdump. Each is the one place its verdict is
// decided, so the CPU and CUDA rows (and the contract and fake.meta) cannot drift apart.
#pragma once
#include <string>
#include <vector>

#include "../judge/grading.hpp"
#include "mm16_plan.hpp"

namespace judge::mm16 {

// The first `at_most` items, one an indented line, and how many more there were.
std::string lines(const std::vector<std::string>& items, std::size_t at_most = 8);
// The distinct shapes of the calls: "[37, 45]@[45, 29], ..."
std::string shapes_of(const std::vector<const Call*>& calls);
std::vector<const Call*> forward_calls(const Plan& p);
std::string tolerance_text();

// Fails the row with the run's own failure when the worker did not answer; true when it did.
bool answered(const GroupResult& g);
// Why one call's output is wrong ("" when right): it raised, returned nothing, or differs from a @ b.
std::string call_problem(const GroupResult& g, const Call& c);
// Why the op left an operand other than it found it ("" when it did not).
std::string inputs_problem(const GroupResult& g, const Call& c);

// Why the tensor `name` is not 2 * (c's product), the function the compile rows compile ("" when it is).
std::string doubled_problem(const GroupResult& g, const std::string& name, const Call& c);

// A row over calls: every output right, or the wrong ones listed with the worst element of each.
void products_row(const GroupResult& g, const std::vector<const Call*>& calls, const std::string& what,
                  const std::string& expected);
// The row of the non-contiguous calls: laid out as asked, and right.
void views_row(const GroupResult& g, const Plan& plan, const std::vector<const Call*>& calls);

// The contract probes of one device: each invalid call must raise with a message, the valid one must return.
struct ContractOutcome {
  std::string not_run;  // the worker did not finish normally
  std::vector<std::string> problems;
  int invalid = 0;
};
ContractOutcome contract_outcome(const std::string& device);

// What opcheck said of the samples `of` (calls of `plan`; the tests their probes asked, all four by default), and
// whether their outputs are right: "" when all is well.
std::string opcheck_problems(const GroupResult& g, const Plan& plan, const std::vector<std::string>& of);

// cuobjdump's listing of a built library
struct Listing {
  bool ok = false;
  std::string text, why;
};
Listing cuobjdump(const fs::path& lib, const std::vector<std::string>& flags);

}  // namespace judge::mm16
