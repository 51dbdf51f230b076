// Exercise 10_stable_abi, part 1: course::mm16's schema and CPU kernel on the LibTorch stable
// ABI. The fake kernel is Python's (mm16_stable/__init__.py): a stable Meta kernel would read plain integer sizes.
// Nothing here includes ATen or c10: every call into torch goes through the C shim that torch/csrc/stable/ wraps,
// whose symbols keep their meaning across torch releases from the target version on.
// Chapter: chapters/10_stable_abi.md. Grade it with: ./course grade 10_stable_abi
//
// The oldest torch this binary runs on, set before any torch header (the build passes the same value with -D, and
// a second definition that differed would be a compile error): 2.10, older than the course's torch.
// --8<-- [start:target]
#ifndef TORCH_TARGET_VERSION
#define TORCH_TARGET_VERSION (((0ULL + 2) << 56) | ((0ULL + 10) << 48))
#endif

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

#include <cstdint>

using torch::headeronly::ScalarType;
using torch::stable::Tensor;
// --8<-- [end:target]

namespace {

bool is_floating(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::Float || t == ScalarType::Double;
}

// --8<-- [start:checks]
// The contract, checked before any memory is touched. STD_TORCH_CHECK throws a std::runtime_error; the shim turns
// it into the RuntimeError Python sees, with this message.
void check_mm16_inputs(const Tensor& a, const Tensor& b) {
  STD_TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "mm16: expected 2-D matrices, got a with ", a.dim(),
                  " dimension(s) and b with ", b.dim());
  STD_TORCH_CHECK(a.size(1) == b.size(0), "mm16: a is ", a.size(0), "x", a.size(1), " and b is ", b.size(0), "x",
                  b.size(1), ": a.size(1) must equal b.size(0)");
  STD_TORCH_CHECK(a.scalar_type() == b.scalar_type(), "mm16: a and b must have the same dtype, got ",
                  torch::headeronly::toString(a.scalar_type()), " and ", torch::headeronly::toString(b.scalar_type()));
  STD_TORCH_CHECK(is_floating(a.scalar_type()), "mm16: expected floating-point inputs (float16, float32, float64), got ",
                  torch::headeronly::toString(a.scalar_type()));
}
// --8<-- [end:checks]

ScalarType mm16_out_dtype(ScalarType in) {
  return in == ScalarType::Half ? ScalarType::Float : in;
}

// c = a @ b with strides (a transposed or sliced input is read where it lies), accumulating in Acc.
template <typename In, typename Acc>
void mm16_loops(const Tensor& a, const Tensor& b, Tensor& c) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  const In* pa = a.const_data_ptr<In>();
  const In* pb = b.const_data_ptr<In>();
  Acc* pc = c.mutable_data_ptr<Acc>();
  const int64_t sa0 = a.stride(0), sa1 = a.stride(1), sb0 = b.stride(0), sb1 = b.stride(1);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      Acc sum = 0;
      for (int64_t k = 0; k < K; ++k)
        sum += static_cast<Acc>(pa[i * sa0 + k * sa1]) * static_cast<Acc>(pb[k * sb0 + j * sb1]);
      pc[i * N + j] = sum;  // c is freshly allocated, hence contiguous
    }
}

}  // namespace

// --8<-- [start:cpu]
Tensor mm16_cpu(const Tensor& a, const Tensor& b) {
  check_mm16_inputs(a, b);
  STD_TORCH_CHECK(a.is_cpu() && b.is_cpu(), "mm16_cpu: expected CPU tensors");
  // TODO(student) 1: allocate c with torch::stable::new_empty(a, {M, N}, mm16_out_dtype(a.scalar_type())) and fill
  //   it with mm16_loops<In, Acc>: Half inputs accumulate in float (torch::headeronly::Half, float), Float in float,
  //   Double in double. Then delete the line below.
  STD_TORCH_CHECK(false, "TODO(student) in mm16_stable.cpp: mm16_cpu does not compute c yet");
  (void)b;
  return a;
}
// --8<-- [end:cpu]

// --8<-- [start:library]
// TODO(student) 2: define the schema "mm16(Tensor a, Tensor b) -> Tensor" in a STABLE_TORCH_LIBRARY(course, m) block
//   and register mm16_cpu for CPU in a STABLE_TORCH_LIBRARY_IMPL(course, CPU, m) block: m.impl("mm16",
//   TORCH_BOX(&mm16_cpu)). TORCH_BOX turns the typed function into the boxed one the stable ABI passes around.
// --8<-- [end:library]
