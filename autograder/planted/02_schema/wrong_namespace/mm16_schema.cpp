// Planted: right schemas, wrong namespace.
#include <torch/library.h>

TORCH_LIBRARY(mylib, m) {
  m.def("mm16(Tensor a, Tensor b) -> Tensor");
  m.def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor");
  m.def("mm16_out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)");
}
