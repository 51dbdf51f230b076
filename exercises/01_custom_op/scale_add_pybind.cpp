// Given, not graded, not yours to edit: the pybind11 twin of course::scale_add.
// The course builds it once (CMake target scale_add_pybind) as the Python module course_pybind_twin. It computes
// the same alpha * x + y, but Python reaches it through a pybind11 binding instead of PyTorch's dispatcher, and
// the grader shows what torch.compile makes of each (check compile.graph).
// It needs Python's headers and torch's pybind11 type casters, which is why it is not in your scale_add.cpp.
#include <ATen/core/Tensor.h>
#include <ATen/ops/add.h>
#include <torch/csrc/utils/pybind.h>

// --8<-- [start:twin]
// Same computation; the tensor-world details are ATen's here (at::add checks devices, dtypes and shapes).
at::Tensor scale_add_twin(const at::Tensor& x, const at::Tensor& y, double alpha) {
  return at::add(y, x, alpha);  // y + alpha * x
}

// A plain Python extension: Python calls the C++ function directly, without a schema and without the dispatcher.
PYBIND11_MODULE(course_pybind_twin, m) {
  m.def("scale_add", &scale_add_twin, "alpha * x + y (pybind11 binding, invisible to torch.compile)");
}
// --8<-- [end:twin]
