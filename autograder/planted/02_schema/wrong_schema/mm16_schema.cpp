// Planted: mm16 is right; alpha is positional and out lacks its (a!) annotation.
#include <torch/library.h>

TORCH_LIBRARY(course, m) {
  m.def("mm16(Tensor a, Tensor b) -> Tensor");
  m.def("mm16_scaled(Tensor a, Tensor b, float alpha=1.0, Tensor? bias=None) -> Tensor");
  m.def("mm16_out(Tensor a, Tensor b, *, Tensor out) -> Tensor");
}
