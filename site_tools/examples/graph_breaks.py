# Chapter 1 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:
#   TORCH_LOGS=graph_breaks PYTHONPATH=build/twins python site_tools/examples/graph_breaks.py
# (build/twins holds chapter 1's pybind11 twin, the Python extension module course_pybind_twin)
# TORCH_LOGS=graph_breaks makes torch.compile log every graph break (to stderr); this script also keeps the records
# it logs and prints their first lines, so that what it shows does not depend on the terminal.
import logging
import os
import warnings

import torch

warnings.simplefilter("ignore")
torch.ops.load_library("build/lib/solutions/01_custom_op/libscale_add.so")
# chapter 1's pybind11 twin, from build/twins (on PYTHONPATH: the command above)
import course_pybind_twin  # noqa: E402


def via_op(x, y):
    return torch.ops.course.scale_add(x * 2, y, 0.5) + 1


def via_twin(x, y):
    return course_pybind_twin.scale_add(x * 2, y, 0.5) + 1


class Keep(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        if record.name.endswith(".__graph_breaks"):  # the records TORCH_LOGS=graph_breaks switches on
            self.messages.append(record.getMessage())


keep = Keep()
logging.getLogger("torch._dynamo").addHandler(keep)  # where Dynamo's log records end up

x, y = torch.randn(7, 13), torch.randn(7, 13)
for fn in (via_op, via_twin):
    torch._dynamo.reset()
    keep.messages.clear()
    torch.compile(fn)(x, y)
    print(f"{fn.__name__}: {len(keep.messages)} graph break(s) logged")
    for message in keep.messages:
        lines = [line.strip() for line in message.splitlines() if line.strip()]
        print("  " + lines[0].replace(os.path.dirname(os.path.abspath(__file__)) + os.sep, ""))
        print("  " + lines[2])
