// The tensor-core kernel of mm16 and its launcher. Torch headers stay out of this file: it sees raw pointers,
// sizes and a stream, and compiles in a few seconds.
#include <mma.h>

#include "mm16_kernel.h"

// WMMA needs tensor cores (compute capability 7.0 and later). A device pass for an older GPU stops here: with its
// body compiled away, the kernel would launch, do nothing and leave c unwritten, and no call would ever fail.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "mm16_wmma_kernel uses tensor cores (WMMA): build it for compute capability 7.0 or newer (sm_70+)"
#endif

namespace {
constexpr int kTile = 16;  // WMMA fragment edge: a 16x16 tile of c from 16x16 tiles of a and b

// One warp (32 threads) computes one 16x16 tile of c. For each step along K it stages a 16x16 tile of a and of b
// in shared memory, zero-filling what lies outside the matrices (edge tiles), then multiplies them with WMMA.
__global__ void mm16_wmma_kernel(const __half* __restrict__ a, const __half* __restrict__ b, float* __restrict__ c,
                                 int64_t M, int64_t N, int64_t K) {
  using namespace nvcuda;
  // load_matrix_sync and store_matrix_sync need 256-bit (32-byte) aligned pointers. A __half array is only
  // guaranteed 2-byte alignment (a float array 4): __align__(32) makes the tiles' alignment a promise, not luck.
  __shared__ __align__(32) __half sa[kTile * kTile];
  __shared__ __align__(32) __half sb[kTile * kTile];
  __shared__ __align__(32) float sc[kTile * kTile];
  const Mm16Tile tile = mm16_wmma_tile(blockIdx.x, N);  // one block per tile, along gridDim.x (mm16_kernel.h)
  const int64_t row0 = tile.row0, col0 = tile.col0;
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
}
}  // namespace

void mm16_wmma_launch(const __half* a, const __half* b, float* c, int64_t M, int64_t N, int64_t K,
                      cudaStream_t stream) {
  // One 32-thread block per 16x16 tile of c, all along gridDim.x: no M or N that fits in memory is refused.
  const int64_t blocks = mm16_wmma_blocks(M, N);
  if (blocks <= 0) return;  // 0: an empty output; -1: refused by the caller's check (mm16_cuda) before this
  const dim3 grid(static_cast<unsigned>(blocks));  // gridDim.x = blocks, gridDim.y = gridDim.z = 1
  // The stream argument is the whole point: PyTorch's current stream, never 0 (the legacy default stream).
  mm16_wmma_kernel<<<grid, 32, 0, stream>>>(a, b, c, M, N, K);
}
