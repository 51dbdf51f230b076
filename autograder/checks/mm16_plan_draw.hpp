// The drawing helpers of the course::mm16 plans (mm16_plan_inputs.cpp), for the plan parts kept in files of their
// own (mm16_plan_python_op.cpp): one generator, seeded per grade, for every input.
#pragma once
#include <random>

#include "mm16_plan.hpp"

namespace judge::mm16 {

bool has_check(const std::string& id);
int64_t pick(std::mt19937_64& rng, int64_t lo, int64_t hi);
int64_t pick_not16(std::mt19937_64& rng, int64_t lo, int64_t hi);
// Values exactly representable in float16, so every dtype sees the same numbers and the float64 product is exact.
Matrix random_matrix(int64_t rows, int64_t cols, std::mt19937_64& rng);

struct ShapeClass {
  std::string label;
  int64_t M, K, N;
};

// One call of the plan: operands drawn from `rng`; a's view `va` (b's is set by the caller).
Call single(const std::string& name, const std::string& cls, int64_t M, int64_t K, int64_t N, const std::string& dtype,
            const std::string& device, Role role, std::mt19937_64& rng, View va = View::Contiguous);
// Chapter 11's probes of the CPU plan (mm16_plan_python_op.cpp).
void add_python_op_probes(Plan& p, std::mt19937_64& rng, const std::vector<ShapeClass>& sc);

}  // namespace judge::mm16
