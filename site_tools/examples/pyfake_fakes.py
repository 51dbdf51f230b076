# The Python module that holds the fake kernel of pyfake::mm (site_tools/examples/demo_ops.cpp names it with
# m.set_python_module("pyfake_fakes")); importing it registers the fake kernel.
import torch


@torch.library.register_fake("pyfake::mm")
def _(a, b):
    torch._check(a.shape[1] == b.shape[0], lambda: "mm: a.size(1) must equal b.size(0)")
    return a.new_empty((a.shape[0], b.shape[1]))
