"""Probes of course::mm16 (exercises 03_cpu to 06_autograd). Raw observations only: outputs, their metadata, exception
types and messages, what opcheck / gradcheck / torch.compile said. The judge chose every input, names every probe and
decides every verdict.

The judge's request lists probes (args["probes"]); each is run in order and answered under its own name, as
autograder/schemas/worker/mm16_protocol.json declares: report[NAME] (checked against the declaration before it is
written) and tensors NAME or NAME.SUFFIX. The judge decides which probes share a process: a CUDA-graph capture that synchronises the device, or an
invalid call that ends the process, costs only the rows that needed that run.
"""

import json
import os
import threading

import torch

from groups_common import dispatched_ops, group

# declared with the other worker answers (autograder/schemas/worker/), which the sandbox mounts beside this folder
PROTOCOL = json.load(
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "schemas", "worker", "mm16_protocol.json"))
)

VIEWS = {  # how a stored tensor becomes the operand (mm16_protocol.json "views")
    "contiguous": lambda t: t,
    "transposed": lambda t: t.t(),
    "column_sliced": lambda t: t[:, ::2],
    "offset": lambda t: t[1:],
    "in_nan_buffer": lambda t: t[:-16, :-16],
}
assert set(VIEWS) == set(PROTOCOL["views"]), "mm16_protocol.json's views and the worker's disagree"


def _op():
    return torch.ops.course.mm16.default


def _outcome(out=None, error=None):
    if error is not None:
        return {"raised": True, "type": type(error).__name__, "message": str(error)[:2000]}
    if not isinstance(out, torch.Tensor):
        return {"raised": False, "type": type(out).__name__}
    return {
        "raised": False,
        "shape": list(out.shape),
        "dtype": str(out.dtype).replace("torch.", ""),
        "strides": list(out.stride()),
        "device": str(out.device),
        "storage_offset": int(out.storage_offset()) if out.device.type != "meta" else 0,
    }


def _keep(tensors, name, out):
    if isinstance(out, torch.Tensor) and out.device.type != "meta" and not getattr(out, "_is_fake", False):
        tensors[name] = out.detach().to("cpu", copy=True)


class Run:
    """The state of one worker run: the inputs, the calls made so far, what came back."""

    def __init__(self, inputs):
        self.inputs, self.specs, self.live, self.report, self.tensors = inputs, {}, {}, {}, {}
        self.outputs = {}  # the tensors the op returned, as the caller holds them

    def operand(self, spec, device):
        # a copy of the stored tensor, viewed: nothing a call does to its operands reaches the request's inputs
        return VIEWS[spec["view"]](self.inputs[spec["tensor"]].to(device, copy=True))

    def operands_of(self, name):
        """Fresh operands of call `name`, with its values and its layout (for the probes that refer to it)."""
        if name not in self.specs:
            raise KeyError(f"probe refers to call {name!r}, which has not run")
        a, b, device = self.specs[name]
        return self.operand(a, device), self.operand(b, device)


def _sync(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


# --- one function per probe kind (mm16_protocol.json "probes") ------------------------------------------------------
def probe_call(run, p):
    op, device = _op(), p["device"]
    a, b = run.operand(p["a"], device), run.operand(p["b"], device)
    if p.get("same_tensors_as"):  # the same tensors, updated in place: an operator that caches by pointer is seen
        old_a, old_b = run.live[p["same_tensors_as"]]
        if old_a.shape != a.shape or old_b.shape != b.shape:  # copy_ would broadcast or fail: say what happened
            return {
                "raised": True,
                "type": "InputsChanged",
                "message": f"the tensors of call {p['same_tensors_as']} came back from the op with the shapes "
                f"{list(old_a.shape)} and {list(old_b.shape)}, not {list(a.shape)} and {list(b.shape)}: "
                "the op changed its inputs (an in-place op such as t_() on a handle of a or b)",
            }
        with torch.no_grad():
            old_a.copy_(a)
            old_b.copy_(b)
        a, b = old_a, old_b
    run.specs[p["name"]] = (p["a"], p["b"], device)
    run.live[p["name"]] = (a, b)
    layout = {
        "operand_strides": [*a.stride(), *b.stride()],
        "operand_offsets": [a.storage_offset(), b.storage_offset()],
    }
    out, error = None, None
    try:
        out = op(a, b)
        _sync(device)
    except Exception as e:  # noqa: BLE001 - an exception is data for the judge
        out, error = None, e
    # the operands as the op left them, also when it raised: it must not change them
    try:
        _keep(run.tensors, p["name"] + ".a_after", a)
        _keep(run.tensors, p["name"] + ".b_after", b)
    except Exception:  # a device left unusable by the call: the missing tensors are the evidence
        if error is None:
            raise
    if error is not None:
        return dict(_outcome(error=error), **layout)
    _keep(run.tensors, p["name"], out)
    if isinstance(out, torch.Tensor):
        run.outputs[p["name"]] = out  # read again at the end: a later call must not change it
    return dict(_outcome(out), **layout)


def probe_threads(run, p):
    op, names, rounds = _op(), p["of"], p["rounds"]
    # every operand made before the start: the threads then only call the op, so their calls overlap
    operands = [[run.operands_of(n) for _ in range(rounds)] for n in names]
    outputs, errors = {}, []
    start = threading.Barrier(len(names))

    def work(t):
        try:
            start.wait(timeout=60)
            for r, (a, b) in enumerate(operands[t]):
                outputs[(t, r)] = op(a, b)
        except Exception as e:  # noqa: BLE001 - an exception is data for the judge
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(len(names))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for (t, r), out in outputs.items():
        _keep(run.tensors, f"{p['name']}.{t}.{r}", out)
    return dict(_outcome(error=errors[0]) if errors else {"raised": False}, calls=len(outputs))


def probe_invalid(run, p):
    def make(spec):
        return torch.ones(spec["shape"], dtype=getattr(torch, spec["dtype"]), device=spec.get("device", p["device"]))

    try:
        out = _op()(make(p["a"]), make(p["b"]))
        _sync(p["device"])
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)
    return _outcome(out)


def probe_fake(run, p):
    from torch._subclasses.fake_tensor import FakeTensorMode

    a, b = run.operands_of(p["of"])
    try:
        with FakeTensorMode() as mode:
            out = _op()(mode.from_tensor(a), mode.from_tensor(b))
            return _outcome(out)
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)


def probe_meta(run, p):
    a, b = run.operands_of(p["of"])
    try:
        # to("meta") keeps sizes and strides of a view (a transposed input stays transposed)
        return _outcome(_op()(a.to("meta"), b.to("meta")))
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)


def probe_compile(run, p):
    import torch._dynamo

    op = _op()
    compilations = [0]

    counting_backend = _counting_backend(p.get("backend", "aot_eager"), compilations)

    def f(x, y):
        return op(x, y) * 2.0

    torch._dynamo.reset()
    try:
        compiled = torch.compile(f, fullgraph=True, backend=counting_backend, dynamic=bool(p["dynamic"]))
        for i, name in enumerate(p["of"]):
            a, b = run.operands_of(name)
            if p["dynamic"]:
                torch._dynamo.mark_dynamic(a, 0)
                torch._dynamo.mark_dynamic(b, 1)
            _keep(run.tensors, f"{p['name']}.{i}", compiled(a, b))
    except Exception as e:  # noqa: BLE001
        return dict(_outcome(error=e), compilations=compilations[0])
    return {"raised": False, "compilations": compilations[0]}


def _counting_backend(backend, count):
    """A torch.compile backend (aot_eager, or Inductor's compile_fx for "inductor") that adds each graph it compiles
    to count[0]: a recompile for a new shape shows there."""

    def compile_graph(gm, example_inputs):
        count[0] += 1
        if backend == "inductor":
            from torch._inductor.compile_fx import compile_fx

            return compile_fx(gm, example_inputs)
        return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)

    return compile_graph


def _opcheck_results(results):
    """opcheck's answer per test: "SUCCESS", or the exception's type and message (bounded)."""
    return {k: (v if isinstance(v, str) else f"{type(v).__name__}: {v}"[:1500]) for k, v in results.items()}


def probe_compiled_code(run, p):
    """What Inductor generated for f(a, b) = op(a, b) * 2: facts the judge reads (chapter 11's compile.sees_kernel)."""
    import torch._dynamo
    from torch._inductor.utils import run_and_get_code

    op = _op()
    graphs = [0]
    counting_inductor = _counting_backend("inductor", graphs)

    def f(x, y):
        return op(x, y) * 2.0

    torch._dynamo.reset()
    a, b = run.operands_of(p["of"])
    try:
        out, codes = run_and_get_code(torch.compile(f, fullgraph=True, backend=counting_inductor), a, b)
    except Exception as e:  # noqa: BLE001
        return dict(_outcome(error=e), graphs=graphs[0])
    code = "\n".join(codes)
    _keep(run.tensors, p["name"], out)
    return {
        "raised": False,
        "names_in_code": [name in code for name in p["names"]],
        "calls_op": "torch.ops.course.mm16" in code or "course.mm16.default" in code,
        "graphs": graphs[0],
        "code_files": len(codes),
    }


def probe_epilogue(run, p):
    """course::OP(out, scale, bias) on copies: its schema's write annotations, what it did, opcheck's test_schema."""
    op = getattr(torch.ops.course, p["op"]).default
    args = op._schema.arguments
    entry = {
        "schema": str(op._schema),
        "arguments": [a.name for a in args],
        "writes": [bool(a.alias_info is not None and a.alias_info.is_write) for a in args],
    }
    out, bias = run.inputs[p["out"]].clone(), run.inputs[p["bias"]].clone()
    try:
        returned = op(out, p["scale"], bias)
        entry.update(raised=False, returned=type(returned).__name__)
    except Exception as e:  # noqa: BLE001
        entry.update(_outcome(error=e))
    _keep(run.tensors, p["name"] + ".out", out)
    _keep(run.tensors, p["name"] + ".bias", bias)
    if p.get("opcheck"):
        fresh = (run.inputs[p["out"]].clone(), p["scale"], run.inputs[p["bias"]].clone())
        try:
            r = torch.library.opcheck(op, fresh, test_utils=("test_schema",), raise_exception=False)
            entry["opcheck"] = _opcheck_results(r)
        except Exception as e:  # noqa: BLE001
            entry["opcheck"] = {"test_schema": f"{type(e).__name__}: {e}"[:1500]}
    return entry


def probe_grad(run, p):
    a, b = run.operands_of(p["of"])
    g = run.inputs[p["g"]]
    requires = p.get("requires", "ab")  # which inputs require grad: "ab", "a" or "b"
    layout = p.get("g_layout", "contiguous")
    if layout == "transposed":
        g = g.t().contiguous().t()
    elif layout == "expanded":
        g = g.reshape(-1)[:1].clone().reshape(1, 1).expand(g.shape)  # a storage of one element, as out.sum() gives
    elif layout != "contiguous":
        raise ValueError(f"g_layout {layout!r}: not one of contiguous, transposed, expanded")
    try:
        ar = a.detach().clone().requires_grad_("a" in requires)
        br = b.detach().clone().requires_grad_("b" in requires)
        if p.get("changed_in_place"):  # non-leaf copies, so that they may change in place after the forward
            ca, cb = ar.clone(), br.clone()
            out = _op()(ca, cb)
            ca.add_(1)
            cb.add_(1)
        else:
            out = _op()(ar, br)
        wrt = [t for t in (ar, br) if t.requires_grad]
        grads = iter(torch.autograd.grad(out, wrt, g, allow_unused=True))
        ga = next(grads) if ar.requires_grad else None
        gb = next(grads) if br.requires_grad else None
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)
    _keep(run.tensors, p["name"] + ".grad_a", ga)
    _keep(run.tensors, p["name"] + ".grad_b", gb)
    report = {
        "raised": False,
        "grad_a": ga is not None,
        "grad_b": gb is not None,
        "requires_grad": bool(out.requires_grad),
    }
    for key, t in (("grad_a_dtype", ga), ("grad_b_dtype", gb)):
        if t is not None:
            report[key] = str(t.dtype).replace("torch.", "")
    return report


def probe_fd(run, p):
    op = _op()
    fa, fb = run.inputs[p["a"]], run.inputs[p["b"]]
    try:
        with torch.no_grad():
            out = torch.stack([op(fa[i], fb[i]) for i in range(fa.shape[0])])
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)
    _keep(run.tensors, p["name"], out)
    return _outcome(out)


def _gradcheck(fn, a, b):
    from torch.autograd.gradcheck import GradcheckError

    ar, br = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    try:
        ok = torch.autograd.gradcheck(fn, (ar, br), eps=1e-6, atol=1e-5, rtol=1e-3)
        return {"raised": False, "returned": bool(ok)}
    except GradcheckError as e:
        return dict(_outcome(error=e), gradcheck_error=True)
    except Exception as e:  # noqa: BLE001
        return dict(_outcome(error=e), gradcheck_error=False)


def probe_gradcheck(run, p):
    return _gradcheck(_op(), *run.operands_of(p["of"]))


def probe_negative_control(run, p):
    op = _op()

    class TwiceBackward(torch.autograd.Function):  # the submission's forward, a deliberately wrong backward
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            with torch._C._AutoDispatchBelowAutograd():
                return op(x, y)

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return 2 * (grad @ y.t()), 2 * (x.t() @ grad)

    a, b = run.operands_of(p["of"])
    result = _gradcheck(TwiceBackward.apply, a, b)
    try:
        ar, br = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
        ga, gb = torch.autograd.grad(TwiceBackward.apply(ar, br), (ar, br), run.inputs[p["g"]])
        _keep(run.tensors, p["name"] + ".grad_a", ga)
        _keep(run.tensors, p["name"] + ".grad_b", gb)
    except Exception:  # noqa: BLE001 - the gradcheck's own answer says what went wrong
        pass
    return result


def probe_opcheck(run, p):
    op = _op()
    a, b = run.operands_of(p["of"])
    a, b = a.detach().clone(), b.detach().clone()  # same layout as the call's (clone keeps strides of a view)
    if p.get("requires_grad"):
        a.requires_grad_()
        b.requires_grad_()
    entry = {"raised": False, "requires_grad": [bool(a.requires_grad), bool(b.requires_grad)]}
    try:
        only = {"test_utils": tuple(p["test_utils"])} if p.get("test_utils") else {}
        r = torch.library.opcheck(op, (a, b), raise_exception=False, **only)
        entry["results"] = _opcheck_results(r)
    except Exception as e:  # noqa: BLE001
        entry.update(_outcome(error=e))
    try:
        with torch.no_grad():
            _keep(run.tensors, p["name"], op(a.detach(), b.detach()))
    except Exception:  # noqa: BLE001 - the missing tensor is the judge's evidence
        pass
    return entry


def probe_stream(run, p):
    """A kernel on the current (side) stream runs after the delayed write of its input and before the consumer; one
    on the legacy default stream, the per-thread default stream or a stream of its own (not joined back) does not."""
    a_new, b_new = run.operands_of(p["of"])
    a, b = torch.zeros_like(a_new), b_new.clone()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    try:
        with torch.cuda.stream(side):
            torch.cuda._sleep(int(p.get("sleep_cycles", 200_000_000)))
            a.copy_(a_new)
            out = _op()(a, b)
            seen = out.clone()  # the consumer: on the same stream, right after the call, before any sync
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)
    _keep(run.tensors, p["name"], seen)
    return _outcome(out)


def probe_guard(run, p):
    last = torch.device("cuda", torch.cuda.device_count() - 1)
    a, b = (t.to(last) for t in run.operands_of(p["of"]))
    try:
        with torch.cuda.device(0):
            out = _op()(a, b)
        torch.cuda.synchronize(last)
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)
    _keep(run.tensors, p["name"], out)
    return _outcome(out)


def probe_kernels(run, p):
    from torch.profiler import ProfilerActivity, profile

    op = _op()
    a, b = run.operands_of(p["of"])
    if (
        not a.is_cuda
    ):  # the CPU: which operators the op dispatched (a library product shows as aten::mm, aten::mul, ...)
        try:  # one call, no warm-up: nothing to load on the CPU, and an op that changes its inputs gets one go
            return {"raised": False, "ops": dispatched_ops("course::mm16", lambda: op(a, b))}
        except Exception as e:  # noqa: BLE001
            return _outcome(error=e)
    try:
        op(a, b)  # warm-up: module loading and first-call set-up are not the op's
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            op(a, b)
            torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)
    names = set()

    def collect(event):  # a kernel belongs to the event that launched it, often a child of the op (aten::copy_)
        names.update(k.name for k in event.kernels)
        for child in event.cpu_children:
            collect(child)

    for event in prof.events():
        if event.name == "course::mm16":
            collect(event)
    return {"raised": False, "kernels": sorted(names)}


def probe_capture(run, p):
    a, b = run.operands_of(p["of"])
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            _op()(a, b)
        return {"raised": False}
    except Exception as e:  # noqa: BLE001
        return _outcome(error=e)


PROBES = {name[len("probe_") :]: fn for name, fn in globals().items() if name.startswith("probe_")}
assert set(PROBES) == set(PROTOCOL["probes"]), "mm16_protocol.json's probes and the worker's disagree"

_TYPES = {"bool": bool, "string": str, "int": int, "object": dict}


def declared_problems(kind, answer):
    """Where `answer` breaks the declaration of `kind`'s report (the judge checks the same on its side)."""
    fields = PROTOCOL["probes"][kind]["report"]
    fields = PROTOCOL["outcome"] if fields == "outcome" else fields
    problems = [f"undeclared field {k!r}" for k in answer if k not in fields]
    for k, t in fields.items():
        optional = t.endswith("?")
        t = t.rstrip("?")
        if k not in answer:
            if not optional:
                problems.append(f"missing field {k!r}")
            continue
        v = answer[k]
        if t in ("ints", "bools", "strings"):
            item = {"ints": int, "bools": bool, "strings": str}[t]
            ok = isinstance(v, list) and all(isinstance(x, item) for x in v)
        else:
            ok = isinstance(v, _TYPES[t]) and not (t == "int" and isinstance(v, bool))
        if not ok:
            problems.append(f"field {k!r} is not {t}")
    return problems


@group("mm16")
def group_mm16(request, inputs):
    run = Run(inputs)
    for p in request["args"]["probes"]:
        answer = PROBES[p["kind"]](run, p)
        problems = declared_problems(p["kind"], answer)
        if problems:
            raise AssertionError(f"probe {p['name']} ({p['kind']}) answered outside mm16_protocol.json: {problems}")
        run.report[p["name"]] = answer
    for dev in {p.get("device", "cpu") for p in request["args"]["probes"]}:
        _sync(dev)  # an asynchronous error from a bad launch surfaces here, inside the report
    for name, out in run.outputs.items():
        _keep(run.tensors, name + ".at_end", out)
    run.report["survived"] = True
    return run.report, run.tensors
