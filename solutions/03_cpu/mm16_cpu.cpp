// Reference solution of exercise 03_cpu: the schema of course::mm16 and its CPU kernel.
// Chapter: chapters/03_cpu.md. Grade it with: ./course grade 03_cpu solutions/03_cpu
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

// --8<-- [start:checks]
// The contract, checked before any memory is touched. TORCH_CHECK throws a c10::Error, which Python sees as a
// RuntimeError carrying the message: the caller can catch it and the process survives.
static void check_mm16_inputs(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "mm16: expected 2-D matrices, got a with ", a.dim(),
              " dimension(s) and b with ", b.dim());
  TORCH_CHECK(a.size(1) == b.size(0), "mm16: a is ", a.size(0), "x", a.size(1), " and b is ", b.size(0), "x",
              b.size(1), ": a.size(1) must equal b.size(0)");
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "mm16: a and b must have the same dtype, got ",
              a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK(at::isFloatingType(a.scalar_type()), "mm16: expected floating-point inputs (float16, float32, ",
              "float64), got ", a.scalar_type());
}
// --8<-- [end:checks]

// --8<-- [start:out_dtype]
// float16 inputs give a float32 result (the tensor-core kernel accumulates in float32); other dtypes keep theirs,
// so a float64 call stays float64 end to end (gradcheck needs that).
static at::ScalarType mm16_out_dtype(at::ScalarType in) {
  return in == at::kHalf ? at::kFloat : in;
}
// --8<-- [end:out_dtype]

// --8<-- [start:cpu]
at::Tensor mm16_cpu(const at::Tensor& a, const at::Tensor& b) {
  check_mm16_inputs(a, b);
  TORCH_CHECK(a.device().is_cpu() && b.device().is_cpu(), "mm16_cpu: expected CPU tensors");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  at::Tensor c = at::empty({M, N}, a.options().dtype(mm16_out_dtype(a.scalar_type())));
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(a.scalar_type(), "mm16", [&] {  // "mm16": the name an unsupported dtype's error shows
    // Accumulate in at least float32; the output element type is float for Half, scalar_t otherwise.
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t* pa = a.const_data_ptr<scalar_t>();
    const scalar_t* pb = b.const_data_ptr<scalar_t>();
    acc_t* pc = c.mutable_data_ptr<acc_t>();
    // Strides, not an assumed row-major layout: a transposed or sliced input is read correctly.
    const int64_t sa0 = a.stride(0), sa1 = a.stride(1), sb0 = b.stride(0), sb1 = b.stride(1);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        acc_t sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += static_cast<acc_t>(pa[i * sa0 + k * sa1]) * static_cast<acc_t>(pb[k * sb0 + j * sb1]);
        pc[i * N + j] = sum;  // c is freshly allocated, hence contiguous
      }
  });
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
