// Chapter 4's launch geometry, checked on the CPU (no GPU needed): the grid that mm16_wmma_launch launches and the
// tile each block computes, from the reference's mm16_kernel.h (exercises 04 to 06 carry the same header).
//   * every M x N output is covered by its blocks, each 16x16 tile exactly once;
//   * the blocks lie along gridDim.x (limit 2^31 - 1), so an M or N above 65,535 * 16 = 1,048,560, which a grid
//     with the tile rows on gridDim.y (limit 65,535) could not launch, is launchable;
//   * an output of more tiles than one grid holds gets -1, which mm16_cuda refuses with a TORCH_CHECK.
#include <cstdint>
#include <cstdio>
#include <set>
#include <utility>

#include "mm16_kernel.h"

namespace {
int failures = 0;

void expect(bool ok, const char* what, int64_t M, int64_t N) {
  std::printf("%s  %s (M = %lld, N = %lld)\n", ok ? "ok  " : "FAIL", what, static_cast<long long>(M),
              static_cast<long long>(N));
  failures += !ok;
}

// every block's tile is inside the output, and the tiles are distinct and cover it
bool covers(int64_t M, int64_t N) {
  const int64_t blocks = mm16_wmma_blocks(M, N);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const Mm16Tile t = mm16_wmma_tile(blk, N);
    if (t.row0 < 0 || t.row0 >= M || t.col0 < 0 || t.col0 >= N || t.row0 % 16 || t.col0 % 16) return false;
    if (!seen.insert({t.row0, t.col0}).second) return false;
  }
  return static_cast<int64_t>(seen.size()) == ((M + 15) / 16) * ((N + 15) / 16);
}
}  // namespace

int main() {
  const int64_t kOldLimit = 65535 * 16;  // the largest M a grid with the tile rows on gridDim.y could launch
  for (auto [M, N] :
       {std::pair<int64_t, int64_t>{1, 1}, {16, 16}, {17, 33}, {70, 18}, {37, 29}, {1, 520}, {520, 1}, {300, 17}})
    expect(covers(M, N), "each 16x16 tile of the output is one block's, exactly once", M, N);
  expect(mm16_wmma_blocks(0, 5) == 0 && mm16_wmma_blocks(5, 0) == 0, "an empty output launches no block", 0, 0);

  const int64_t tall = kOldLimit + 1;  // 1,048,561 rows: 65,536 tile rows
  expect(mm16_wmma_blocks(tall, 16) == 65536, "a tall output: 65,536 blocks along gridDim.x (over y's 65,535)", tall,
         16);
  expect(covers(tall, 16), "and they cover it", tall, 16);
  expect(covers(16, tall), "a wide one too", 16, tall);
  expect(mm16_wmma_blocks(2000000, 100) == 125000 * 7, "2,000,000 x 100: 875,000 blocks", 2000000, 100);
  const Mm16Tile last = mm16_wmma_tile(mm16_wmma_blocks(tall, 16) - 1, 16);
  expect(last.row0 == 65535 * 16 && last.col0 == 0, "the last block computes the last tile row", tall, 16);

  const int64_t huge = int64_t(16) * 65536 * 2;  // 131,072^2 = 2^34 tiles: more than gridDim.x holds
  expect(mm16_wmma_blocks(huge, huge) == -1, "more tiles than one grid holds: -1 (mm16_cuda refuses it)", huge, huge);
  expect(mm16_wmma_blocks(int64_t(1) << 40, int64_t(1) << 40) == -1, "and no overflow on the way", int64_t(1) << 40,
         int64_t(1) << 40);
  expect(mm16_wmma_blocks(16 * kMm16MaxBlocks, 1) == kMm16MaxBlocks, "exactly 2^31 - 1 tiles still fit",
         16 * kMm16MaxBlocks, 1);

  std::printf("build/mm16_grid: %d problem(s)\n", failures);
  return failures ? 1 : 0;
}
