# Chapter 3 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/contract_errors.py
import torch

torch.ops.load_library("build/lib/solutions/03_cpu/libmm16_cpu.so")
mm16 = torch.ops.course.mm16
h, i32 = torch.float16, torch.int32

# the four invalid calls of the contract, each stopped by its TORCH_CHECK before any memory is read
for a, b in (
    (torch.ones(6, dtype=h), torch.ones(6, 4, dtype=h)),
    (torch.ones(3, 5, dtype=h), torch.ones(4, 2, dtype=h)),
    (torch.ones(3, 4, dtype=h), torch.ones(4, 2)),
    (torch.ones(3, 4, dtype=i32), torch.ones(4, 2, dtype=i32)),
):
    try:
        mm16(a, b)
    except RuntimeError as e:
        print(f"{type(e).__name__}: {e}".splitlines()[0])

# A dtype that reaches an AT_DISPATCH_* macro without a case raises NotImplementedError (a RuntimeError), naming the
# string the kernel passed to the macro: here PyTorch's own gelu kernel, on int32
try:
    torch.nn.functional.gelu(torch.ones(2, dtype=i32))
except RuntimeError as e:
    print(f"{type(e).__name__}: {e}".splitlines()[0])
    print("NotImplementedError is a RuntimeError:", issubclass(NotImplementedError, RuntimeError))
