// The raw-pointer side of mm16: no tensors, no torch headers. mm16_cuda.cpp turns tensors into these arguments.
#pragma once
#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

// c[M,N] (float32, row-major) = a[M,K] (float16, row-major) @ b[K,N] (float16, row-major), computed with tensor
// cores (WMMA 16x16x16 fragments, float32 accumulator). Any M, N, K: partial edge tiles are padded with zeros.
// Enqueues the kernel on `stream` and returns; the caller checks mm16_wmma_blocks(M, N) >= 0 before, and the
// launch after.
void mm16_wmma_launch(const __half* a, const __half* b, float* c, int64_t M, int64_t N, int64_t K,
                      cudaStream_t stream);

// The grid: one 32-thread block (one warp) per 16x16 tile of c, numbered row by row along gridDim.x, which holds
// up to 2^31 - 1 blocks. gridDim.y and gridDim.z hold only 65,535: a grid with the tile rows on y could not launch
// for M above 65,535 * 16 = 1,048,560 (a 2,000,000 x 16 float16 matrix is only 64 MB).
constexpr int64_t kMm16Tile = 16;
constexpr int64_t kMm16MaxBlocks = 2147483647;  // 2^31 - 1: gridDim.x's limit

// The number of blocks for an M x N output (0 when it is empty), or -1 when one grid cannot hold them.
inline int64_t mm16_wmma_blocks(int64_t M, int64_t N) {
  const int64_t tiles_m = (M + kMm16Tile - 1) / kMm16Tile, tiles_n = (N + kMm16Tile - 1) / kMm16Tile;
  if (tiles_m <= 0 || tiles_n <= 0) return 0;
  return tiles_m > kMm16MaxBlocks / tiles_n ? -1 : tiles_m * tiles_n;
}

// The first row and column of the tile of c that block number `block` computes (N: the number of columns of c).
struct Mm16Tile {
  int64_t row0, col0;
};
__host__ __device__ inline Mm16Tile mm16_wmma_tile(int64_t block, int64_t N) {
  const int64_t tiles_n = (N + kMm16Tile - 1) / kMm16Tile;
  return {block / tiles_n * kMm16Tile, block % tiles_n * kMm16Tile};
}
