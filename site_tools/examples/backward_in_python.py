# Chapter 6 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/backward_in_python.py
import warnings

import torch

torch.ops.load_library("build/lib/solutions/05_fake/libmm16_fake.so")  # CPU, CUDA, Meta; no Autograd kernel


def setup_context(ctx, inputs, output):
    a, b = inputs
    ctx.save_for_backward(a, b)


def backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = (grad @ b.to(grad.dtype).t()).to(a.dtype)
    if ctx.needs_input_grad[1]:
        grad_b = (a.to(grad.dtype).t() @ grad).to(b.dtype)
    return grad_a, grad_b


a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)

# Before the registration: backward runs, warns, and no gradient reaches a or b
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.ops.course.mm16(a, b).sum().backward()
print("no autograd registration: a.grad =", a.grad, "| warning:", str(caught[0].message).split(". ")[0])

torch.library.register_autograd("course::mm16", backward, setup_context=setup_context)
print("gradcheck:", torch.autograd.gradcheck(torch.ops.course.mm16, (a, b)))
results = torch.library.opcheck(torch.ops.course.mm16.default, (a, b))
print({test: result for test, result in results.items()})
