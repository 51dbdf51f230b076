# Run from the repository root after ./course build:
#   PYTHONPATH=build/twins python site_tools/examples/explain_scale_add.py
import warnings

import torch

warnings.simplefilter("ignore")  # Dynamo also warns about the twin; the break reason below says the same
torch.ops.load_library("build/lib/solutions/01_custom_op/libscale_add.so")
import course_pybind_twin  # noqa: E402  chapter 1's pybind11 twin (build/twins, on PYTHONPATH)


def via_op(x, y):
    return torch.ops.course.scale_add(x * 2, y, 0.5) + 1


def via_twin(x, y):
    return course_pybind_twin.scale_add(x * 2, y, 0.5) + 1


x, y = torch.randn(7, 13), torch.randn(7, 13)
for fn in (via_op, via_twin):
    torch._dynamo.reset()
    e = torch._dynamo.explain(fn)(x, y)
    print(f"{fn.__name__}: graph_count={e.graph_count} graph_break_count={e.graph_break_count}")
    for r in e.break_reasons:
        print("  break:", str(r.reason).split("\n  Hint:")[0].strip())
torch._dynamo.reset()
try:
    torch.compile(via_twin, fullgraph=True)(x, y)
except Exception as exc:
    print("fullgraph=True:", type(exc).__name__ + ":", str(exc).splitlines()[0])
