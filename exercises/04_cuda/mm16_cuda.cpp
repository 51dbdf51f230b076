// Exercise 04_cuda, part 2: the tensor side of the CUDA kernel. The kernel itself lives in mm16_kernel.cu.
// Chapter: chapters/04_cuda.md. Grade it with: ./course grade 04_cuda
#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <torch/library.h>

#include "mm16_kernel.h"

// --8<-- [start:cuda]
at::Tensor mm16_cuda(const at::Tensor& a, const at::Tensor& b) {
  // TODO(student) 1: TORCH_CHECK the contract: 2-D inputs, a.size(1) == b.size(0), both float16 (the tensor cores
  //   take half precision), both on the same CUDA device.

  // TODO(student) 2: make the inputs' device current (c10::cuda::CUDAGuard), make the inputs contiguous (the kernel
  //   reads row-major data) and allocate the float32 output on that device with a.options().dtype(at::kFloat).

  // TODO(student) 3: TORCH_CHECK(mm16_wmma_blocks(M, N) >= 0, ...) (an output with more tiles than one grid can
  //   launch), then call mm16_wmma_launch with the data pointers (reinterpret_cast<const __half*> of
  //   const_data_ptr<at::Half>()) on at::cuda::getCurrentCUDAStream(), then C10_CUDA_KERNEL_LAUNCH_CHECK().
  //   No cudaDeviceSynchronize: the caller decides when to wait. Then delete the line below.
  TORCH_CHECK(false, "TODO(student) in mm16_cuda.cpp: mm16_cuda is not written yet");
  (void)b;
  return a;
}
// --8<-- [end:cuda]

// --8<-- [start:library]
// TODO(student) 6: register mm16_cuda for the CUDA dispatch key, as mm16_cpu is for CPU in mm16_cpu.cpp:
//   TORCH_LIBRARY_IMPL(course, CUDA, m) { m.impl("mm16", &mm16_cuda); }
// --8<-- [end:library]
