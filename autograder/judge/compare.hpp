// The judge's one comparator: every value a check compares (outputs, gradients, finite differences) goes through
// compare(), so NaN, infinities, signed zeros and empty tensors are treated alike everywhere.
//
//  * shape first, then dtype and device when the expectation names them;
//  * a value passes when |seen - reference| <= atol + rtol * |reference|;
//  * a non-finite seen value where the reference is finite is wrong (NaN compares false with everything, so a
//    comparison written as `err > tol` would let it through);
//  * a non-finite reference must be matched exactly (NaN by NaN, +Inf by +Inf);
//  * -0.0 equals 0.0.
// The detail names the worst element (its index), both values and how many elements are wrong.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "safetensors.hpp"

namespace judge {

struct Tolerance {
  double atol = 0, rtol = 0;
};

struct Expected {
  std::vector<int64_t> shape;
  std::vector<double> values;  // row-major
  std::string dtype;           // safetensors name ("F32"); empty: not checked
  std::string device;          // "cuda:0"; empty: not checked
};

struct Comparison {
  bool ok = false;
  std::string detail;      // one line: what is wrong, or what matched
  std::size_t wrong = 0;   // elements outside the tolerance (or all, when the shape is wrong)
  double worst_error = 0;  // |seen - reference| of the worst element (infinity for a non-finite mismatch)
};

// `seen` may be null (nothing came back); `seen_device` is the device the worker reported for it ("" if unknown).
Comparison compare(const Tensor* seen, const Expected& expected, Tolerance tol, const std::string& seen_device = "");

// "[3, 4]"
std::string shape_text(const std::vector<int64_t>& shape);
// The torch name of a safetensors dtype: F16 -> float16.
std::string torch_dtype(const std::string& safetensors_dtype);

}  // namespace judge
