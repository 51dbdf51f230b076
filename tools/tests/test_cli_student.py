"""./course list / hint / reset / doctor, in a throwaway copy of the course."""

import json
import re
import os
import shutil
import sys
import time

from clitest import course_copy, env_for, expect, judge_row, judge_rows, run, temp_dir

what = sys.argv[1]
tmp = temp_dir(what)
try:
    root = course_copy(tmp)
    build = tmp / "build"
    env = env_for(root, build)
    ex = "02_schema"
    meta = json.loads((root / "exercises" / ex / "exercise.json").read_text())
    src = root / "exercises" / ex / meta["sources"][0]
    original = src.read_text()

    if what == "list":
        rc, out = run(["list"], env=env)
        expect(rc == 0 and re.search(rf"{ex}\s+not started", out), "an untouched stub is listed as not started")
        expect("0/" in out and "next: ./course grade" in out, "the summary line and the next step")
        src.write_text(original + "\n// my work\n")
        rc, out = run(["list"], env=env)
        expect("not graded" in out, "an edited, never graded exercise says so")
        grades = root / ".course" / "grades" / ex  # the student's, outside build/: a rebuild keeps them
        grades.mkdir(parents=True)
        rows = judge_rows(
            ex,
            score=3,
            max_score=8,
            passed=2,
            failed=3,
            rows=[judge_row("schema.mm16", "FAIL"), judge_row("build", "PASS")],
        )
        (grades / "rows.json").write_text(json.dumps(rows))
        rc, out = run(["list"], env=env)
        expect("failing" in out and "3/8" in out and "schema.mm16" in out, "a failing grade: score and failing rows")
        expect("(edited since)" not in out, "a grade newer than the sources is current")
        time.sleep(0.05)
        os.utime(src, (time.time() + 5, time.time() + 5))
        rc, out = run(["list"], env=env)
        expect("(edited since)" in out, "a source newer than the grade is flagged")
        rows.update(score=8, passed=5, failed=0, rows=[])
        (grades / "rows.json").write_text(json.dumps(rows))
        os.utime(src, (time.time() - 100, time.time() - 100))
        rc, out = run(["list"], env=env)
        expect(re.search(rf"{ex}\s+done", out) and "8/8" in out, "a passing grade is done")
        # every row that ran passed, but points were not graded here (no GPU): not done
        rows.update(not_graded={"points": 4, "why": {"needs a CUDA device": 4}})
        (grades / "rows.json").write_text(json.dumps(rows))
        rc, out = run(["list"], env=env)
        expect(
            re.search(rf"{ex}\s+not done", out) and "4 more points not graded here" in out,
            "a grade with points not graded here is not done",
        )
        rows.update(not_graded={"points": 0, "why": {}})
        (grades / "rows.json").write_text(json.dumps(rows))
        shutil.rmtree(build, ignore_errors=True)  # a rebuild (a toolkit switch) starts from an empty build folder
        rc, out = run(["list"], env=env)
        expect(re.search(rf"{ex}\s+done", out), "the grades outlive the build folder")
        src.write_text(original)
        rc, out = run(["list"], env=env)
        expect(re.search(rf"{ex}\s+not started", out), "back to the stub: not started again")
        # a course downloaded as an archive (no git): set-up keeps the stubs as they are at the first run
        shutil.rmtree(root / ".git")
        shutil.rmtree(root / ".course")
        rc, out = run(["snapshot-stubs"], env=env)
        src.write_text(original + "\n// my work\n")
        rc, out = run(["list"], env=env)
        expect(not re.search(rf"{ex}\s+not started", out), "without git, an edit after set-up is still seen")
        rc, out = run(["reset", ex, "--yes"], env=env)
        expect(rc == 0 and src.read_text() == original, "without git, reset restores the copy set-up kept")

    elif what == "hint":
        hints = meta["hints"]
        for i in range(1, len(hints) + 2):
            rc, out = run(["hint", ex], env=env)
            n = min(i, len(hints))
            expect(rc == 0 and f"hint {n}/{len(hints)}: {hints[n - 1]}" in out, f"call {i} shows hint {n}")
            expect(f"hint {n + 1}/" not in out, f"call {i} does not show hint {n + 1}")
        expect("last hint" in out, "the end of the hints is said")
        rc, out = run(["hint", "2"], env=env)
        expect(f"hint {len(hints)}/" in out, "the exercise number works and the count is remembered")
        rc, out = run(["hint", ex, "--reset"], env=env)
        rc, out = run(["hint", ex], env=env)
        expect(f"hint 1/{len(hints)}" in out and "hint 2/" not in out, "--reset starts over")
        rc, out = run(["hint", "99_nothing"], env=env)
        expect(
            rc == 2 and "the exercises are" in out and "02_schema" in out and len(out.strip().splitlines()) == 1,
            "an unknown exercise lists the known ones, in one line",
        )

    elif what == "reset":
        rc, out = run(["reset", ex], env=env)
        expect(rc == 0 and "already the original" in out, "nothing to reset on an untouched stub")
        src.write_text(original + "\n// precious work\n")
        rc, out = run(["reset", ex], env=env, input="")
        expect(rc == 1 and "--yes" in out, "without a terminal and without --yes it refuses")
        expect("precious work" in src.read_text(), "a refused reset changes nothing")
        rc, out = run(["reset", ex, "--yes"], env=env)
        expect(rc == 0 and src.read_text() == original, "--yes restores the stub")
        backups = list((root / ".course" / "backups").glob(f"{ex}-*/{src.name}"))
        expect(len(backups) == 1 and "precious work" in backups[0].read_text(), "the student's version is backed up")
        # the pristine copy is kept: a commit of the student's work does not change what reset restores
        src.write_text(original + "\n// committed work\n")
        import subprocess

        subprocess.run(
            ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "w"], check=True
        )
        rc, out = run(["reset", ex, "-y"], env=env)
        expect(src.read_text() == original, "reset restores the original even after the student committed")

    elif what == "doctor":
        rc, out = run(["doctor"], env=dict(os.environ))
        expect(rc == 0 and "doctor: everything the course needs is here" in out, "doctor passes on this machine")
        for name in (
            "python + torch",
            "torch CUDA = nvcc major",
            "cmake",
            "ninja",
            "C++20 compiler",
            "doctest headers",
            "nlohmann-json headers",
            "ccache",
            "bubblewrap",
            "chromium",
        ):
            expect(name in out, f"doctor checks {name}")
        empty = tmp / "emptybin"
        empty.mkdir()
        bad = dict(os.environ, PATH=str(empty), CXX="", COURSE_DEPS_ROOT="")
        bad.pop("CXX")
        rc, out = run(["doctor"], env=bad)
        expect(rc == 1 and "MISSING" in out, "missing tools make doctor fail")
        expect(
            "fix: apt-get update && apt-get install -y --no-install-recommends ninja-build" in out,
            "the exact fix command for ninja",
        )
        expect(
            "fix: apt-get update && apt-get install -y --no-install-recommends ccache" in out,
            "the fix command for an optional tool",
        )
    else:
        expect(False, f"unknown test {what}")
    print(f"ok: {what}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
