// Reference solution of exercise 02_schema.
#include <torch/library.h>

// --8<-- [start:library]
TORCH_LIBRARY(course, m) {
  // A plain functional operator: two tensors in, a new tensor out. The tag promises the PT2 contract (a fake kernel
  // for every real one, correct schema, opcheck passes) that the later chapters keep.
  m.def("mm16(Tensor a, Tensor b) -> Tensor", {at::Tag::pt2_compliant_tag});
  // float is a C++ double; Tensor? is std::optional<at::Tensor>; arguments after * are keyword-only.
  m.def("mm16_scaled(Tensor a, Tensor b, *, float alpha=1.0, Tensor? bias=None) -> Tensor",
        {at::Tag::pt2_compliant_tag});
  // The out variant, as ATen spells it (aten::mm.out): the overload `out` of mm16. (a!) says `out` is written in
  // place and the returned tensor is `out` itself; Tag.out tells PyTorch's tooling that this is an out variant.
  m.def("mm16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)", {at::Tag::out, at::Tag::pt2_compliant_tag});
}
// --8<-- [end:library]
