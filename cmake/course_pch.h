// Precompiled for the judge's builds of submissions: the headers every C++ source of the course starts with.
// The judge passes `-include` of this file only when its .gch (built by CMake with the judge's exact flags) exists;
// a submission's own #include of the same headers is then free (their include guards).

#include <torch/library.h>
#include <ATen/core/Tensor.h>
