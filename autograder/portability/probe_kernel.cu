// Chapter 9's probe: one small kernel, built for several target sets (cmake/OperatorsUnderTest.cmake) and, per
// grade, with the gencode flags a student's gencode_flags() returns. The worker calls probe_run through ctypes: no
// torch, so the only device code in the process that must load is this library's.
#include <cuda_runtime.h>

__global__ void probe_fill(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.5f * static_cast<float>(i) + 1.0f;
}

// Fills host[0..n) on the device; returns the CUDA error code (0: the kernel ran, so some embedded target loaded).
extern "C" int probe_run(float* host, int n) {
  float* dev = nullptr;
  cudaError_t e = cudaMalloc(&dev, sizeof(float) * n);
  if (e != cudaSuccess) return static_cast<int>(e);
  probe_fill<<<(n + 127) / 128, 128>>>(dev, n);
  e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(host, dev, sizeof(float) * n, cudaMemcpyDeviceToHost);
  cudaFree(dev);
  return static_cast<int>(e);
}

extern "C" const char* probe_error_name(int code) { return cudaGetErrorName(static_cast<cudaError_t>(code)); }
