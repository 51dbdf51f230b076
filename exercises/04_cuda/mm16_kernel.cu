// Exercise 04_cuda, part 3: the tensor-core kernel of mm16 and its launcher. Torch headers stay out of this file:
// it sees raw pointers, sizes and a stream. Chapter: chapters/04_cuda.md. Grade it with: ./course grade 04_cuda
#include <mma.h>

#include "mm16_kernel.h"

// WMMA needs tensor cores (compute capability 7.0 and later). A device pass for an older GPU stops here: with its
// body compiled away, the kernel would launch, do nothing and leave c unwritten, and no call would ever fail.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
#error "mm16_wmma_kernel uses tensor cores (WMMA): build it for compute capability 7.0 or newer (sm_70+)"
#endif

namespace {
constexpr int kTile = 16;  // WMMA fragment edge: a 16x16 tile of c from 16x16 tiles of a and b

// --8<-- [start:kernel]
// One warp (32 threads) computes one 16x16 tile of c: block blockIdx.x computes the tile that starts at
// mm16_wmma_tile(blockIdx.x, N) (mm16_kernel.h: the tiles are numbered row by row along gridDim.x).
__global__ void mm16_wmma_kernel(const __half* __restrict__ a, const __half* __restrict__ b, float* __restrict__ c,
                                 int64_t M, int64_t N, int64_t K) {
  using namespace nvcuda;
  // TODO(student) 4: declare the __shared__ tiles __align__(32) (load_matrix_sync and store_matrix_sync need
  //   32-byte aligned pointers; a __half array is only sure of 2). Then for k0 = 0, 16, 32, ... < K:
  //   - the 32 lanes copy a's 16x16 tile (rows row0.., columns k0..) and b's tile (rows k0.., columns col0..)
  //     into __shared__ __half arrays, writing 0 for every element outside the matrices;
  //   - wmma::load_matrix_sync both into matrix_a / matrix_b fragments (16, 16, 16, __half, row_major) and
  //     wmma::mma_sync into a float accumulator fragment (wmma::fill_fragment it with 0 first).
  // Then wmma::store_matrix_sync the accumulator to __shared__ float memory and copy the elements with
  // row < M and column < N to c (row-major, leading dimension N).
  (void)a; (void)b; (void)c; (void)M; (void)N; (void)K;
}
// --8<-- [end:kernel]
}  // namespace

// --8<-- [start:launcher]
void mm16_wmma_launch(const __half* a, const __half* b, float* c, int64_t M, int64_t N, int64_t K,
                      cudaStream_t stream) {
  // TODO(student) 5: launch mm16_wmma_kernel with one 32-thread block per 16x16 tile of c, all along gridDim.x:
  //   mm16_wmma_blocks(M, N) blocks (gridDim.y would stop at 65,535 tiles), on `stream` (the 4th <<<>>> argument).
  //   Nothing to launch when that is 0 (an empty c) or -1 (refused by mm16_cuda's check).
  (void)a; (void)b; (void)c; (void)M; (void)N; (void)K; (void)stream;
}
// --8<-- [end:launcher]
