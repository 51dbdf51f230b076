#include "compare.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace judge {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string torch_dtype(const std::string& d) {
  if (d == "F16") return "float16";
  if (d == "BF16") return "bfloat16";
  if (d == "F32") return "float32";
  if (d == "F64") return "float64";
  if (d == "I64") return "int64";
  if (d == "I32") return "int32";
  if (d == "BOOL") return "bool";
  return d;
}

namespace {

std::string index_text(std::size_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    int64_t n = shape[d] > 0 ? shape[d] : 1;
    idx[d] = static_cast<int64_t>(flat % static_cast<std::size_t>(n));
    flat /= static_cast<std::size_t>(n);
  }
  return shape_text(idx);
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// How far `s` is from `r`, as the tolerance sees it: its excess over atol + rtol*|r| (<= 0 passes) and its error.
struct Miss {
  double excess, error;
};
Miss miss(double s, double r, Tolerance tol) {
  const double inf = std::numeric_limits<double>::infinity();
  if (!std::isfinite(r)) {  // a non-finite reference is matched exactly
    bool same = std::isnan(r) ? std::isnan(s) : s == r;
    return same ? Miss{-1, 0} : Miss{inf, inf};
  }
  if (!std::isfinite(s)) return {inf, inf};
  double err = std::fabs(s - r);  // -0.0 and 0.0 differ by 0
  return {err - (tol.atol + tol.rtol * std::fabs(r)), err};
}

}  // namespace

Comparison compare(const Tensor* seen, const Expected& want, Tolerance tol, const std::string& seen_device) {
  Comparison c;
  if (!seen) {
    c.detail = "no output tensor came back";
    return c;
  }
  if (seen->shape != want.shape) {
    c.detail = "shape " + shape_text(seen->shape) + " instead of " + shape_text(want.shape);
    c.wrong = want.values.size();
    return c;
  }
  if (!want.dtype.empty() && seen->dtype != want.dtype) {
    c.detail = "dtype " + torch_dtype(seen->dtype) + " instead of " + torch_dtype(want.dtype);
    c.wrong = want.values.size();
    return c;
  }
  if (!want.device.empty() && !seen_device.empty() && seen_device != want.device) {
    c.detail = "device " + seen_device + " instead of " + want.device;
    c.wrong = want.values.size();
    return c;
  }
  if (seen->values.size() != want.values.size()) {  // a malformed tensor: its shape and values disagree
    c.detail = std::to_string(seen->values.size()) + " values for shape " + shape_text(seen->shape);
    c.wrong = want.values.size();
    return c;
  }
  char tol_text[64];
  std::snprintf(tol_text, sizeof tol_text, "atol=%.2g rtol=%.2g", tol.atol, tol.rtol);
  if (want.values.empty()) {
    c.ok = true;
    c.detail = "empty " + shape_text(want.shape) + ", as expected";
    return c;
  }
  std::size_t worst = 0;
  double worst_excess = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < want.values.size(); ++i) {
    Miss m = miss(seen->values[i], want.values[i], tol);
    if (m.excess > 0) ++c.wrong;
    if (m.excess > worst_excess) {
      worst_excess = m.excess;
      worst = i;
      c.worst_error = m.error;
    }
  }
  c.ok = c.wrong == 0;
  const std::string n = std::to_string(want.values.size());
  if (c.ok)
    c.detail = "all " + n + " elements within " + tol_text + " (largest error " + number(c.worst_error) + ")";
  else
    c.detail = std::to_string(c.wrong) + " of " + n + " elements outside " + tol_text + "; worst at " +
               index_text(worst, want.shape) + ": got " + number(seen->values[worst]) + ", reference " +
               number(want.values[worst]) + " (error " + number(c.worst_error) + ")";
  return c;
}

}  // namespace judge
