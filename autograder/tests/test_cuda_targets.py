"""Every operator library the course builds from a .cu source embeds the default targets:
sm_75 and sm_90 machine code (cubin) and compute_75 PTX."""

import glob
import os
import subprocess
import sys

build, python = sys.argv[1], sys.argv[2]


def find_cuobjdump():
    for c in ("cuobjdump", "/usr/local/cuda/bin/cuobjdump"):
        if subprocess.run(["sh", "-c", f"command -v {c}"], capture_output=True).returncode == 0:
            return c
    # triton's wheel (a dependency of torch) ships one
    out = subprocess.run(
        [python, "-c", "import triton, os; print(os.path.dirname(triton.__file__))"], capture_output=True, text=True
    )
    path = os.path.join(out.stdout.strip(), "backends", "nvidia", "bin", "cuobjdump")
    return path if os.path.exists(path) else None


cuobjdump = find_cuobjdump()
if not cuobjdump:
    sys.exit("no cuobjdump found (PATH, /usr/local/cuda/bin, triton's wheel)")
libs = []
for meta in glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "exercises", "*", "exercise.json")):
    import json

    m = json.load(open(meta))
    if any(s.endswith(".cu") for s in m["sources"]):
        libs.append(os.path.join(build, "lib", "solutions", m["id"], f"lib{m['library']}.so"))
if not libs:
    sys.exit("no exercise has a .cu source: nothing proves the CUDA targets")
for lib in libs:
    out = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", lib], capture_output=True, text=True)
    print(f"$ cuobjdump --list-elf --list-ptx {lib}\n{out.stdout}{out.stderr}")
    missing = [
        t
        for t, pat in (
            ("sm_75 cubin", ".sm_75.cubin"),
            ("sm_90 cubin", ".sm_90.cubin"),
            ("compute_75 PTX", ".sm_75.ptx"),
        )
        if pat not in out.stdout
    ]
    if out.returncode != 0 or missing:
        sys.exit(f"{lib}: missing {missing}")
print(f"{len(libs)} CUDA operator library(ies): sm_75 + sm_90 cubin and compute_75 PTX present")
