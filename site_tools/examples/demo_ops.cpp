// Operators of their own (not mm16) for two choices chapter 5 shows a fake kernel's author making; the course
// builds them as build/examples/libcourse_demo_ops.so.
//   symdemo::mm_check, symdemo::mm_sym_check: the same Meta kernel, its shape check written with TORCH_CHECK on a
//     comparison of SymInts, or with TORCH_SYM_CHECK and sym_eq (site_tools/examples/sym_check.py runs both);
//   pyfake::mm, pyfake_bare::mm: a CPU kernel whose fake kernel lives in Python, declared with and without
//     m.set_python_module (site_tools/examples/python_module.py).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <torch/library.h>

namespace {
at::Tensor mm_cpu(const at::Tensor& a, const at::Tensor& b) {
  return at::mm(a, b);
}

// --8<-- [start:checks]
at::Tensor mm_meta_check(const at::Tensor& a, const at::Tensor& b) {
  // a.sym_size(1) == b.sym_size(0) is a c10::SymBool; TORCH_CHECK needs a bool, so it asks for the answer now
  TORCH_CHECK(a.sym_size(1) == b.sym_size(0), "mm: a.size(1) must equal b.size(0)");
  return at::empty_symint({a.sym_size(0), b.sym_size(1)}, a.options());
}

at::Tensor mm_meta_sym_check(const at::Tensor& a, const at::Tensor& b) {
  // TORCH_SYM_CHECK takes the SymBool itself (sym_eq builds it): where the answer is not known yet, it is checked
  // when the compiled program runs
  TORCH_SYM_CHECK(a.sym_size(1).sym_eq(b.sym_size(0)), "mm: a.size(1) must equal b.size(0)");
  return at::empty_symint({a.sym_size(0), b.sym_size(1)}, a.options());
}
// --8<-- [end:checks]
}  // namespace

TORCH_LIBRARY(symdemo, m) {
  m.def("mm_check(Tensor a, Tensor b) -> Tensor");
  m.def("mm_sym_check(Tensor a, Tensor b) -> Tensor");
}
TORCH_LIBRARY_IMPL(symdemo, CPU, m) {
  m.impl("mm_check", &mm_cpu);
  m.impl("mm_sym_check", &mm_cpu);
}
TORCH_LIBRARY_IMPL(symdemo, Meta, m) {
  m.impl("mm_check", &mm_meta_check);
  m.impl("mm_sym_check", &mm_meta_sym_check);
}

// --8<-- [start:python_module]
TORCH_LIBRARY(pyfake, m) {
  // the fake kernels of the operators defined below are registered in Python, by `import pyfake_fakes`
  m.set_python_module("pyfake_fakes");
  m.def("mm(Tensor a, Tensor b) -> Tensor");
  m.def("mm_misplaced(Tensor a, Tensor b) -> Tensor");  // its fake kernel is registered from another module
}
// --8<-- [end:python_module]
TORCH_LIBRARY(pyfake_bare, m) {  // the same operator without set_python_module
  m.def("mm(Tensor a, Tensor b) -> Tensor");
}
TORCH_LIBRARY_IMPL(pyfake, CPU, m) {
  m.impl("mm", &mm_cpu);
  m.impl("mm_misplaced", &mm_cpu);
}
TORCH_LIBRARY_IMPL(pyfake_bare, CPU, m) {
  m.impl("mm", &mm_cpu);
}
