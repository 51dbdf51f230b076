// Exercise 03_cpu: the schema of course::mm16 and its CPU kernel.
// Chapter: chapters/03_cpu.md. Grade it with: ./course grade 03_cpu
//
// mm16(a, b) is the matrix product a @ b: a is M x K, b is K x N, the result is M x N. It accepts float16,
// float32 and float64 inputs (both of the same dtype); float16 inputs give a float32 result, the other dtypes
// keep theirs. Any M, N, K, and any strides.
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

// --8<-- [start:checks]
static void check_mm16_inputs(const at::Tensor& a, const at::Tensor& b) {
  // TODO(student) 1: reject invalid calls with TORCH_CHECK(condition, "message", values...), one check per rule:
  //   both inputs 2-D; a.size(1) == b.size(0); the same dtype; a floating dtype (at::isFloatingType).
  //   Say in the message what was expected and what arrived. Never exit() or abort(): the caller must survive.
}
// --8<-- [end:checks]

// --8<-- [start:out_dtype]
static at::ScalarType mm16_out_dtype(at::ScalarType in) {
  // TODO(student) 2: float16 inputs give a float32 result; any other dtype stays as it is.
  return in;
}
// --8<-- [end:out_dtype]

// --8<-- [start:cpu]
at::Tensor mm16_cpu(const at::Tensor& a, const at::Tensor& b) {
  check_mm16_inputs(a, b);
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  at::Tensor c = at::empty({M, N}, a.options().dtype(mm16_out_dtype(a.scalar_type())));
  // TODO(student) 3: fill c with a @ b. Dispatch on the dtype with AT_DISPATCH_FLOATING_TYPES_AND_HALF, accumulate
  //   in at::opmath_type<scalar_t> (float for Half), and read a and b through their strides: element (i, k) of a
  //   is at a.const_data_ptr<scalar_t>()[i * a.stride(0) + k * a.stride(1)]. Then delete the two lines below.
  (void)K;
  TORCH_CHECK(false, "TODO(student) 3 in mm16_cpu.cpp: mm16_cpu does not compute the product yet");
  return c;
}
// --8<-- [end:cpu]

// --8<-- [start:library]
TORCH_LIBRARY(course, m) {
  m.def("mm16(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(course, CPU, m) {
  m.impl("mm16", &mm16_cpu);
}
// --8<-- [end:library]
