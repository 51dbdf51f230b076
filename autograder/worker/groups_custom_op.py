"""Probes of chapter 1 (exercise 01_custom_op): course::scale_add in eager mode, on invalid calls, and under
torch.compile next to its pybind11 twin. Raw observations only: the judge decides."""

import importlib.machinery
import importlib.util
import sys

from groups_common import dispatched_ops, group


def _scale_add():
    import torch

    try:
        return torch.ops.course.scale_add.default
    except (AttributeError, RuntimeError) as e:
        raise RuntimeError(
            "torch.ops.course.scale_add does not exist: the library declared no operator "
            "course::scale_add (m.def inside TORCH_LIBRARY(course, m))"
        ) from e


def _call(fn, *args):
    """Runs one call; returns (report, tensor or None). An exception is data, not a failure of the probe."""
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001
        return {"raised": True, "type": type(e).__name__, "message": str(e)[:600]}, None
    import torch

    if not isinstance(out, torch.Tensor):
        return {"raised": False, "returned": type(out).__name__}, None
    return {
        "raised": False,
        "returned": "Tensor",
        "dtype": str(out.dtype).replace("torch.", ""),
        "shape": list(out.shape),
        "device": str(out.device),
    }, out


_GUARDED = []  # the buffers behind guarded tensors: alive as long as the process


def _guarded(t, at_end):
    """A copy of `t` in memory of its own whose data ends (at_end) or starts right at a page that cannot be read or
    written: a kernel that reads or writes one element past the end (before the start) of it dies with SIGSEGV,
    instead of touching a neighbour in the allocator's padding and leaving every value right."""
    import ctypes
    import mmap

    import torch

    page, n = mmap.PAGESIZE, t.numel() * t.element_size()
    body = -(-n // page) * page
    buf = mmap.mmap(-1, body + 2 * page)  # guard page, the data's pages, guard page
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    out = torch.frombuffer(buf, dtype=t.dtype, count=t.numel(), offset=page + (body - n if at_end else 0))
    out = out.view(t.shape)
    out.copy_(t)
    libc = ctypes.CDLL(None)
    for guard in (base, base + page + body):
        if libc.mprotect(ctypes.c_void_p(guard), ctypes.c_size_t(page), 0) != 0:  # PROT_NONE
            raise OSError(ctypes.get_errno(), "mprotect of a guard page failed")
    _GUARDED.append(buf)
    return out


@group("scale_add")
def group_scale_add(request, inputs):
    op = _scale_add()
    alphas = {name: float(a) for name, a in request["args"]["alphas"].items()}  # each call its own alpha
    calls, tensors = {}, {}
    if request["args"].get("guard"):  # contiguous inputs against guard pages, after their end and before their start
        x, y = inputs["x"], inputs["y"]
        cases = (
            ("plain", _guarded(x, True), _guarded(y, True)),
            ("plain_start", _guarded(x, False), _guarded(y, False)),
        )
    else:
        cases = (("transposed", inputs["xt"].t(), inputs["y"]), ("y_transposed", inputs["x"], inputs["yt"].t()))
    for name, x, y in cases:
        calls[name], out = _call(op, x, y, alphas[name])
        calls[name]["x_is_contiguous"] = x.is_contiguous()
        calls[name]["y_is_contiguous"] = y.is_contiguous()
        if out is not None:
            tensors[name] = out
        tensors[name + ".x_after"], tensors[name + ".y_after"] = x.clone(), y.clone()  # as the op left them
    report = {"calls": calls}
    if request["args"].get("profile"):  # which operators the op dispatched itself, on fresh transposed inputs
        report["dispatched"] = _dispatched(op, inputs["xt"].clone().t(), inputs["y"].clone(), alphas["transposed"])
    return report, tensors


def _dispatched(op, x, y, alpha):
    try:
        return {"raised": False, "ops": dispatched_ops("course::scale_add", lambda: op(x, y, alpha))}
    except Exception as e:  # noqa: BLE001
        return {"raised": True, "type": type(e).__name__, "message": str(e)[:600]}


@group("contract")
def group_contract(request, inputs):
    op = _scale_add()
    x, y = inputs["x"], inputs["y"]
    calls = {
        "shape_mismatch": _call(op, x, y.reshape(y.shape[1], y.shape[0]), 1.0)[0],
        "float64": _call(op, x.double(), y.double(), 1.0)[0],
        # the Meta kernel (what torch.compile traces with) must refuse what the CPU kernel refuses
        "shape_mismatch_meta": _call(op, x.to("meta"), y.reshape(y.shape[1], y.shape[0]).to("meta"), 1.0)[0],
    }
    return {"calls": calls, "survived": True}, {}


def _explain(fn, *args):
    import torch

    torch._dynamo.reset()
    try:
        e = torch._dynamo.explain(fn)(*args)
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {str(exc)[:600]}"}
    reasons = []
    for r in e.break_reasons:
        # torch's reason: a first line, then "Explanation:", "Hint:" and "Developer debug context:" lines
        lines = [l.strip() for l in str(getattr(r, "reason", r)).splitlines() if l.strip()]
        keep = lines[:1] + [l for l in lines[1:] if l.startswith(("Explanation: ", "Developer debug context: "))]
        reasons.append(" ".join(keep)[:600])
    return {"graph_count": int(e.graph_count), "graph_break_count": int(e.graph_break_count), "break_reasons": reasons}


def _twin(twin_dir, name="course_pybind_twin"):
    """Chapter 1's pybind11 twin, imported from twin_dir alone (the build's twins/, which the sandbox mounts), as an
    import with that folder first on the search path would, without changing the search path."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.machinery.PathFinder.find_spec(name, [twin_dir])
    if spec is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@group("compile")
def group_compile(request, inputs):
    import torch

    args = request["args"]
    alpha = float(args["alpha"])
    twin = _twin(args["twin_dir"])
    _scale_add()  # a missing operator is reported as such, not as a graph break

    def via_op(x, y):
        return torch.ops.course.scale_add(x * 2, y, alpha) + 1

    def via_twin(x, y):
        return twin.scale_add(x * 2, y, alpha) + 1

    x, y = inputs["x"], inputs["y"]
    report = {"op": _explain(via_op, x, y), "twin": _explain(via_twin, x, y)}
    tensors = {}
    torch._dynamo.reset()
    try:
        tensors["compiled"] = torch.compile(via_op, backend="eager")(x, y)
    except Exception as exc:  # noqa: BLE001
        report["compiled_error"] = f"{type(exc).__name__}: {str(exc)[:600]}"
    return report, tensors
