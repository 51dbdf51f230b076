// Exercise 01_custom_op: turn a raw-pointer kernel into a PyTorch operator, course::scale_add.
// Chapter: chapters/01_custom_op.md. Grade it with: ./course grade 01_custom_op
//
// Only <torch/library.h> and the ATen pieces used are included (not <torch/extension.h>): a few seconds per
// build instead of half a minute.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cstdint>

// --8<-- [start:raw_kernel]
// The raw-pointer world (given): n floats in, n floats out. It knows nothing of devices, dtypes, shapes or
// strides; it trusts its caller completely.
static void scale_add_kernel(const float* x, const float* y, float* out, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i) out[i] = alpha * x[i] + y[i];
}
// --8<-- [end:raw_kernel]

// --8<-- [start:wrapper]
// The tensor world: out = alpha * x + y for two float32 CPU tensors of the same shape.
at::Tensor scale_add_cpu(const at::Tensor& x, const at::Tensor& y, double alpha) {
  // TODO(student): check what scale_add_kernel silently assumes, with TORCH_CHECK (an invalid call must raise):
  //   both tensors on the CPU, both float32, the same shape.
  // TODO(student): make the inputs dense (the kernel reads x.numel() floats in order), allocate the output,
  //   call scale_add_kernel with the data pointers, and return the output.
  TORCH_CHECK(false, "course::scale_add is not written yet (exercise 01_custom_op: scale_add_cpu)");
}
// --8<-- [end:wrapper]

// --8<-- [start:library]
TORCH_LIBRARY(course, m) {
  // TODO(student): declare the operator: scale_add takes Tensor x, Tensor y and float alpha, returns a Tensor.
  //   m.def("...");
}
// --8<-- [end:library]

// --8<-- [start:impl_cpu]
// TODO(student): register scale_add_cpu as the CPU kernel of course::scale_add.
// TORCH_LIBRARY_IMPL(course, CPU, m) { ... }
// --8<-- [end:impl_cpu]

// --8<-- [start:impl_meta]
// Given (chapter 5 explains it): a Meta kernel computes only the output's shape, dtype and strides. torch.compile
// traces the operator with it instead of running the real kernel.
at::Tensor scale_add_meta(const at::Tensor& x, const at::Tensor& y, double alpha) {
  TORCH_CHECK(x.sizes() == y.sizes(), "course::scale_add: x and y must have the same shape");
  return at::empty_like(x, x.options().memory_format(at::MemoryFormat::Contiguous));
}
TORCH_LIBRARY_IMPL(course, Meta, m) { m.impl("scale_add", &scale_add_meta); }
// --8<-- [end:impl_meta]
