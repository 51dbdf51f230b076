// Reference solution of exercise 05_fake, part 3: the Meta kernel of course::mm16. It computes the output's
// metadata (shape, dtype, strides, device) and never reads data: torch.compile runs it on fake tensors.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

// --8<-- [start:meta]
at::Tensor mm16_meta(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "mm16: expected 2-D matrices, got a with ", a.dim(),
              " dimension(s) and b with ", b.dim());
  // Sizes may be symbolic under torch.compile: sym_size() keeps them so (size() would throw). TORCH_SYM_CHECK takes
  // the SymBool that sym_eq builds: a size known only when the program runs (data-dependent) is checked then.
  TORCH_SYM_CHECK(a.sym_size(1).sym_eq(b.sym_size(0)), "mm16: a.size(1) must equal b.size(0), got ", a.sym_size(1),
                  " and ", b.sym_size(0));
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "mm16: a and b must have the same dtype, got ",
              a.scalar_type(), " and ", b.scalar_type());
  TORCH_CHECK(at::isFloatingType(a.scalar_type()), "mm16: expected floating-point inputs, got ", a.scalar_type());
  const at::ScalarType out = a.scalar_type() == at::kHalf ? at::kFloat : a.scalar_type();
  // Same shape, dtype and (contiguous, row-major) strides as the real kernels' output, on a's (meta) device.
  return at::empty_symint({a.sym_size(0), b.sym_size(1)}, a.options().dtype(out));
}
// --8<-- [end:meta]

// --8<-- [start:library]
TORCH_LIBRARY_IMPL(course, Meta, m) {
  m.impl("mm16", &mm16_meta);
}
// --8<-- [end:library]
