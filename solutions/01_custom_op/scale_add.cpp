// Reference solution of exercise 01_custom_op.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <cstdint>

// The raw-pointer world (given): n floats in, n floats out. It knows nothing of devices, dtypes, shapes or
// strides; it trusts its caller completely.
static void scale_add_kernel(const float* x, const float* y, float* out, int64_t n, float alpha) {
  for (int64_t i = 0; i < n; ++i) out[i] = alpha * x[i] + y[i];
}

// --8<-- [start:wrapper]
// The tensor world: out = alpha * x + y for two float32 CPU tensors of the same shape.
at::Tensor scale_add_cpu(const at::Tensor& x, const at::Tensor& y, double alpha) {
  // Everything the raw kernel takes on trust is checked here, so a bad call raises a Python RuntimeError.
  TORCH_CHECK(x.device().is_cpu() && y.device().is_cpu(), "course::scale_add: expected CPU tensors, got x on ",
              x.device(), " and y on ", y.device());
  TORCH_CHECK(x.scalar_type() == at::kFloat && y.scalar_type() == at::kFloat,
              "course::scale_add: expected float32 tensors, got ", x.scalar_type(), " and ", y.scalar_type());
  TORCH_CHECK(x.sizes() == y.sizes(), "course::scale_add: x and y must have the same shape, got ", x.sizes(),
              " and ", y.sizes());
  // Strides: a transposed or sliced view is not a dense buffer. contiguous() copies only when it must.
  const at::Tensor xc = x.contiguous(), yc = y.contiguous();
  at::Tensor out = at::empty_like(xc);  // same shape, dtype and device; dense
  scale_add_kernel(xc.data_ptr<float>(), yc.data_ptr<float>(), out.data_ptr<float>(), xc.numel(),
                   static_cast<float>(alpha));
  return out;
}
// --8<-- [end:wrapper]

// --8<-- [start:library]
TORCH_LIBRARY(course, m) {
  // float in a schema is a C++ double; the dispatcher converts Python floats to it.
  m.def("scale_add(Tensor x, Tensor y, float alpha) -> Tensor");
}
// --8<-- [end:library]

// --8<-- [start:impl_cpu]
// CPU tensors reach scale_add_cpu; a CUDA tensor finds no kernel and the dispatcher says so.
TORCH_LIBRARY_IMPL(course, CPU, m) { m.impl("scale_add", &scale_add_cpu); }
// --8<-- [end:impl_cpu]

// Given (chapter 5 explains it): a Meta kernel computes only the output's shape, dtype and strides. torch.compile
// traces the operator with it instead of running the real kernel.
at::Tensor scale_add_meta(const at::Tensor& x, const at::Tensor& y, double alpha) {
  TORCH_CHECK(x.sizes() == y.sizes(), "course::scale_add: x and y must have the same shape");
  return at::empty_like(x, x.options().memory_format(at::MemoryFormat::Contiguous));
}
TORCH_LIBRARY_IMPL(course, Meta, m) { m.impl("scale_add", &scale_add_meta); }
