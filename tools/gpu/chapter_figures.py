"""The GPU figures chapters 8 and 9 quote, regenerated into a run's evidence folder (issue 26: measured, not retyped).

usage: chapter_figures.py OUT_DIR OPERATOR_LIBRARY PROBE_SOURCE NVCC [HARNESS_TARGETS_DIR]

profile (chapter 8): the grader's own workload (autograder/worker/groups_profiler.py, profile_workload) on CUDA with
  chapter 6's reference: key_averages().table (profile_table.txt), the event tree with each event's kernels
  (events_tree.txt), and the figures the chapter cites (profile.json).
jit (chapter 9): CUDA_FORCE_PTX_JIT=1 against torch's own kernels; the probe kernel built three ways, each run plain
  and under CUDA_FORCE_PTX_JIT=1; the first and second probe_run of a new process, with an empty, a filled and a
  disabled compute cache (jit.json, jit.txt). Every process is new, so no run inherits a loaded module.
harness (chapter 7, with HARNESS_TARGETS_DIR): the reference harness (solutions/07_testing/test_mm16.py) run against
  the operator under test that copies its result to the CPU (harness_wrong_device.txt: what its failing tests print).
figures.json gathers the parts, with the machine (GPU, driver, torch, CUDA), for the site to render.
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def machine():
    import torch

    smi = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True
    )
    name, driver = (smi.stdout.strip().splitlines() or [", "])[0].split(", ")
    return {"gpu": name, "driver": driver, "torch": torch.__version__, "cuda": torch.version.cuda}


def worker_module(name):
    """A module of the worker, autograder/worker/ (scripts the sandbox runs, not a package), loaded from its file;
    groups_profiler imports groups_common by that name, so the worker's modules are registered by theirs."""
    if name not in sys.modules:
        if name != "groups_common":
            worker_module("groups_common")
        spec = importlib.util.spec_from_file_location(name, ROOT / "autograder" / "worker" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def profile_part(out, library):
    import torch

    profile_workload = worker_module("groups_profiler").profile_workload

    torch.ops.load_library(library)
    prof = profile_workload("cuda", seed=0)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=16)
    (out / "profile_table.txt").write_text(table + "\n")
    lines = []

    def walk(event, depth):
        lines.append(f"{'  ' * depth}{event.name} | kernels: {[k.name for k in event.kernels]}")
        for child in event.cpu_children:
            walk(child, depth + 1)

    for event in prof.events():
        if event.cpu_parent is None and event.name.startswith("course::"):
            walk(event, 0)
    (out / "events_tree.txt").write_text("\n".join(lines) + "\n")
    rows = {e.key: e for e in prof.key_averages()}
    mm16 = rows["course::mm16"]
    kernel = next(e for key, e in rows.items() if "mm16_wmma_kernel" in key)
    figures = {
        "mm16_calls": mm16.count,
        "mm16_self_cuda_us": round(mm16.self_device_time_total, 3),
        "mm16_cuda_total_us": round(mm16.device_time_total, 3),
        "mm16_cpu_total_ms": round(mm16.cpu_time_total / 1000, 3),
        "wmma_kernel_launches": kernel.count,
        "wmma_kernel_cuda_us": round(kernel.device_time_total, 3),
        "copy_self_cpu_ms": round(rows["aten::copy_"].self_cpu_time_total / 1000, 3) if "aten::copy_" in rows else None,
        "lazy_function_loading_row": "Lazy Function Loading" in rows,
    }
    (out / "profile.json").write_text(json.dumps(figures, indent=1) + "\n")
    return figures


# the probe kernel's builds chapter 9's table names: CMake's CUDA_ARCHITECTURES spelling -> nvcc's -gencode flags
PROBE_BUILDS = {
    "75;90-real": ["-gencode=arch=compute_75,code=[sm_75,compute_75]", "-gencode=arch=compute_90,code=sm_90"],
    "75-real": ["-gencode=arch=compute_75,code=sm_75"],
    "75-virtual": ["-gencode=arch=compute_75,code=compute_75"],
}

# One new process: create the context (not timed), then time the first and the second probe_run.
RUN_PROBE = r"""
import ctypes, json, sys, time
cudart = ctypes.CDLL(sys.argv[2])
cudart.cudaFree(None)  # the context, before the clock starts
lib = ctypes.CDLL(sys.argv[1])
lib.probe_error_name.restype = ctypes.c_char_p
out = (ctypes.c_float * 1024)()
times, codes = [], []
for _ in range(2):
    t0 = time.perf_counter()
    codes.append(lib.probe_run(out, 1024))
    times.append((time.perf_counter() - t0) * 1000)
print(json.dumps({"codes": codes, "error": lib.probe_error_name(codes[0]).decode(), "ms": times}))
"""


def jit_part(out, probe_source, nvcc):
    work = Path(tempfile.mkdtemp(prefix="chapter-figures-"))
    import torch  # the toolkit's libcudart, else the one torch's wheels bring (nvidia/cu*/lib)

    site = Path(torch.__file__).parents[1]
    cudart = next(
        str(p)
        for p in [
            *(Path(nvcc).resolve().parents[1] / "lib64").glob("libcudart.so*"),
            *site.glob("nvidia/*/lib/libcudart.so*"),
        ]
    )
    libs = {}
    for name, flags in PROBE_BUILDS.items():
        lib = work / f"libprobe_{name.replace(';', '_')}.so"
        subprocess.run(
            [nvcc, "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared", *flags, str(probe_source), "-o", str(lib)],
            check=True,
        )
        libs[name] = lib

    def run(lib, **env):
        r = subprocess.run(
            [sys.executable, "-c", RUN_PROBE, str(lib), cudart],
            capture_output=True,
            text=True,
            env=dict(os.environ, **env),
            timeout=120,
        )
        if r.returncode != 0:
            return {"error": (r.stderr.strip().splitlines() or ["no output"])[-1], "codes": None, "ms": None}
        return json.loads(r.stdout)

    result = {}
    torch_jit = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.ones(4, device='cuda') + 1)"],
        capture_output=True,
        text=True,
        env=dict(os.environ, CUDA_FORCE_PTX_JIT="1"),
        timeout=300,
    )
    result["torch_under_force_ptx_jit"] = {
        "exit_code": torch_jit.returncode,
        "last_line": ((torch_jit.stderr or torch_jit.stdout).strip().splitlines() or [""])[-1],
        "error_line": next((l for l in torch_jit.stderr.splitlines() if "Error" in l), ""),
    }
    cache = work / "cache"
    result["fallbacks"] = {
        name: {
            "plain": run(lib, CUDA_CACHE_PATH=str(cache)),
            "force_ptx_jit": run(lib, CUDA_CACHE_PATH=str(cache), CUDA_FORCE_PTX_JIT="1"),
        }
        for name, lib in libs.items()
    }
    timing_cache = work / "timing-cache"  # empty at the start, as chapter 9's timing table says
    sequence = [
        ("75;90-real", {}, "sm_90 machine code"),
        ("75-virtual", {}, "PTX, empty cache"),
        ("75-virtual", {}, "PTX, cache now filled"),
        ("75;90-real", {}, "machine code again"),
        ("75-virtual", {"CUDA_CACHE_DISABLE": "1"}, "PTX, CUDA_CACHE_DISABLE=1"),
        ("75-virtual", {"CUDA_CACHE_DISABLE": "1"}, "PTX, CUDA_CACHE_DISABLE=1"),
    ]
    result["timings"] = [
        {"build": name, "what": what, **run(libs[name], CUDA_CACHE_PATH=str(timing_cache), **env)}
        for name, env, what in sequence
    ]
    (out / "jit.json").write_text(json.dumps(result, indent=1) + "\n")
    text = [
        f"{t['build']:<12} {t['what']:<28} first {t['ms'][0]:8.2f} ms  second {t['ms'][1]:6.2f} ms"
        if t["codes"] == [0, 0]
        else f"{t['build']:<12} {t['what']:<28} {t['error']}"
        for t in result["timings"]
    ]
    (out / "jit.txt").write_text("\n".join(text) + "\n")
    return result


def harness_part(out, targets):
    """Chapter 7's reference harness against the wrong_device operator: its unittest output, as the chapter quotes it."""
    lib = Path(targets) / "wrong_device" / "libmm16_autograd.so"
    run = subprocess.run(
        [sys.executable, str(ROOT / "solutions" / "07_testing" / "test_mm16.py"), "-v"],
        env=dict(os.environ, MM16_LIBRARY=str(lib)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    (out / "harness_wrong_device.txt").write_text(run.stdout + run.stderr)
    failing = [
        line.split(":", 1)[1].strip()
        for line in (run.stdout + run.stderr).splitlines()
        if line.startswith(("FAIL:", "ERROR:"))
    ]
    return {"exit_code": run.returncode, "failing_tests": failing}


def main():
    out, library, probe_source, nvcc = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    targets = sys.argv[5] if len(sys.argv) > 5 else None
    out.mkdir(parents=True, exist_ok=True)
    figures = {"machine": machine(), "date": time.strftime("%Y-%m-%d")}
    parts = [("profile", lambda: profile_part(out, library)), ("jit", lambda: jit_part(out, probe_source, nvcc))]
    if targets:
        parts.append(("harness", lambda: harness_part(out, targets)))
    for part, fn in parts:
        try:
            figures[part] = fn()
        except Exception as e:  # noqa: BLE001 - one part failing must not lose the other's figures
            figures[part] = {"failed": f"{type(e).__name__}: {e}"}
            print(f"chapter_figures: {part} failed: {e}", file=sys.stderr)
    (out / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures, indent=1))
    return 0 if all("failed" not in figures[p] for p, _ in parts) else 1


if __name__ == "__main__":
    sys.exit(main())
