# Chapter 6 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/autograd_both_paths.py
import torch

torch.ops.load_library("build/lib/solutions/06_autograd/libmm16_autograd.so")  # with its C++ torch::autograd::Function
mm16 = torch.ops.course.mm16
a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
print("the C++ Function's node:", type(mm16(a, b).grad_fn).__name__)


def setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def backward(ctx, grad):
    a, b = ctx.saved_tensors
    return grad @ b.t(), a.t() @ grad


torch.library.register_autograd("course::mm16", backward, setup_context=setup_context)  # no error
print("after register_autograd:", type(mm16(a, b).grad_fn).__name__)
