// Exercise 02_schema: declare the schemas of mm16 and its two siblings.
// Chapter: chapters/02_schema.md. Grade it with: ./course grade 02_schema
//
// A schema is the operator's signature in PyTorch's own language. The dispatcher, torch.compile, autograd and
// every tool that inspects operators read it; none of them reads your C++.
#include <torch/library.h>

// --8<-- [start:library]
TORCH_LIBRARY(course, m) {
  // TODO(student): declare course::mm16, a matrix product of a and b that returns a new tensor.
  //   m.def("...");

  // TODO(student): declare course::mm16_scaled: the same inputs, then keyword-only arguments
  //   alpha, a double that defaults to 1.0, and bias, an optional tensor that defaults to None.

  // TODO(student): declare course::mm16_out: a and b, then a keyword-only tensor `out` that the operator
  //   writes into and returns (an alias annotation tells the dispatcher so).
}
// --8<-- [end:library]
