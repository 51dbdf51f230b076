// Exercise 04_cuda, part 3: the tensor-core kernel of mm16 and its launcher. Torch headers stay out of this file:
// it sees raw pointers, sizes and a stream. Chapter: chapters/04_cuda.md. Grade it with: ./course grade 04_cuda
#include <mma.h>

#include "mm16_kernel.h"

namespace {
constexpr int kTile = 16;  // WMMA fragment edge: a 16x16 tile of c from 16x16 tiles of a and b

// --8<-- [start:kernel]
// One warp (32 threads) computes one 16x16 tile of c: blockIdx.y picks the tile's row, blockIdx.x its column.
__global__ void mm16_wmma_kernel(const __half* __restrict__ a, const __half* __restrict__ b, float* __restrict__ c,
                                 int64_t M, int64_t N, int64_t K) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700
  using namespace nvcuda;
  // TODO(student) 4: for k0 = 0, 16, 32, ... < K:
  //   - the 32 lanes copy a's 16x16 tile (rows blockIdx.y*16.., columns k0..) and b's tile (rows k0.., columns
  //     blockIdx.x*16..) into __shared__ __half arrays, writing 0 for every element outside the matrices;
  //   - wmma::load_matrix_sync both into matrix_a / matrix_b fragments (16, 16, 16, __half, row_major) and
  //     wmma::mma_sync into a float accumulator fragment (wmma::fill_fragment it with 0 first).
  // Then wmma::store_matrix_sync the accumulator to __shared__ float memory and copy the elements with
  // row < M and column < N to c (row-major, leading dimension N).
#endif
}
// --8<-- [end:kernel]
}  // namespace

// --8<-- [start:launcher]
void mm16_wmma_launch(const __half* a, const __half* b, float* c, int64_t M, int64_t N, int64_t K,
                      cudaStream_t stream) {
  // TODO(student) 5: launch mm16_wmma_kernel with one 32-thread block per 16x16 tile of c: a grid of
  //   ceil(N/16) x ceil(M/16) blocks, on `stream` (the 4th <<<>>> argument). Nothing to do when M or N is 0.
  (void)a; (void)b; (void)c; (void)M; (void)N; (void)K; (void)stream;
}
// --8<-- [end:launcher]
