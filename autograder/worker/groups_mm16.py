"""Probes of course::mm16 (exercises 03_cpu to 06_autograd). Raw observations only: outputs, their metadata,
exception types and messages, what opcheck / gradcheck / torch.compile said. The judge chose every input and
decides every verdict.

Groups (few, because each worker process pays for importing torch):
  mm16_contract  invalid calls (CPU, and CUDA when asked) plus one valid call: kept apart so an operator that
                 exits or crashes on an invalid call costs only the contract rows
  mm16_cpu       forward, strides, dtypes, fake/meta, torch.compile, autograd probes, gradcheck, the negative
                 control, opcheck: what the args ask for
  mm16_cuda      the same on CUDA (forward, strides, device, current stream, opcheck); also run against the
                 PTX-only build
  mm16_sync      CUDA-graph capture of the op: a device-wide sync inside it raises and poisons the context,
                 so it runs in a process of its own
"""
import torch

from groups_common import group


def _op():
    return torch.ops.course.mm16.default


def _describe_error(e):
    return {"raised": True, "type": type(e).__name__, "message": str(e)[:2000]}


def _meta(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "strides": list(t.stride()),
            "device": str(t.device)}


def _call(report, tensors, name, fn):
    """Runs fn(); stores its tensor result as `name` and its metadata (or the exception) in report[name]."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - data for the judge
        report[name] = _describe_error(e)
        return None
    if not isinstance(out, torch.Tensor):
        report[name] = {"raised": False, "not_a_tensor": type(out).__name__}
        return None
    report[name] = dict(raised=False, **_meta(out))
    if out.device.type != "meta" and not getattr(out, "_is_fake", False):
        tensors[name] = out.detach().to("cpu", copy=True)
    return out


def _views(inputs, prefix, device):
    """The judge's non-contiguous case: a = at.t() (strides (1, M)), b = bw[:, ::2] (strides (2N, 2))."""
    at = inputs[prefix + "at"].to(device)
    bw = inputs[prefix + "bw"].to(device)
    return at.t(), bw[:, ::2]


# --- contract ---------------------------------------------------------------------------------------------------
@group("mm16_contract")
def group_contract(request, inputs):
    args = request["args"]
    report, tensors = {"calls": []}, {}

    def attempt(label, device, fn):
        entry = {"label": label, "device": device}
        try:
            out = fn()
            entry.update(raised=False, result=_meta(out) if isinstance(out, torch.Tensor) else repr(type(out)))
        except Exception as e:  # noqa: BLE001
            entry.update(_describe_error(e))
        report["calls"].append(entry)

    op = _op()
    for call in args.get("calls", []):
        device = call["device"]
        if device == "cuda" and not torch.cuda.is_available():
            continue

        def make(spec):
            dev = "cpu" if spec.get("cpu") else device
            dtype = getattr(torch, spec["dtype"])
            if dtype.is_floating_point:
                return torch.ones(spec["shape"], dtype=dtype, device=dev)
            return torch.ones(spec["shape"], dtype=dtype, device=dev)

        attempt(call["label"], device, lambda: op(make(call["a"]), make(call["b"])))
    if torch.cuda.is_available():
        torch.cuda.synchronize()  # an asynchronous error from a bad launch surfaces here, inside the report
    report["survived"] = True
    return report, tensors


# --- CPU ----------------------------------------------------------------------------------------------------------
def _fake_probes(report, inputs):
    from torch._subclasses.fake_tensor import FakeTensorMode

    op = _op()
    for case in ("fwd0", "fwd1"):
        a, b = inputs[case + "_a"], inputs[case + "_b"]
        _call(report, {}, "meta_" + case, lambda: op(a.to("meta"), b.to("meta")))
        try:
            with FakeTensorMode() as mode:
                fa, fb = mode.from_tensor(a), mode.from_tensor(b)
                _call(report, {}, "fake_" + case, lambda: op(fa, fb))
        except Exception as e:  # noqa: BLE001
            report["fake_" + case] = _describe_error(e)


def _compile_probe(report, tensors, inputs):
    import torch._dynamo

    op = _op()
    a, b = inputs["fwd0_a"], inputs["fwd0_b"]

    def f(x, y):
        return op(x, y) * 2.0

    torch._dynamo.reset()
    try:
        compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
        _call(report, tensors, "compiled", lambda: compiled(a, b))
    except Exception as e:  # noqa: BLE001
        report["compiled"] = _describe_error(e)


def _autograd_probes(report, tensors, inputs, args):
    op = _op()
    a, b, g = inputs["ag_a"], inputs["ag_b"], inputs["ag_g"]

    # the submission's backward, for the upstream gradient the judge chose
    try:
        ar, br = a.clone().requires_grad_(), b.clone().requires_grad_()
        out = op(ar, br)
        report["ag_out_requires_grad"] = bool(out.requires_grad)
        ga, gb = torch.autograd.grad(out, (ar, br), g, allow_unused=True)
        report["ag_grad"] = {"raised": False, "grad_a": None if ga is None else _meta(ga),
                             "grad_b": None if gb is None else _meta(gb)}
        if ga is not None:
            tensors["ag_grad_a"] = ga.detach().clone()
        if gb is not None:
            tensors["ag_grad_b"] = gb.detach().clone()
    except Exception as e:  # noqa: BLE001
        report["ag_grad"] = _describe_error(e)

    # forward values at the perturbed inputs the judge chose: its finite differences come from these
    fd_a, fd_b = inputs["fd_a"], inputs["fd_b"]
    try:
        with torch.no_grad():
            tensors["fd_out"] = torch.stack([op(fd_a[i], fd_b[i]) for i in range(fd_a.shape[0])])
        report["fd"] = {"raised": False}
    except Exception as e:  # noqa: BLE001
        report["fd"] = _describe_error(e)

    from torch.autograd.gradcheck import GradcheckError

    def run_gradcheck(fn, key):
        ar, br = a.clone().requires_grad_(), b.clone().requires_grad_()
        try:
            ok = torch.autograd.gradcheck(fn, (ar, br), eps=1e-6, atol=1e-5, rtol=1e-3)
            report[key] = {"raised": False, "returned": bool(ok)}
        except GradcheckError as e:
            report[key] = dict(_describe_error(e), gradcheck_error=True)
        except Exception as e:  # noqa: BLE001
            report[key] = dict(_describe_error(e), gradcheck_error=False)

    run_gradcheck(op, "gradcheck")

    # the negative control: the submission's forward with a deliberately wrong backward (twice the right one)
    class TwiceBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            with torch._C._AutoDispatchBelowAutograd():
                return op(x, y)

        @staticmethod
        def backward(ctx, grad):
            x, y = ctx.saved_tensors
            return 2 * (grad @ y.t()), 2 * (x.t() @ grad)

    run_gradcheck(TwiceBackward.apply, "negative_gradcheck")
    try:
        ar, br = a.clone().requires_grad_(), b.clone().requires_grad_()
        ga, gb = torch.autograd.grad(TwiceBackward.apply(ar, br), (ar, br), g)
        tensors["neg_grad_a"], tensors["neg_grad_b"] = ga.detach(), gb.detach()
        report["negative_grad"] = {"raised": False}
    except Exception as e:  # noqa: BLE001
        report["negative_grad"] = _describe_error(e)


def _opcheck(report, tensors, samples, key):
    """torch.library.opcheck on each sample; also the op's own output on it, so the judge can check the numbers."""
    op = _op()
    results = []
    for i, (a, b) in enumerate(samples):
        entry = {"requires_grad": [bool(a.requires_grad), bool(b.requires_grad)], "dtype": str(a.dtype),
                 "device": str(a.device)}
        try:
            r = torch.library.opcheck(op, (a, b), raise_exception=False)
            entry["results"] = {k: (v if isinstance(v, str) else f"{type(v).__name__}: {v}"[:1500])
                                for k, v in r.items()}
        except Exception as e:  # noqa: BLE001
            entry["error"] = _describe_error(e)
        try:
            with torch.no_grad():
                tensors[f"{key}_out{i}"] = op(a.detach(), b.detach()).detach().to("cpu", copy=True)
        except Exception as e:  # noqa: BLE001
            entry["forward_error"] = _describe_error(e)
        results.append(entry)
    report[key] = results


@group("mm16_cpu")
def group_cpu(request, inputs):
    args = request["args"]
    report, tensors = {}, {}
    op = _op()
    for case in ("fwd0", "fwd1", "fwd2"):
        a, b = inputs[case + "_a"], inputs[case + "_b"]
        _call(report, tensors, case, lambda: op(a, b))
    a, b = _views(inputs, "nc_", "cpu")
    report["nc_inputs"] = {"a": _meta(a), "b": _meta(b), "a_contiguous": a.is_contiguous(),
                           "b_contiguous": b.is_contiguous()}
    _call(report, tensors, "nc", lambda: op(a, b))
    if args.get("fake"):
        _fake_probes(report, inputs)
    if args.get("compile"):
        _compile_probe(report, tensors, inputs)
    if args.get("autograd"):
        _autograd_probes(report, tensors, inputs, args)
    if args.get("opcheck"):
        samples = [(inputs["oc0_a"].clone().requires_grad_(), inputs["oc0_b"].clone().requires_grad_()),
                   (inputs["oc1_a"].clone().requires_grad_(), inputs["oc1_b"].clone().requires_grad_())]
        _opcheck(report, tensors, samples, "opcheck")
    return report, tensors


# --- CUDA ---------------------------------------------------------------------------------------------------------
@group("mm16_cuda")
def group_cuda(request, inputs):
    args = request["args"]
    report, tensors = {"device_count": torch.cuda.device_count()}, {}
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device in the worker")
    op = _op()
    dev = torch.device("cuda", 0)
    for case in ("fwd0", "fwd1"):
        a, b = inputs["cuda_" + case + "_a"].to(dev), inputs["cuda_" + case + "_b"].to(dev)
        _call(report, tensors, "cuda_" + case, lambda: op(a, b))
        torch.cuda.synchronize()
    if args.get("forward_only"):
        return report, tensors

    a, b = _views(inputs, "cuda_nc_", dev)
    _call(report, tensors, "cuda_nc", lambda: op(a, b))
    torch.cuda.synchronize()

    # the device guard: inputs on the last device while device 0 is current (only with two or more devices)
    if torch.cuda.device_count() > 1:
        last = torch.device("cuda", torch.cuda.device_count() - 1)
        a, b = inputs["cuda_fwd0_a"].to(last), inputs["cuda_fwd0_b"].to(last)
        with torch.cuda.device(0):
            _call(report, tensors, "cuda_guard", lambda: op(a, b))
        torch.cuda.synchronize(last)

    # the current stream: on a side stream, the GPU sleeps, then writes the input, then the op runs. A kernel on
    # that stream reads the written input; one on the legacy default stream (which does not wait for torch's
    # non-blocking side streams) runs at once and reads the zeros that were there before.
    a_new, b = inputs["cuda_fwd0_a"].to(dev), inputs["cuda_fwd0_b"].to(dev)
    a = torch.zeros_like(a_new)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    try:
        with torch.cuda.stream(side):
            torch.cuda._sleep(int(args.get("sleep_cycles", 200_000_000)))
            a.copy_(a_new)
            out = _call(report, tensors, "cuda_stream", lambda: op(a, b))
            if out is not None:
                report["cuda_stream"]["stream_at_call"] = side.cuda_stream
        torch.cuda.synchronize()
        if out is not None:
            tensors["cuda_stream"] = out.detach().to("cpu", copy=True)
    except Exception as e:  # noqa: BLE001
        report["cuda_stream"] = _describe_error(e)

    if args.get("opcheck"):
        samples = [(inputs["cuda_fwd0_a"].to(dev).requires_grad_(), inputs["cuda_fwd0_b"].to(dev).requires_grad_()),
                   (inputs["cuda_fwd1_a"].to(dev).requires_grad_(), inputs["cuda_fwd1_b"].to(dev).requires_grad_())]
        _opcheck(report, tensors, samples, "cuda_opcheck")
    torch.cuda.synchronize()
    return report, tensors


@group("mm16_sync")
def group_sync(request, inputs):
    report, tensors = {}, {}
    if not torch.cuda.is_available():
        raise RuntimeError("no CUDA device in the worker")
    op = _op()
    dev = torch.device("cuda", 0)
    a, b = inputs["cuda_fwd0_a"].to(dev), inputs["cuda_fwd0_b"].to(dev)
    _call(report, tensors, "eager", lambda: op(a, b))
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            op(a, b)
        report["capture"] = {"raised": False}
    except Exception as e:  # noqa: BLE001
        report["capture"] = _describe_error(e)
    return report, tensors
