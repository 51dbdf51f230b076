"""A student's first hour, in a fresh copy of the course with its own build folder: a file of 03 that does not
compile is 03's `build` row with its first error (the table, exit 1), never a failed command, and 01 grades normally
beside it; the first grade shows its build's progress, and the copy's build reuses the compiler cache the other
clones of this machine filled (its paths are keyed relative to the clone)."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from clitest import SOURCE, expect, temp_dir

tmp = temp_dir("first-hour")
try:
    clone = tmp / "course"
    files = subprocess.run(["git", "-C", str(SOURCE), "ls-files", "-z"], capture_output=True, check=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        if rel.split("/", 1)[0] in ("evidence", "chapters"):
            continue  # neither is read by a build or a grade
        src = SOURCE / rel
        if src.is_file():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, clone / rel)
    stub = clone / "exercises" / "03_cpu" / "mm16_cpu.cpp"
    stub.write_text(stub.read_text().replace("const int64_t M = a.size(0)", "const int64_t M = a_size_typo(0)", 1))
    env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_BUILD")}
    env["COURSE_BUILD_DIR"] = str(clone / "build")

    def ccache_hits() -> int:
        r = subprocess.run(
            ["ccache", "--print-stats"],
            capture_output=True,
            text=True,
            env=dict(env, CCACHE_DIR=str(Path.home() / ".cache" / "opcourse" / "ccache")),
        )
        stats = dict(line.split("\t") for line in r.stdout.splitlines() if "\t" in line)
        return int(stats.get("direct_cache_hit", 0)) + int(stats.get("preprocessed_cache_hit", 0))

    def grade(ex):
        t0 = time.monotonic()
        r = subprocess.run(
            [str(clone / "course"), "grade", ex, "--no-color"], capture_output=True, text=True, env=env, timeout=3000
        )
        out = r.stdout + r.stderr
        print(f"$ ./course grade {ex}  -> {r.returncode} in {time.monotonic() - t0:.0f} s\n{out[-3000:]}")
        return r.returncode, out

    hits = ccache_hits() if shutil.which("ccache") else None
    rc, out = grade("03_cpu")
    expect(rc == 1, "03 with a compile error: the judge's verdict (exit 1), not a failed command")
    expect(
        re.search(r"build\s+FAIL\s+0/1\s+mm16_cpu\.cpp:\d+:\d+: .*a_size_typo", out),
        "the table's build row names the first error, file and line",
    )
    expect("failed (full log:" not in out, "no build of the course failed (only the judge's build of the submission)")
    expect(
        re.search(r"\[\d+/\d+\] ", out) and "course: building what grading 03_cpu needs" in out,
        "the first grade says what it builds and shows its steps",
    )
    if hits is not None:
        now = ccache_hits()
        print(f"ccache hits during the first grade: {now - hits}")
        expect(now > hits, "the fresh copy's build reused the shared compiler cache")
    rc, out = grade("01_custom_op")
    expect(
        rc == 1 and re.search(r"build\s+PASS", out) and re.search(r"op\.schema\s+FAIL", out),
        "01's stub grades normally (its build passes, its TODOs fail) while 03 does not compile",
    )
    print("ok: a student's first hour")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
