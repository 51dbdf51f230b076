"""Reference solution of exercise 08_profiling: find an operator's rows in a torch.profiler run.

Chapter: chapters/08_profiling.md. Grade it with: ./course grade 08_profiling solutions/08_profiling
`prof` is a finished torch.profiler.profile; `op_name` is a registered operator's full name, e.g. "course::mm16".
"""


# --8<-- [start:calls]
def _row(prof, op_name):
    # key_averages() has one row per event name: compare the whole name, since "course::mm16_scaled" also
    # starts with "course::mm16"
    for row in prof.key_averages():
        if row.key == op_name:
            return row
    return None


def op_calls(prof, op_name):
    """How many times the operator ran inside the profiled region."""
    row = _row(prof, op_name)
    return row.count if row is not None else 0
# --8<-- [end:calls]


# --8<-- [start:cpu_time]
def op_cpu_time_us(prof, op_name):
    """CPU time of all its calls, in microseconds, including what it called (total, not self)."""
    row = _row(prof, op_name)
    return row.cpu_time_total if row is not None else 0.0
# --8<-- [end:cpu_time]


# --8<-- [start:kernels]
def op_kernels(prof, op_name):
    """Names of the GPU kernels launched inside its calls, its children's included, each once, sorted."""
    names = set()

    def collect(event):
        names.update(kernel.name for kernel in event.kernels)
        for child in event.cpu_children:  # e.g. aten::contiguous -> aten::copy_ launches a copy kernel
            collect(child)

    for event in prof.events():
        if event.name == op_name:
            collect(event)
    return sorted(names)
# --8<-- [end:kernels]
