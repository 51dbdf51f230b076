// Reference solution of exercise 02_schema.
#include <torch/library.h>

// --8<-- [start:library]
TORCH_LIBRARY(course, m) {
  // A plain functional operator: two tensors in, a new tensor out.
  m.def("mm16(Tensor a, Tensor b) -> Tensor");
  // float is a C++ double; Tensor? is std::optional<at::Tensor>; arguments after * are keyword-only.
  m.def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor");
  // (a!) says: `out` is written in place, and the returned tensor is `out` itself.
  m.def("mm16_out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)");
}
// --8<-- [end:library]
