// Exercise 02_schema: declare the schemas of mm16, its sibling mm16_scaled and its out variant mm16.out.
// Chapter: chapters/02_schema.md. Grade it with: ./course grade 02_schema
//
// A schema is the operator's signature in PyTorch's own language. The dispatcher, torch.compile, autograd and
// every tool that inspects operators read it; none of them reads your C++.
#include <torch/library.h>

// --8<-- [start:library]
TORCH_LIBRARY(course, m) {
  // TODO(student): declare course::mm16, a matrix product of a and b that returns a new tensor, tagged
  //   at::Tag::pt2_compliant_tag (m.def's second argument is the list of tags).
  //   m.def("...", {at::Tag::pt2_compliant_tag});

  // TODO(student): declare course::mm16_scaled: the same inputs, then keyword-only arguments
  //   alpha, a double that defaults to 1.0, and bias, an optional tensor that defaults to None. Tag it as mm16.

  // TODO(student): declare the out variant as PyTorch does (aten::mm.out): the overload `out` of mm16, with a and
  //   b, then a keyword-only tensor `out` that the operator writes into and returns (an alias annotation tells the
  //   dispatcher so); tagged at::Tag::out and at::Tag::pt2_compliant_tag.
}
// --8<-- [end:library]
