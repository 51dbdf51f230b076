// What the answer of a call of course::mm16 is compared with: the judge's own float64 product of the operands, and
// the tolerance fitted to the inputs' dtype and to K (the comparison itself is judge/compare.hpp's).
#include "mm16_plan.hpp"

#include <cmath>

namespace judge::mm16 {

Matrix product(const Matrix& a, const Matrix& b) {
  Matrix c{a.rows, b.cols, std::vector<double>(static_cast<std::size_t>(a.rows * b.cols), 0.0)};
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = 0; k < a.cols; ++k) {
      const double x = a.at(i, k);
      for (int64_t j = 0; j < b.cols; ++j) c.v[static_cast<std::size_t>(i * c.cols + j)] += x * b.at(k, j);
    }
  return c;
}

Matrix transpose(const Matrix& m) {
  Matrix t{m.cols, m.rows, std::vector<double>(m.v.size())};
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) t.v[static_cast<std::size_t>(j * t.cols + i)] = m.at(i, j);
  return t;
}

Expected Call::expected() const {
  Matrix c = product(a, b);
  return Expected{{c.rows, c.cols}, std::move(c.v), "", ""};
}

Tolerance Call::tolerance() const {
  // float16 inputs, float32 (or wider) accumulation: 1e-3, growing with sqrt(K) for long sums
  double grow = std::max(1.0, std::sqrt(static_cast<double>(K()) / 16.0));
  double base = dtype == "F64" ? 1e-9 : dtype == "F32" ? 1e-5 : 1e-3;
  return {base * grow, base * grow};
}

}  // namespace judge::mm16
