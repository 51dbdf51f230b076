"""Loads a stable-ABI wheel of course::mm16 into the torch of the python running this, and says what it computes.

    python tools/gpu/stable_wheel_probe.py WHEEL [--json OUT] [--cuda-only]

The wheel is unpacked into a temporary folder (as pip would lay it out in site-packages), imported as `mm16_stable`,
and exercised on the CPU and, where a CUDA device is present, on it; every figure is compared with torch's own matmul
in float64. Each line says PASS, FAIL or SKIPPED with its reason. Exit status 1 when anything FAILED, 2 when the wheel
cannot be loaded (the import error is printed). This is the probe of issue 47 (chapter 10), kept as a repo command so
that the next session's GPU machine can repeat it: the exercise's graded rows replace it."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import zipfile

RESULTS: list[dict] = []


def record(name, status, detail=""):
    RESULTS.append({"check": name, "status": status, "detail": detail})
    print(f"{status:8} {name}: {detail}", flush=True)


def close(name, got, want, atol, rtol):
    import torch

    err = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
    ok = got.shape == want.shape and torch.allclose(got.double(), want.double(), atol=atol, rtol=rtol)
    record(name, "PASS" if ok else "FAIL", f"shape {tuple(got.shape)} dtype {got.dtype}, max |error| {err:.3g}")


def cpu_checks(torch, mm16):
    g = torch.Generator().manual_seed(7)
    for dtype, tol in ((torch.float16, 1e-2), (torch.float32, 1e-4), (torch.float64, 1e-10)):
        a = torch.randn(37, 19, generator=g).to(dtype)
        b = torch.randn(19, 23, generator=g).to(dtype)
        close(f"forward.cpu {dtype}", mm16(a, b), a.double() @ b.double(), tol, tol)
    a = torch.randn(19, 37, generator=g).half().t()
    b = torch.randn(23, 19, generator=g).half().t()
    close("noncontig.cpu", mm16(a, b), a.double() @ b.double(), 1e-2, 1e-2)
    try:
        mm16(torch.randn(3, 4), torch.randn(5, 6))
        record("contract.cpu", "FAIL", "a 3x4 @ 5x6 call returned")
    except RuntimeError as e:
        record("contract.cpu", "PASS", f"RuntimeError: {str(e).splitlines()[0][:120]}")
    m = mm16(
        torch.empty(5, 7, device="meta", dtype=torch.float16), torch.empty(7, 3, device="meta", dtype=torch.float16)
    )
    ok = m.shape == (5, 3) and m.dtype == torch.float32 and m.device.type == "meta"
    record("fake.meta", "PASS" if ok else "FAIL", f"{tuple(m.shape)} {m.dtype} {m.device}")
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    f = torch.compile(lambda x, y: mm16(x, y) * 2, backend=counter, fullgraph=True, dynamic=True)
    for m_, k_, n_ in ((33, 17, 9), (40, 20, 11), (50, 3, 7)):
        x = torch.randn(m_, k_, generator=g).half()
        y = torch.randn(k_, n_, generator=g).half()
        f(x, y)
    record(
        "compile.dynamic",
        "PASS" if counter.frame_count == 1 else "FAIL",
        f"{counter.frame_count} compilation(s) for three shapes",
    )
    a = torch.randn(6, 5, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(5, 4, dtype=torch.float64, generator=g, requires_grad=True)
    ok = torch.autograd.gradcheck(mm16, (a, b))
    record("autograd.gradcheck", "PASS" if ok else "FAIL", "float64, CPU")


def cuda_checks(torch, mm16):
    if not torch.cuda.is_available():
        for name in ("forward.cuda", "noncontig.cuda", "stream.cuda", "guard.cuda"):
            record(name, "SKIPPED", "no CUDA device on this machine")
        return
    dev = torch.device("cuda", 0)
    g = torch.Generator(device=dev).manual_seed(7)
    for m_, k_, n_ in ((64, 64, 64), (37, 19, 23), (1, 300, 17), (5, 0, 3)):
        a = torch.randn(m_, k_, device=dev, generator=g).half()
        b = torch.randn(k_, n_, device=dev, generator=g).half()
        close(f"forward.cuda {m_}x{k_}x{n_}", mm16(a, b), a.double() @ b.double(), 2e-2, 1e-2)
    a = torch.randn(40, 70, device=dev, generator=g).half().t()
    b = torch.randn(50, 40, device=dev, generator=g).half().t()
    close("noncontig.cuda", mm16(a, b), a.double() @ b.double(), 2e-2, 1e-2)
    # The current stream: on a side stream, the inputs are written after a long sleep; a kernel launched on the
    # default stream would read them before they are there.
    src_a = torch.randn(512, 512, device=dev, generator=g).half()
    src_b = torch.randn(512, 512, device=dev, generator=g).half()
    a = torch.zeros_like(src_a)
    b = torch.zeros_like(src_b)
    side = torch.cuda.Stream(device=dev)
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)
        a.copy_(src_a)
        b.copy_(src_b)
        c = mm16(a, b)
    side.synchronize()
    close("stream.cuda (side stream after a sleep)", c, src_a.double() @ src_b.double(), 5e-2, 1e-2)
    if torch.cuda.device_count() < 2:
        record("guard.cuda", "SKIPPED", f"{torch.cuda.device_count()} CUDA device(s): a device guard needs two to show")
    else:
        a = torch.randn(33, 17, device="cuda:1").half()
        b = torch.randn(17, 9, device="cuda:1").half()
        with torch.cuda.device(0):
            c = mm16(a, b)
        ok = c.device == a.device
        close("guard.cuda", c.cpu(), (a.double() @ b.double()).cpu(), 2e-2, 1e-2) if ok else record(
            "guard.cuda", "FAIL", f"output on {c.device}, inputs on {a.device}"
        )


def load_package(folder, name):
    """Imports package `name` from `folder` (an unpacked wheel) without touching the module search path."""
    import importlib.util

    init = os.path.join(folder, name, "__init__.py")
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[os.path.dirname(init)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheel")
    ap.add_argument("--json", help="write the results here as JSON")
    ap.add_argument("--cuda-only", action="store_true", help="the CUDA checks only (for a run under compute-sanitizer)")
    args = ap.parse_args()
    import torch

    print(
        f"python {sys.version.split()[0]}, torch {torch.__version__} (CUDA {torch.version.cuda}), "
        f"devices {torch.cuda.device_count()}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as target:
        with zipfile.ZipFile(args.wheel) as wheel:  # a wheel is a zip of the site-packages tree (no pip needed)
            wheel.extractall(target)
        try:
            mm16_stable = load_package(target, "mm16_stable")
        except Exception as e:  # noqa: BLE001  (any load failure is the finding: printed as PyTorch gave it)
            record("load", "FAIL", f"{type(e).__name__}: {e}")
            return 2
        record("load", "PASS", f"{os.path.basename(args.wheel)} imported from {mm16_stable.__file__}")
        if not args.cuda_only:
            cpu_checks(torch, torch.ops.course.mm16)
        cuda_checks(torch, torch.ops.course.mm16)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"torch": torch.__version__, "python": sys.version.split()[0], "results": RESULTS}, f, indent=1)
    return 1 if any(r["status"] == "FAIL" for r in RESULTS) else 0


if __name__ == "__main__":
    sys.exit(main())
