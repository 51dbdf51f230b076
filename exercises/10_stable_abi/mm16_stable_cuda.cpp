// Exercise 10_stable_abi, part 2: the CUDA launcher of course::mm16 on the stable ABI. The
// kernel (mm16_kernel.cu, as in 04_cuda) sees raw pointers and a stream; this file finds both through the shim.
#ifndef TORCH_TARGET_VERSION
#define TORCH_TARGET_VERSION (((0ULL + 2) << 56) | ((0ULL + 10) << 48))
#endif

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/accelerator.h>
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/ops.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/core/ScalarType.h>
#include <torch/headeronly/util/Exception.h>

#include <cuda_runtime_api.h>

#include "mm16_kernel.h"

using torch::headeronly::ScalarType;
using torch::stable::Tensor;

namespace {

// --8<-- [start:stream]
// PyTorch's current stream on `device`, as a cudaStream_t. stable::Stream::nativeHandle() would say it in one call,
// but it needs a 2.13 target; the shim's CUDA entry point has been there since before 2.10.
cudaStream_t current_cuda_stream(int32_t device) {
  // TODO(student) 4: ask the shim: aoti_torch_get_current_cuda_stream(device, &stream) fills a void*; wrap the call
  //   in TORCH_ERROR_CODE_CHECK and return the pointer as a cudaStream_t. Then delete the line below.
  (void)device;
  return nullptr;
}
// --8<-- [end:stream]

}  // namespace

// --8<-- [start:cuda]
Tensor mm16_cuda(const Tensor& a, const Tensor& b) {
  STD_TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "mm16: expected 2-D matrices, got a with ", a.dim(),
                  " dimension(s) and b with ", b.dim());
  STD_TORCH_CHECK(a.size(1) == b.size(0), "mm16: a is ", a.size(0), "x", a.size(1), " and b is ", b.size(0), "x",
                  b.size(1), ": a.size(1) must equal b.size(0)");
  STD_TORCH_CHECK(a.scalar_type() == ScalarType::Half && b.scalar_type() == ScalarType::Half,
                  "mm16 on CUDA: expected float16 inputs (tensor cores), got ",
                  torch::headeronly::toString(a.scalar_type()), " and ", torch::headeronly::toString(b.scalar_type()));
  STD_TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.get_device_index() == b.get_device_index(),
                  "mm16: a and b must be on the same CUDA device, got devices ", a.get_device_index(), " and ",
                  b.get_device_index());

  // TODO(student) 3: make the inputs' device current for what follows with a
  //   torch::stable::accelerator::DeviceGuard, take contiguous copies (torch::stable::contiguous), allocate the
  //   float32 output with torch::stable::new_empty, return it zeroed when K == 0, and otherwise launch
  //   mm16_wmma_launch on current_cuda_stream(a.get_device_index()) (never the default stream: the caller's ordering
  //   and CUDA-graph capture depend on it). Check the launch with cudaGetLastError. Then delete the line below.
  STD_TORCH_CHECK(false, "TODO(student) in mm16_stable_cuda.cpp: mm16_cuda does not launch the kernel yet");
  return a;
}
// --8<-- [end:cuda]

STABLE_TORCH_LIBRARY_IMPL(course, CUDA, m) {
  m.impl("mm16", TORCH_BOX(&mm16_cuda));
}
