# Chapter 8 shows this script and its output; the test site/examples runs it and compares the two.
# Run from the repository root after ./course build:
#   PYTHONPATH=build/twins python site_tools/examples/profile_op_and_twin.py
import torch
from torch.profiler import ProfilerActivity, profile

# chapter 1's pybind11 twin (build/twins, on PYTHONPATH): same computation, no dispatcher entry
import course_pybind_twin

torch.ops.load_library("build/lib/solutions/01_custom_op/libscale_add.so")

x, y = torch.randn(7, 13), torch.randn(7, 13)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    torch.ops.course.scale_add(x, y, 2.0)  # the dispatcher operator
    course_pybind_twin.scale_add(x, y, 2.0)  # the pybind11 function
print([row.key for row in prof.key_averages()])
for event in prof.events():
    if event.cpu_parent is None:
        print(event.name, [child.name for child in event.cpu_children])
