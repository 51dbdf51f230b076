"""Chapter 4's grid on a GPU: outputs taller and wider than 65,535 tiles of 16 (M or N above 1,048,560), which a
grid with the tile rows on gridDim.y could not launch, through the course's built mm16 (exercise 04's reference),
compared with a float64 reference. The CPU half of the same claim is the test build/mm16_grid.

usage: python tools/gpu/tall_mm16.py LIBRARY.so"""

import sys

import torch


def main(library):
    torch.ops.load_library(library)
    mm16 = torch.ops.course.mm16
    print("torch", torch.__version__, torch.cuda.get_device_name())
    failures = 0
    for M, K, N in ((1_048_561, 16, 8), (2_000_000, 24, 5), (8, 16, 1_048_561)):
        g = torch.Generator().manual_seed(M + N)
        a = torch.randn(M, K, generator=g).half()
        b = torch.randn(K, N, generator=g).half()
        try:
            c = mm16(a.cuda(), b.cuda())
            torch.cuda.synchronize()
            ref = a.double() @ b.double()
            tol = 1e-3 * max(1.0, (K / 16) ** 0.5)  # the grader's atol = rtol for float16 inputs
            bad = ((c.cpu().double() - ref).abs() > tol + tol * ref.abs()).sum().item()
            ok = bad == 0 and c.shape == (M, N)
            print(
                f"{M} x {K} @ {K} x {N}: {'ok' if ok else 'WRONG'}, {bad} of {M * N} elements outside "
                f"atol = rtol = {tol:.3g}"
            )
            failures += not ok
        except Exception as e:  # noqa: BLE001
            print(f"{M} x {K} @ {K} x {N}: {type(e).__name__}: {str(e).splitlines()[0]}")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
