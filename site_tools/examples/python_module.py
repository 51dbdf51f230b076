# Chapter 5 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/python_module.py
# pyfake::mm and pyfake_bare::mm (site_tools/examples/demo_ops.cpp) have a CPU kernel and their fake kernel in Python;
# only pyfake's TORCH_LIBRARY block names the module that registers it, with m.set_python_module("pyfake_fakes").
import warnings

import torch

warnings.simplefilter("ignore")
torch.ops.load_library("build/examples/libcourse_demo_ops.so")


def on_meta(op):
    try:
        return str(tuple(op(torch.empty(3, 4, device="meta"), torch.empty(4, 5, device="meta")).shape))
    except Exception as e:
        sentences = str(e).split(". ")
        said = sentences[:2] if len(sentences) > 1 and "import the" in sentences[1] else sentences[:1]
        return f"{type(e).__name__}: {'. '.join(said).rstrip('. ')}."


def compiled(op):
    torch._dynamo.reset()
    try:
        return str(tuple(torch.compile(op, fullgraph=True)(torch.randn(3, 4), torch.randn(4, 5)).shape))
    except Exception as e:
        hint = next((line.strip() for line in str(e).splitlines() if line.strip().startswith("Hint:")), "")
        hint = hint.split(", otherwise")[0] if "import" in hint else "Hint: (names no module)"
        return f"{type(e).__name__}: {str(e).splitlines()[0]}; {hint}"


for title, op in (
    ("without set_python_module", torch.ops.pyfake_bare.mm),
    ('with m.set_python_module("pyfake_fakes"), not imported', torch.ops.pyfake.mm),
):
    print(f"{title}:\n  meta tensors: {on_meta(op)}\n  torch.compile: {compiled(op)}")

import pyfake_fakes  # noqa: E402,F401  registers pyfake::mm's fake kernel

print(
    f"after import pyfake_fakes:\n  meta tensors: {on_meta(torch.ops.pyfake.mm)}\n"
    f"  torch.compile: {compiled(torch.ops.pyfake.mm)}"
)


# a fake kernel registered from another module than the one the library names is refused when it first runs
@torch.library.register_fake("pyfake::mm_misplaced")
def _(a, b):
    return a.new_empty((a.shape[0], b.shape[1]))


print(
    f"pyfake::mm_misplaced, its fake registered in {__name__}:\n  meta tensors: "
    f"{on_meta(torch.ops.pyfake.mm_misplaced)}"
)
