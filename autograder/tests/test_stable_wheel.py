"""Exercise 10 shipped as its users ship it: the reference's wheel, built by pip from its setup.py against the course's
torch, installed by pip, imported, and run in the course's torch and in the older one (tools/setup.sh's second
environment), with the audit of the installed package.

    python test_stable_wheel.py COURSE_ROOT TORCH_PYTHON OLDER_TORCH_PYTHON

What it shows: the wheel is tagged cp39-abi3; `import mm16_stable` registers course::mm16 in both torches and its
products equal torch's own (float16 in, float32 out); torch-abi-audit finds no unstable symbol and a minimum torch at
most the target that setup.py passes, which must be exercise.json's torch_target. Exit 77 (SKIPPED) without nvcc,
without the older torch, or with COURSE_CUDA=off: the wheel's extension holds the CUDA launcher."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT, TORCH_PYTHON, OLDER_PYTHON = Path(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
problems = []


def skip(why):
    print(f"SKIPPED: {why}")
    sys.exit(77)


def expect(ok, what, seen=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {seen}" if seen and not ok else ""))
    if not ok:
        problems.append(what)


nvcc = Path(os.environ.get("CUDACXX", "/usr/local/cuda/bin/nvcc"))
if os.environ.get("COURSE_CUDA") == "off" or not nvcc.is_file():
    skip("no CUDA toolkit (the wheel's extension holds the CUDA launcher): set COURSE_CUDA=on with nvcc")
if not OLDER_PYTHON:
    skip("no environment of the older torch ('# torch-older:' of requirements/course.txt; tools/setup.sh makes it)")

exercise = json.loads((ROOT / "exercises" / "10_stable_abi" / "exercise.json").read_text())
major, minor = (int(x) for x in exercise["torch_target"].split("."))
setup_py = (ROOT / "solutions" / "10_stable_abi" / "setup.py").read_text()
expect(
    f'TARGET = "0x{major:02X}{minor:02X}000000000000"' in setup_py,
    f"setup.py passes TORCH_TARGET_VERSION {exercise['torch_target']}, exercise.json's torch_target",
)

work = Path(tempfile.mkdtemp(prefix="stable-wheel-"))
source = work / "src"
shutil.copytree(ROOT / "solutions" / "10_stable_abi", source)
env = dict(os.environ, CUDA_HOME=str(nvcc.parent.parent), TORCH_CUDA_ARCH_LIST="7.5;9.0", MAX_JOBS="2")
build = subprocess.run(
    [TORCH_PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", str(work / "dist"), str(source)],
    capture_output=True,
    text=True,
    env=env,
    timeout=900,
)
wheels = sorted((work / "dist").glob("mm16_stable-*.whl"))
expect(
    build.returncode == 0 and len(wheels) == 1,
    "pip builds one wheel from setup.py",
    build.stdout[-3000:] + build.stderr[-3000:],
)
if problems:
    sys.exit(1)
wheel = wheels[0]
expect(wheel.name.endswith("-cp39-abi3-linux_x86_64.whl"), "the wheel is tagged cp39-abi3", wheel.name)

RUN = """
import json, torch, mm16_stable
a = torch.randn(37, 19, dtype=torch.float16)
b = torch.randn(19, 23, dtype=torch.float16)
c = torch.ops.course.mm16(a, b)  # registered by the import
want = torch.mm(a.double(), b.double())
print(json.dumps({"torch": torch.__version__, "dtype": str(c.dtype), "shape": list(c.shape),
                  "close": bool(torch.allclose(c.double(), want, atol=1e-2, rtol=1e-2))}))
"""
AUDIT = """
import json, sys
from torch_abi_audit.inspect import inspect_package
r = inspect_package(sys.argv[1])
print(json.dumps([{"unstable": list(e.torch.unstable_symbols), "min": e.torch.min_torch_version,
                   "cpython_compliant": e.cpython.compliant} for e in r.extensions]))
"""
for name, python in (("the course's torch", TORCH_PYTHON), ("the older torch", OLDER_PYTHON)):
    site = work / ("site-" + name.split()[1].strip("'s"))
    install = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    expect(install.returncode == 0, f"pip installs the wheel for {name}", install.stderr[-2000:])
    # the installed package is found the way a user's is: on the interpreter's path (PYTHONPATH, the --target folder)
    ran = subprocess.run(
        [python, "-c", RUN],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=work,
        env=dict(os.environ, PYTHONPATH=str(site)),
    )
    try:
        seen = json.loads(ran.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        seen = {}
    expect(
        seen.get("close") is True and seen.get("dtype") == "torch.float32" and seen.get("shape") == [37, 23],
        f"import mm16_stable in {name} ({seen.get('torch', '?')}): course::mm16 computes a @ b, float32 out",
        (ran.stdout + ran.stderr)[-2000:],
    )
    if name == "the course's torch":
        audit = subprocess.run(
            [python, "-c", AUDIT, str(site / "mm16_stable")], capture_output=True, text=True, timeout=300
        )
        try:
            (ext,) = json.loads(audit.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            ext = {}
        expect(
            ext.get("unstable") == [] and ext.get("cpython_compliant") is True,
            "torch-abi-audit on the installed package: no symbol of torch's unstable API, CPython's limited API only",
            (audit.stdout + audit.stderr)[-2000:],
        )
        needs = tuple(int(x) for x in (ext.get("min") or "99.99").split(".")[:2])
        expect(needs <= (major, minor), f"the oldest torch it needs ({ext.get('min')}) is at most the target", str(ext))

shutil.rmtree(work, ignore_errors=True)
if problems:
    print(f"{len(problems)} problem(s): " + "; ".join(problems))
    sys.exit(1)
print("the wheel builds, installs and computes in both torches")
