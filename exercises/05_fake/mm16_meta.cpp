// Exercise 05_fake, part 3: the Meta kernel of course::mm16. It computes the output's metadata (shape, dtype,
// strides, device) and never reads data: torch.compile runs it on fake tensors.
// Chapter: chapters/05_fake.md. Grade it with: ./course grade 05_fake
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

// --8<-- [start:meta]
at::Tensor mm16_meta(const at::Tensor& a, const at::Tensor& b) {
  // TODO(student) 1: the same checks as mm16_cpu (2-D, a.size(1) == b.size(0), same floating dtype), but compare
  //   sizes symbolically: under dynamic shapes sizes are symbols and size() throws. Write the size check as
  //   TORCH_SYM_CHECK(a.sym_size(1).sym_eq(b.sym_size(0)), ...), which also works for data-dependent sizes.
  // TODO(student) 2: return at::empty_symint({a.sym_size(0), b.sym_size(1)}, a.options().dtype(out)) where out is
  //   float32 for float16 inputs and the input dtype otherwise: the real kernels' shape, dtype and (row-major)
  //   strides, on a's device (meta). Then delete the line below.
  TORCH_CHECK(false, "TODO(student) in mm16_meta.cpp: mm16_meta does not describe the output yet");
  (void)b;
  return a;
}
// --8<-- [end:meta]

// --8<-- [start:library]
TORCH_LIBRARY_IMPL(course, Meta, m) {
  m.impl("mm16", &mm16_meta);
}
// --8<-- [end:library]
