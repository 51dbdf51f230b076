// PLANTED BUG (grader test): no kernel at all: the launcher only zero-fills c on the stream.
// sizes and a stream, and compiles in a few seconds.
#include <cuda_runtime.h>

#include "mm16_kernel.h"

// --8<-- [start:launcher]
void mm16_wmma_launch(const __half* a, const __half* b, float* c, int64_t M, int64_t N, int64_t K,
                      cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  (void)a; (void)b; (void)K;
  cudaMemsetAsync(c, 0, sizeof(float) * M * N, stream);  // a placeholder that never became a kernel
}
// --8<-- [end:launcher]
