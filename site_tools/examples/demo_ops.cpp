// Operators of their own (not mm16) for what chapters 3 and 5 show about checks and fake kernels; the course builds
// them as build/examples/libcourse_demo_ops.so.
//   symdemo::mm_size, symdemo::mm_check, symdemo::mm_sym_check: the same Meta kernel, its shape check written on
//     size(), with TORCH_CHECK on a comparison of SymInts, or with TORCH_SYM_CHECK and sym_eq
//     (site_tools/examples/sym_check.py runs the three);
//   pyfake::mm, pyfake_bare::mm: a CPU kernel whose fake kernel lives in Python, declared with and without
//     m.set_python_module (site_tools/examples/python_module.py);
//   checks::fail: each of chapter 3's TORCH_CHECK variants, failing (site_tools/examples/check_family.py);
//   overhead::alloc_cpp: one allocation and nothing else, the C++ row of chapter 11's per-call overhead table
//     (site_tools/examples/python_op_overhead.py).
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <torch/library.h>

namespace {
at::Tensor mm_cpu(const at::Tensor& a, const at::Tensor& b) {
  return at::mm(a, b);
}

// --8<-- [start:checks]
at::Tensor mm_meta_size(const at::Tensor& a, const at::Tensor& b) {
  // size() returns a plain int64_t: asked of a symbolic size, it must fix it to one value
  TORCH_CHECK(a.size(1) == b.size(0), "mm: a.size(1) must equal b.size(0)");
  return at::empty_symint({a.sym_size(0), b.sym_size(1)}, a.options());
}

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

// --8<-- [start:family]
// Each variant of TORCH_CHECK, failing: `kind` names it.
void fail(c10::string_view kind) {
  TORCH_CHECK(kind != "TORCH_CHECK", "checks::fail: TORCH_CHECK");
  TORCH_CHECK_VALUE(kind != "TORCH_CHECK_VALUE", "checks::fail: TORCH_CHECK_VALUE");
  TORCH_CHECK_TYPE(kind != "TORCH_CHECK_TYPE", "checks::fail: TORCH_CHECK_TYPE");
  TORCH_CHECK_INDEX(kind != "TORCH_CHECK_INDEX", "checks::fail: TORCH_CHECK_INDEX");
  TORCH_CHECK_NOT_IMPLEMENTED(kind != "TORCH_CHECK_NOT_IMPLEMENTED", "checks::fail: TORCH_CHECK_NOT_IMPLEMENTED");
  TORCH_INTERNAL_ASSERT(kind != "TORCH_INTERNAL_ASSERT", "checks::fail: TORCH_INTERNAL_ASSERT");
}
// --8<-- [end:family]
// the body chapter 11 times four ways: the output's allocation, no kernel
at::Tensor alloc_cpp(const at::Tensor& a, const at::Tensor& b) {
  return at::empty({a.size(0), b.size(1)}, a.options().dtype(at::kFloat));
}
}  // namespace

TORCH_LIBRARY(symdemo, m) {
  m.def("mm_check(Tensor a, Tensor b) -> Tensor");
  m.def("mm_sym_check(Tensor a, Tensor b) -> Tensor");
  m.def("mm_size(Tensor a, Tensor b) -> Tensor");
}
TORCH_LIBRARY_IMPL(symdemo, CPU, m) {
  m.impl("mm_check", &mm_cpu);
  m.impl("mm_sym_check", &mm_cpu);
  m.impl("mm_size", &mm_cpu);
}
TORCH_LIBRARY_IMPL(symdemo, Meta, m) {
  m.impl("mm_check", &mm_meta_check);
  m.impl("mm_sym_check", &mm_meta_sym_check);
  m.impl("mm_size", &mm_meta_size);
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

TORCH_LIBRARY(checks, m) {
  m.def("fail(str kind) -> ()", &fail);  // no tensor argument: one kernel for every dispatch key
}

TORCH_LIBRARY(overhead, m) {
  m.def("alloc_cpp(Tensor a, Tensor b) -> Tensor");
}
TORCH_LIBRARY_IMPL(overhead, CompositeExplicitAutograd, m) {
  m.impl("alloc_cpp", &alloc_cpp);
}
