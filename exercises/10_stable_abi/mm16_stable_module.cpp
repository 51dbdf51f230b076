// The Python face of the library: an empty extension module `mm16_stable._C`, so that `import mm16_stable` loads
// the shared library (and its STABLE_TORCH_LIBRARY blocks register course::mm16) the way any Python package loads
// its extension. Only the limited C API is used: the wheel is tagged abi3 and one build serves CPython 3.9 and later.
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x03090000
#endif
#include <Python.h>

static struct PyModuleDef mm16_stable_module = {
    PyModuleDef_HEAD_INIT, "_C", "course::mm16 on the LibTorch stable ABI (the operators live in torch.ops.course)",
    -1, NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__C(void) {
  return PyModule_Create(&mm16_stable_module);
}
