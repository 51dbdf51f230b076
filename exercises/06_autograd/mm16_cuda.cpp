// Exercise 06_autograd, part 2 (given, your 04_cuda solution): the tensor side of the CUDA kernel. The kernel itself lives in
// mm16_kernel.cu and sees only raw pointers and a stream.
#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <torch/library.h>

#include "mm16_kernel.h"

at::Tensor mm16_cuda(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, "mm16: expected 2-D matrices, got a with ", a.dim(),
              " dimension(s) and b with ", b.dim());
  TORCH_CHECK(a.size(1) == b.size(0), "mm16: a is ", a.size(0), "x", a.size(1), " and b is ", b.size(0), "x",
              b.size(1), ": a.size(1) must equal b.size(0)");
  TORCH_CHECK(a.scalar_type() == at::kHalf && b.scalar_type() == at::kHalf,
              "mm16 on CUDA: expected float16 inputs (tensor cores), got ", a.scalar_type(), " and ",
              b.scalar_type());
  TORCH_CHECK(a.is_cuda() && b.is_cuda() && a.device() == b.device(),
              "mm16: a and b must be on the same CUDA device, got ", a.device(), " and ", b.device());

  // Make the inputs' device current for the allocation and the launch; restored when `guard` goes away.
  const c10::cuda::CUDAGuard guard(a.device());
  // The kernel reads row-major data: a transposed or sliced input is copied into that layout first.
  const at::Tensor ac = a.contiguous(), bc = b.contiguous();
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  // One block per 16x16 tile of c, along gridDim.x (mm16_kernel.h): only an output of more than 2^31 - 1 tiles
  // (over 2 TiB of float32) cannot be launched, and it is refused here, not left to fail in the launch.
  TORCH_CHECK(mm16_wmma_blocks(M, N) >= 0, "mm16 on CUDA: a ", M, "x", N, " output has more 16x16 tiles than one ",
              "grid can launch (", kMm16MaxBlocks, ")");
  at::Tensor c = at::empty({M, N}, a.options().dtype(at::kFloat));
  if (K == 0) return c.zero_();  // an empty sum is zero (zero_ runs on the current stream too)

  // PyTorch's current stream for this device: the caller's ordering (and CUDA-graph capture) then holds.
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  mm16_wmma_launch(reinterpret_cast<const __half*>(ac.const_data_ptr<at::Half>()),
                   reinterpret_cast<const __half*>(bc.const_data_ptr<at::Half>()), c.mutable_data_ptr<float>(), M,
                   N, K, stream);
  C10_CUDA_KERNEL_LAUNCH_CHECK();  // a bad launch configuration raises here; no device-wide synchronisation
  return c;
}

TORCH_LIBRARY_IMPL(course, CUDA, m) {
  m.impl("mm16", &mm16_cuda);
}
