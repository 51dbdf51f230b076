"""WIP (remove before merge): what the GPU rows of exercise 11 would observe, run by hand on a GPU machine.

python solutions/11_python_ops/wip_gpu_probe.py FOLDER   (FOLDER holds a python_ops.py: the reference or a planted copy)
Prints facts only; NOTES.md records what it printed.
"""

import importlib.util
import os
import sys
import time

import torch

folder = sys.argv[1]
spec = importlib.util.spec_from_file_location("python_ops", os.path.join(folder, "python_ops.py"))
python_ops = importlib.util.module_from_spec(spec)
spec.loader.exec_module(python_ops)
import triton  # noqa: E402

print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}, folder {folder}")
op = torch.ops.course.mm16.default
torch.manual_seed(0)


def short(e):
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300]}" if str(e).strip() else type(e).__name__


def forward_rows():
    bad = []
    for M, K, N in [(1, 1, 1), (17, 33, 5), (64, 64, 64), (70, 130, 18), (5, 0, 3), (0, 4, 3), (300, 257, 129)]:
        for dt in (torch.float16, torch.float32, torch.float64):
            a = torch.randn(M, K, device="cuda").to(dt)
            b = torch.randn(K, N, device="cuda").to(dt)
            try:
                c = op(a, b)
            except Exception as e:  # noqa: BLE001
                bad.append(f"{M}x{K}x{N} {dt}: {short(e)}")
                continue
            tol = {torch.float16: 1e-3, torch.float32: 1e-5, torch.float64: 1e-9}[dt] * max(1, (K / 16) ** 0.5)
            ref = a.double() @ b.double()
            want = torch.float32 if dt == torch.float16 else dt
            if c.dtype != want or not torch.allclose(c.double(), ref, rtol=tol, atol=tol):
                bad.append(f"{M}x{K}x{N} {dt}: dtype {c.dtype}, max err {(c.double() - ref).abs().max().item():.3g}")
    big = torch.randn(40, 80, device="cuda").half()
    b2 = torch.randn(50, 33, device="cuda").half()
    for label, a, b in [("transposed", big.t()[:33], b2.t().contiguous().t()[:, :20]), ("sliced", big[:, ::2][1:], b2[:40])]:
        try:
            c = op(a, b)
            ok = torch.allclose(c.double(), a.double() @ b.double(), rtol=3e-3, atol=3e-3)
        except Exception as e:  # noqa: BLE001
            ok = short(e)
        if ok is not True:
            bad.append(f"{label}: {ok}")
    print("forward.cuda + noncontig.cuda:", "all right" if not bad else bad)


def opcheck_rows():
    for dt in (torch.float16, torch.float64):
        a = torch.randn(17, 33, device="cuda", dtype=dt, requires_grad=True)
        b = torch.randn(33, 5, device="cuda", dtype=dt, requires_grad=True)
        r = torch.library.opcheck(op, (a, b), raise_exception=False)
        print(f"opcheck cuda {dt}:", {k: v if isinstance(v, str) else short(v) for k, v in r.items()})
    a = torch.randn(6, 4, device="cuda", dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, 3, device="cuda", dtype=torch.float64, requires_grad=True)
    try:
        print("gradcheck cuda float64:", torch.autograd.gradcheck(op, (a, b), eps=1e-6, atol=1e-5, rtol=1e-3))
    except Exception as e:  # noqa: BLE001
        print("gradcheck cuda float64:", short(e))


def compile_rows():
    from torch._inductor.utils import run_and_get_code

    def f(x, y):
        return torch.ops.course.mm16(x, y) * 2.0

    a = torch.randn(70, 130, device="cuda").half()
    b = torch.randn(130, 18, device="cuda").half()
    torch._dynamo.reset()
    try:
        t0 = time.time()
        out, codes = run_and_get_code(torch.compile(f, fullgraph=True), a, b)
        ok = torch.allclose(out.double(), 2 * (a.double() @ b.double()), rtol=3e-3, atol=3e-3)
        code = "\n".join(codes)
        print(f"compile static: right={ok} dtype={out.dtype} ({time.time() - t0:.1f} s), {len(codes)} code file(s)")
        print("  generated code mentions mm16_kernel:", "mm16_kernel" in code,
              "| mentions course.mm16:", "course.mm16" in code, "| triton_kernel_wrapper:", "triton_kernel_wrapper" in code)
        for line in code.splitlines():
            if "mm16_kernel" in line and ("def " in line or ".run(" in line or "[grid" in line or "launch" in line):
                print("   ", line.strip()[:200])
    except Exception as e:  # noqa: BLE001
        print("compile static:", short(e))
    torch._dynamo.reset()
    graphs = [0]

    def counting(gm, example_inputs):
        graphs[0] += 1
        from torch._inductor.compile_fx import compile_fx

        return compile_fx(gm, example_inputs)

    try:
        cf = torch.compile(f, fullgraph=True, dynamic=True, backend=counting)
        rights = []
        for M, N in [(17, 5), (33, 40), (70, 18)]:
            x = torch.randn(M, 24, device="cuda").half()
            y = torch.randn(24, N, device="cuda").half()
            torch._dynamo.mark_dynamic(x, 0)
            torch._dynamo.mark_dynamic(y, 1)
            rights.append(torch.allclose(cf(x, y).double(), 2 * (x.double() @ y.double()), rtol=3e-3, atol=3e-3))
        print(f"compile dynamic: right={rights} graphs={graphs[0]}")
    except Exception as e:  # noqa: BLE001
        print("compile dynamic:", short(e), f"graphs={graphs[0]}")
    # the epilogue: a custom_op that mutates, under compile (auto_functionalized), after the triton_op
    torch._dynamo.reset()
    try:
        bias = torch.randn(18, device="cuda")
        out, codes = run_and_get_code(torch.compile(python_ops.mm16_scale_bias, fullgraph=True), a, b, 0.5, bias)
        ok = torch.allclose(out.double(), 0.5 * (a.double() @ b.double()) + bias.double(), rtol=3e-3, atol=3e-3)
        code = "\n".join(codes)
        print(f"compile mm16_scale_bias: right={ok}; code mentions course.scale_bias_: {'course.scale_bias_' in code},"
              f" mm16_kernel: {'mm16_kernel' in code}")
        for line in code.splitlines():
            if "scale_bias_" in line:
                print("   ", line.strip()[:200])
    except Exception as e:  # noqa: BLE001
        print("compile mm16_scale_bias:", short(e))


def capture_row():
    a = torch.randn(70, 130, device="cuda").half()
    b = torch.randn(130, 18, device="cuda").half()
    op(a, b)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            c = op(a, b)
        g.replay()
        torch.cuda.synchronize()
        print("cuda graph capture:", torch.allclose(c.double(), a.double() @ b.double(), rtol=3e-3, atol=3e-3))
    except Exception as e:  # noqa: BLE001
        print("cuda graph capture:", short(e))


def kernels_row():
    from torch.profiler import ProfilerActivity, profile

    a = torch.randn(70, 130, device="cuda").half()
    b = torch.randn(130, 18, device="cuda").half()
    op(a, b)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        op(a, b)
        torch.cuda.synchronize()
    names = set()

    def collect(event):
        names.update(k.name for k in event.kernels)
        for child in event.cpu_children:
            collect(child)

    for event in prof.events():
        if event.name == "course::mm16":
            collect(event)
    print("kernels inside course::mm16:", sorted(names))


for row in (forward_rows, opcheck_rows, compile_rows, capture_row, kernels_row):
    try:
        row()
    except Exception as e:  # noqa: BLE001
        print(row.__name__, "raised", short(e))
