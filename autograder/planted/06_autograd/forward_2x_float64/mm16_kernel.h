// The raw-pointer side of mm16: no tensors, no torch headers. mm16_cuda.cpp turns tensors into these arguments.
#pragma once
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

// c[M,N] (float32, row-major) = a[M,K] (float16, row-major) @ b[K,N] (float16, row-major), computed with tensor
// cores (WMMA 16x16x16 fragments, float32 accumulator). Any M, N, K: partial edge tiles are padded with zeros.
// Enqueues the kernel on `stream` and returns; the caller checks the launch.
void mm16_wmma_launch(const __half* a, const __half* b, float* c, int64_t M, int64_t N, int64_t K,
                      cudaStream_t stream);
