"""What a student's regrade costs: `./course grade 03_cpu DIR` after a one-line edit of the code, three times (median),
through the student's own door (set-up, the build's check, the judge). It must cost the judge's own work (the compile
of the edited file, then the checks) plus at most 5 s for the door (the issue of the student's first hour: before,
each round also rebuilt every stub with CMake and imported torch in the set-up, 61-64 s where the judge took 15 s)."""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from clitest import SOURCE, expect, temp_dir

build = Path(sys.argv[1])
tmp = temp_dir("regrade")
try:
    sub = tmp / "03_cpu"
    shutil.copytree(SOURCE / "solutions" / "03_cpu", sub)
    out = tmp / "grade"
    argv = [str(SOURCE / "course"), "grade", "03_cpu", str(sub), "--out", str(out), "--no-color"]
    env = dict(os.environ, COURSE_BUILD_DIR=str(build))  # the environment the build was configured in
    subprocess.run(argv, capture_output=True, timeout=900, env=env)  # the first grade (a cold compile) is not counted
    walls, compiles, judges = [], [], []
    for i in range(3):
        with open(sub / "mm16_cpu.cpp", "a") as fh:  # code, not a comment: ccache must not find it
            fh.write(f"static int regrade_edit_{i} = {time.monotonic_ns() % 100000};\n")
        t0 = time.monotonic()
        r = subprocess.run(argv, capture_output=True, text=True, timeout=900, env=env)
        walls.append(time.monotonic() - t0)
        rows = json.loads((out / "rows.json").read_text())
        compiles.append(sum(t["seconds"] for t in rows["timeline"] if t["what"] == "compile mm16_cpu.cpp"))
        judges.append(rows["seconds"])
        expect(r.returncode == 0 and rows["failed"] == 0, f"round {i}: the edited reference still passes")
        print(
            f"round {i}: {walls[-1]:.1f} s in all, the judge {judges[-1]:.1f} s "
            f"(its compile of mm16_cpu.cpp {compiles[-1]:.1f} s)"
        )
    wall, judge_s, compile_s = statistics.median(walls), statistics.median(judges), statistics.median(compiles)
    print(
        f"median: {wall:.1f} s in all, the judge {judge_s:.1f} s ({compile_s:.1f} s its compile): "
        f"the door {wall - judge_s:.1f} s"
    )
    expect(compile_s > 1, "each edit was compiled (not a cache hit)")
    expect(
        wall <= judge_s + 5, f"a regrade costs at most the judge's own work plus 5 s ({wall:.1f} s > {judge_s:.1f} + 5)"
    )
    print("ok: regrade cost")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
