"""./course watch: regrades on save, shows the build's progress, then the table (real judge); a save that breaks the
build leads with the first compiler error."""

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from clitest import CLI, SOURCE, expect, max_points, metadata, temp_dir

FULL = max_points("02_schema")

build = Path(sys.argv[1])
tmp = temp_dir("watch")
try:
    sub = tmp / "02_schema"
    shutil.copytree(SOURCE / "solutions" / "02_schema", sub)
    import os

    env = dict(os.environ, COURSE_BUILD_DIR=str(build))
    argv = [
        sys.executable,
        *CLI,
        "watch",
        "02_schema",
        "--dir",
        str(sub),
        "--out",
        str(tmp / "grade"),
        "--interval",
        "0.2",
        "--once-after-change",
    ]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(2)
    expect(proc.poll() is None, "watch waits for a change")
    expect(not (tmp / "grade").exists(), "--once-after-change does not grade before a change")
    with open(sub / "mm16_schema.cpp", "a") as fh:
        fh.write("// saved by the test\n")
    out, _ = proc.communicate(timeout=600)
    print(out)
    expect(proc.returncode == 0, "the reference solution passes: watch exits 0")
    expect("changed: mm16_schema.cpp" in out, "watch names the changed file")
    expect("compiling mm16_schema.cpp" in out, "watch shows the build's progress")
    live = [l for l in out.splitlines() if re.match(r"^  (PASS|FAIL|SKIPPED) +\S+  [a-z][\w.]*: ", l)]
    expect(
        live and live[0].startswith("  PASS") and " build: built " in live[0],
        f"then each row as it is decided, the build first: {live[:2]}",
    )
    expect(len(live) == len(metadata("02_schema")["checks"]), f"every row, once: {len(live)} lines")
    expect(out.index(live[-1]) < out.index("02_schema - "), "the rows as decided come before the judge's table")
    expect(f"score {FULL}/{FULL}" in out and "graded in" in out, "then the judge's table")
    expect((tmp / "grade" / "rows.json").is_file(), "the grade lands in --out")

    # --max-iterations bounds a watch that grades at start
    argv = [
        sys.executable,
        *CLI,
        "watch",
        "02_schema",
        "--dir",
        str(sub),
        "--out",
        str(tmp / "grade2"),
        "--max-iterations",
        "1",
    ]
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    print(r.stdout + r.stderr)
    expect(r.returncode == 0 and f"score {FULL}/{FULL}" in r.stdout, "an initial grade, then --max-iterations 1 stops")

    # a save that breaks the build: what watch prints for it leads with the first compiler error (file:line:column)
    lines = (sub / "mm16_schema.cpp").read_text().count("\n")
    argv = [
        sys.executable,
        *CLI,
        "watch",
        "02_schema",
        "--dir",
        str(sub),
        "--out",
        str(tmp / "grade"),
        "--interval",
        "0.2",
        "--once-after-change",
    ]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(2)
    with open(sub / "mm16_schema.cpp", "a") as fh:
        fh.write("int broken = undeclared_name;\n")
    out, _ = proc.communicate(timeout=600)
    print(out)
    first = f"first error: mm16_schema.cpp:{lines + 1}:14: 'undeclared_name' was not declared in this scope"
    expect(proc.returncode == 1, "a build that fails: watch exits 1")
    after_change = out.split("regrading 02_schema", 1)[-1].lstrip("\n").splitlines()
    after_change = [l for l in after_change if not re.match(r"^  .* \.\.\. +\d+ s$", l)]  # the progress lines
    expect(after_change[:1] == [first], f"the regrade's output leads with {first!r}, not {after_change[:1]}")
    expect(out.index(first) < out.index("02_schema - "), "the first error comes before the table")
    print("ok: watch")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
