# Chapter 6 shows this script and its output; the test site/examples runs it and compares the two.
# The upstream gradient g that a backward receives is whatever autograd computed for the output: not always
# a contiguous tensor. Run from the repository root:  python site_tools/examples/upstream_gradient_views.py
import torch


class ShowsG(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        return a @ b

    @staticmethod
    def backward(ctx, g):
        print(f"    g {tuple(g.shape)}, strides {g.stride()}, contiguous: {g.is_contiguous()}")
        return None, None


a = torch.randn(3, 5, requires_grad=True)
b = torch.randn(5, 4)
w = torch.randn(4, 3)
for what, loss in [
    ("out.sum()", lambda out: out.sum()),
    ("(out.t() * w).sum()", lambda out: (out.t() * w).sum()),
    ("(out @ w).sum()", lambda out: (out @ w).sum()),
]:
    print(what)
    loss(ShowsG.apply(a, b)).backward()
