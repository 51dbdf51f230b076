"""Exercise 08_profiling: find an operator's rows in a torch.profiler run.

Chapter: chapters/08_profiling.md. Grade it with: ./course grade 08_profiling
`prof` is a finished torch.profiler.profile; `op_name` is a registered operator's full name, e.g. "course::mm16".
The grader profiles course::mm16 (and course::mm16_scaled, which calls it) and compares your answers with the
profiler's own trace.
"""


# --8<-- [start:calls]
def op_calls(prof, op_name):
    """How many times the operator ran inside the profiled region."""
    raise NotImplementedError("TODO(student) 1 in profile_rows.py (op_calls): find the row of prof.key_averages() "
                              "whose key is exactly op_name and return its count")
# --8<-- [end:calls]


# --8<-- [start:cpu_time]
def op_cpu_time_us(prof, op_name):
    """CPU time of all its calls, in microseconds, including what it called (total, not self)."""
    raise NotImplementedError("TODO(student) 2 in profile_rows.py (op_cpu_time_us): the same row's total CPU time "
                              "(cpu_time_total), not its self time")
# --8<-- [end:cpu_time]


# --8<-- [start:kernels]
def op_kernels(prof, op_name):
    """Names of the GPU kernels launched inside its calls, its children's included, each once, sorted."""
    raise NotImplementedError("TODO(student) 3 in profile_rows.py (op_kernels): for each event of prof.events() named "
                              "op_name, collect event.kernels of it and of its cpu_children, recursively")
# --8<-- [end:kernels]
