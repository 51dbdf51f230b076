# Chapter 6 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/gradcheck_negative_control.py
import torch
from torch.autograd.gradcheck import GradcheckError  # the importable form of the name

torch.ops.load_library("build/lib/solutions/06_autograd/libmm16_autograd.so")
mm16 = torch.ops.course.mm16


class TwiceBackward(torch.autograd.Function):  # your forward, a deliberately wrong backward
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with torch._C._AutoDispatchBelowAutograd():
            return mm16(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return 2 * (g @ b.t()), 2 * (a.t() @ g)


a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
print("the real backward:", torch.autograd.gradcheck(mm16, (a, b)))
try:
    torch.autograd.gradcheck(TwiceBackward.apply, (a, b))
    print("the 2x backward passed: the check is broken")
except GradcheckError as e:
    print("the 2x backward: GradcheckError:", str(e).splitlines()[0])

# Not the dotted name: torch.autograd.gradcheck is the function, so the except clause itself raises once it is reached
try:
    try:
        torch.autograd.gradcheck(TwiceBackward.apply, (a, b))
    except torch.autograd.gradcheck.GradcheckError:
        print("caught")
except AttributeError as e:
    print("except torch.autograd.gradcheck.GradcheckError: AttributeError:", e)
print("GradcheckError is a RuntimeError:", issubclass(GradcheckError, RuntimeError))
