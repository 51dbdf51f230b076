# Chapter 7 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/opcheck_wrong_operator.py
import torch

torch.manual_seed(0)
torch.ops.load_library("build/harness_targets/wrong_forward_float64/libmm16_autograd.so")  # float64 products doubled
mm16 = torch.ops.course.mm16

a = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
b = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
print(torch.library.opcheck(mm16, (a, b)))
print("largest error:", (mm16(a, b) - a @ b).abs().max().item())
