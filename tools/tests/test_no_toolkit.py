"""The course without a CUDA toolkit, end to end (issue: the course on a student's own machine).

nvcc is hidden for real: a bubblewrap mount namespace puts an empty tmpfs over every CUDA toolkit folder and PATH
loses each folder that holds an nvcc. Inside it:
  1. set-up stops before creating any environment, naming the missing toolkit and COURSE_CUDA=off;
  2. with COURSE_CUDA=off the course configures and builds its CPU sources (a build folder of its own), and
     `./course grade` gives 03's reference full marks, fails 03's stub naming its TODO, grades 04's reference on its
     CPU rows with every toolkit row SKIPPED (the reason in each, the points left out in the totals), and grades
     chapters 7 and 8 against the CPU-only build of the course's operator;
  3. `./course doctor` says what the toolkit would add.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from clitest import SOURCE, expect, metadata, temp_dir

build = Path(sys.argv[1])  # the toolkit-less course's own build folder
bwrap = shutil.which("bwrap")
toolkits = sorted(
    {
        str(Path(p).resolve())
        for p in ("/usr/local/cuda", os.environ.get("CUDA_HOME", ""), *Path("/usr/local").glob("cuda-*"))
        if p and Path(p).is_dir()
    }
)
path = ":".join(d for d in os.environ["PATH"].split(":") if d and not Path(d, "nvcc").exists())
hide = [bwrap, "--dev-bind", "/", "/"] + [a for t in toolkits for a in ("--tmpfs", t)] if bwrap else []
env = {
    k: v
    for k, v in os.environ.items()
    if k not in ("CUDACXX", "COURSE_NVCC", "COURSE_CUDA", "CUDA_HOME", "COURSE_BUILD_DIR")
}
env["PATH"] = path


def hidden(argv, timeout=1500, fresh=False, **extra):
    """argv with nvcc hidden; fresh: as on a new machine, no COURSE_PYTHON (set-up would build its environment)"""
    base = {k: v for k, v in env.items() if not (fresh and k == "COURSE_PYTHON")}
    r = subprocess.run(
        hide + ["--"] + argv, capture_output=True, text=True, timeout=timeout, cwd=SOURCE, env=dict(base, **extra)
    )
    print(f"$ {' '.join(argv)}  {extra} -> {r.returncode}\n{r.stdout}{r.stderr}")
    return r


if not bwrap or subprocess.run([bwrap, "--dev-bind", "/", "/", "--", "true"]).returncode != 0:
    print("SKIPPED: bubblewrap cannot make a mount namespace here, so nvcc cannot be hidden")
    sys.exit(77)

r = hidden(["bash", "-c", "command -v nvcc || ls /usr/local/cuda/bin/nvcc"])
expect(r.returncode != 0, f"nvcc is hidden (tmpfs over {toolkits}, PATH without it)")

# 1. no environment is created before the missing toolkit is reported
tmp = temp_dir("no-toolkit")
r = hidden(["bash", "tools/setup.sh"], timeout=120, fresh=True, COURSE_CACHE=str(tmp / "cache"), COURSE_OFFLINE="1")
expect(
    r.returncode == 1 and "no CUDA toolkit" in r.stderr and "COURSE_CUDA=off" in r.stderr,
    "set-up stops, names the missing toolkit and the way to go on without it",
)
expect("nothing was downloaded" in r.stderr and not any((tmp / "cache").glob("venv-*")), "no environment was created")
shutil.rmtree(tmp, ignore_errors=True)

# 2. the toolkit-less course: its CPU sources built, the CUDA rows SKIPPED
off = {"COURSE_CUDA": "off", "COURSE_BUILD_DIR": str(build)}
r = hidden(["./course", "build"], **off)
expect(r.returncode == 0, "COURSE_CUDA=off ./course build builds the course without nvcc")
toolchain = json.loads((build / "toolchain.json").read_text())
expect(
    toolchain["nvcc"] == "" and not any(t["device"] == "cuda" for t in toolchain["harness_targets"]),
    "toolchain.json names no nvcc and no operator under test whose bug is in CUDA code",
)


def grade(ex, folder, want_rc):
    out = build / "grades-test" / f"{ex}-{Path(folder).parts[0]}"
    r = hidden(["./course", "grade", ex, folder, "--out", str(out), "--no-color"], **off)
    expect(r.returncode == want_rc, f"grade {ex} {folder}: exit {want_rc}")
    return json.loads((out / "rows.json").read_text()), r.stdout + r.stderr


def by_status(rows, status):
    return {row["id"] for row in rows["rows"] if row["status"] == status}


def toolkit_rows(ex):
    return {c["id"] for c in metadata(ex)["checks"] if c["toolkit"]}


rows, _ = grade("03_cpu", "solutions/03_cpu", 0)
expect(by_status(rows, "PASS") == {c["id"] for c in metadata("03_cpu")["checks"]}, "03's reference: every row passes")
rows, out = grade("03_cpu", "exercises/03_cpu", 1)
expect(by_status(rows, "FAIL") and "TODO(student)" in out, "03's stub fails, naming its TODO")

for ex in ("04_cuda", "07_testing", "08_profiling"):
    # every row that ran passed, but points were not graded here: not done, and the exit status says so (3)
    rows, out = grade(ex, f"solutions/{ex}", 3)
    skipped = by_status(rows, "SKIPPED")
    expect(
        skipped == toolkit_rows(ex) and by_status(rows, "FAIL") == set(),
        f"{ex}'s reference: the rows that ran pass, the toolkit's rows ({sorted(toolkit_rows(ex))}) are SKIPPED",
    )
    expect(
        all("no CUDA toolkit" in row["detail"] for row in rows["rows"] if row["id"] in skipped),
        f"{ex}: each SKIPPED row says why",
    )
    points = sum(c["points"] for c in metadata(ex)["checks"] if c["toolkit"])
    expect(
        rows["not_graded"]["why"] == {"needs the CUDA toolkit": points} and "NOT GRADED HERE" in out,
        f"{ex}: the totals say {points:g} points were not graded, and why",
    )
    expect(f"not done: {points:g} of " in out, f"{ex}: the last line says the exercise is not done ({points:g} points)")
    if ex == "04_cuda":
        build_row = next(row for row in rows["rows"] if row["id"] == "build")
        expect("CPU sources only" in build_row["detail"], "04's build row says its CUDA sources were not compiled")

# an instructor's --require-cuda grade counts the rows it could not run as failed: 09 runs none without the toolkit
out = build / "grades-test" / "09-require-cuda"
r = hidden(
    ["./course", "grade", "09_portability", "solutions/09_portability", "--require-cuda", "--out", str(out)], **off
)
rows = json.loads((out / "rows.json").read_text())
expect(
    r.returncode == 1 and by_status(rows, "FAIL") == toolkit_rows("09_portability") and rows["score"] == 0,
    "--require-cuda: every row that needs the toolkit FAILs (not graded, counted as failed)",
)

# 3. doctor says what the toolkit would add
r = hidden([sys.executable, "-m", "opcourse.cli", "doctor"], timeout=300, COURSE_CUDA="off")
expect("the toolkit would add" in r.stdout + r.stderr, "doctor says what the CUDA toolkit would add")
print("ok: the course without a CUDA toolkit")
