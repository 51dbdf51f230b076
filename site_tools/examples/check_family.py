# Chapter 3 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:  python site_tools/examples/check_family.py
# checks::fail (site_tools/examples/demo_ops.cpp) fails the TORCH_CHECK variant it is named.
import torch

torch.ops.load_library("build/examples/libcourse_demo_ops.so")
for kind in (
    "TORCH_CHECK",
    "TORCH_CHECK_VALUE",
    "TORCH_CHECK_TYPE",
    "TORCH_CHECK_INDEX",
    "TORCH_CHECK_NOT_IMPLEMENTED",
    "TORCH_INTERNAL_ASSERT",
):
    try:
        torch.ops.checks.fail(kind)
    except Exception as e:
        message = str(e).splitlines()[0]
        if "INTERNAL ASSERT FAILED" in message:  # the message names the source file and line: keep what it says
            message = "... INTERNAL ASSERT FAILED at ..., " + message.split(", ", 1)[1]
        print(f"{kind:28} {type(e).__name__}: {message}")
