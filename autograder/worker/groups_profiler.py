"""Chapter 8: profiles a workload of the course's operator (how many calls of each kind, the judge draws per grade),
then asks the student's profile_rows.py about it.

The workload calls course::mm16 directly (once with a transposed input: on CUDA its .contiguous() launches a copy
kernel inside the op) and through course::mm16_scaled, a Python custom op defined here whose name starts with the
same letters (a substring match counts it too) and which launches a kernel of its own. The trace is exported before
the student's module is imported; the judge reads it to decide what the right answers are.
"""

import os

import torch

from groups_common import announce_evidence, describe_error, group, submission_module


def _define_scaled():
    if hasattr(torch.ops.course, "mm16_scaled"):
        return

    @torch.library.custom_op("course::mm16_scaled", mutates_args=())
    def mm16_scaled(a: torch.Tensor, b: torch.Tensor, s: float) -> torch.Tensor:
        return torch.ops.course.mm16(a, b) * s

    @mm16_scaled.register_fake
    def _(a, b, s):
        return a.new_empty(a.shape[0], b.shape[1], dtype=torch.float32)


DEFAULT_CALLS = {"direct": 2, "transposed": 1, "scaled": 2}  # chapter 8's workload; a grade draws its own


def profile_workload(device, seed=0, calls=None):
    """The workload, profiled (CPU activity, and CUDA on a GPU): what the judge grades (with the numbers of calls it
    drew, `calls`), and what chapter 8's GPU figures are regenerated from (tools/gpu/chapter_figures.py)."""
    calls = calls or DEFAULT_CALLS
    from torch.profiler import ProfilerActivity, profile

    _define_scaled()
    mm16, scaled = torch.ops.course.mm16, torch.ops.course.mm16_scaled
    g = torch.Generator().manual_seed(int(seed))
    a = torch.randn(64, 48, generator=g).half().to(device)
    b = torch.randn(48, 32, generator=g).half().to(device)
    a_t = torch.randn(48, 64, generator=g).half().to(device).t()  # non-contiguous
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    for _ in range(2):  # warm-up outside the profile (first-call set-up is not the op's)
        mm16(a, b), scaled(a, b, 2.0)
    if device == "cuda":
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        for _ in range(int(calls["direct"])):
            mm16(a, b)
        for _ in range(int(calls["transposed"])):
            mm16(a_t, b)
        for _ in range(int(calls["scaled"])):
            scaled(a, b, 2.0)
        if device == "cuda":
            torch.cuda.synchronize()
    return prof


@group("profile")
def group_profile(request, inputs):
    args = request["args"]
    prof = profile_workload(args["device"], args.get("seed", 0), args.get("calls"))
    trace = os.path.join(request["out_dir"], "trace.json")
    prof.export_chrome_trace(trace)
    announce_evidence(request, trace)  # before the student's module is imported: it cannot rewrite the trace unseen

    student = submission_module(request, "profile_rows")
    answers = {}
    for name in request["args"]["ops"]:  # the judge's list: the two that ran, and one that did not
        entry = {}
        for fn in ("op_calls", "op_cpu_time_us", "op_kernels"):
            try:
                value = getattr(student, fn)(prof, name)
                cast = {"op_calls": int, "op_cpu_time_us": float, "op_kernels": lambda v: [str(k) for k in v]}[fn]
                entry[fn] = cast(value)
            except Exception as e:  # noqa: BLE001 - what the student's function raised is data
                entry[fn + "_error"] = describe_error(e, "profile_rows.py")
        answers[name] = entry
    return {"trace": "trace.json", "answers": answers}, {}
