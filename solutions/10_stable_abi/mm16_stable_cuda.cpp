// Reference solution of exercise 10_stable_abi, part 2: the CUDA launcher of course::mm16 on the stable ABI. The
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
  void* stream = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(device, &stream));
  return static_cast<cudaStream_t>(stream);
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

  // The inputs' device is current for the allocation, the stream lookup and the launch; restored on return.
  const torch::stable::accelerator::DeviceGuard guard(a.get_device_index());
  const Tensor ac = torch::stable::contiguous(a), bc = torch::stable::contiguous(b);
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  STD_TORCH_CHECK(mm16_wmma_blocks(M, N) >= 0, "mm16 on CUDA: a ", M, "x", N,
                  " output has more 16x16 tiles than one grid can launch (", kMm16MaxBlocks, ")");
  Tensor c = torch::stable::new_empty(a, {M, N}, ScalarType::Float);
  if (K == 0) return torch::stable::zero_(c);  // an empty sum is zero

  mm16_wmma_launch(static_cast<const __half*>(ac.const_data_ptr()), static_cast<const __half*>(bc.const_data_ptr()),
                   static_cast<float*>(c.mutable_data_ptr()), M, N, K, current_cuda_stream(a.get_device_index()));
  const cudaError_t launched = cudaGetLastError();  // a bad launch configuration raises here, without a device sync
  STD_TORCH_CHECK(launched == cudaSuccess, "mm16 on CUDA: the kernel did not launch: ", cudaGetErrorString(launched));
  return c;
}
// --8<-- [end:cuda]

STABLE_TORCH_LIBRARY_IMPL(course, CUDA, m) {
  m.impl("mm16", TORCH_BOX(&mm16_cuda));
}
