// The tensor-core kernel of mm16 and its launcher. Torch headers stay out of this file: it sees raw pointers,
// sizes and a stream, and compiles in a few seconds.
#include <mma.h>

#include "mm16_kernel.h"

namespace {
constexpr int kTile = 16;  // WMMA fragment edge: a 16x16 tile of c from 16x16 tiles of a and b

// One warp (32 threads) computes one 16x16 tile of c. For each step along K it stages a 16x16 tile of a and of b
// in shared memory, zero-filling what lies outside the matrices (edge tiles), then multiplies them with WMMA.
__global__ void mm16_wmma_kernel(const __half* __restrict__ a, const __half* __restrict__ b, float* __restrict__ c,
                                 int64_t M, int64_t N, int64_t K) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
  using namespace nvcuda;
  __shared__ __half sa[kTile * kTile];
  __shared__ __half sb[kTile * kTile];
  __shared__ float sc[kTile * kTile];
  const int64_t row0 = int64_t(blockIdx.y) * kTile, col0 = int64_t(blockIdx.x) * kTile;
  const int lane = threadIdx.x;

  wmma::fragment<wmma::accumulator, kTile, kTile, kTile, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int64_t k0 = 0; k0 < K; k0 += kTile) {
    for (int e = lane; e < kTile * kTile; e += 32) {
      const int r = e / kTile, q = e % kTile;
      const int64_t ar = row0 + r, ak = k0 + q, bk = k0 + r, bc = col0 + q;
      sa[e] = (ar < M && ak < K) ? a[ar * K + ak] : __float2half(0.0f);
      sb[e] = (bk < K && bc < N) ? b[bk * N + bc] : __float2half(0.0f);
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, kTile, kTile, kTile, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, kTile, kTile, kTile, __half, wmma::row_major> fb;
    wmma::load_matrix_sync(fa, sa, kTile);
    wmma::load_matrix_sync(fb, sb, kTile);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncwarp();
  }
  wmma::store_matrix_sync(sc, acc, kTile, wmma::mem_row_major);
  __syncwarp();
  for (int e = lane; e < kTile * kTile; e += 32) {
    const int64_t r = row0 + e / kTile, q = col0 + e % kTile;
    if (r < M && q < N) c[r * N + q] = sc[e];
  }
#endif
}
}  // namespace

void mm16_wmma_launch(const __half* a, const __half* b, float* c, int64_t M, int64_t N, int64_t K,
                      cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile), static_cast<unsigned>((M + kTile - 1) / kTile));
  // The stream argument is the whole point: PyTorch's current stream, never 0 (the legacy default stream).
  mm16_wmma_kernel<<<grid, 32, 0, stream>>>(a, b, c, M, N, K);
}
