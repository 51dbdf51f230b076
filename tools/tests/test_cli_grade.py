"""./course grade: its options go anywhere on the line (before or after EX and DIR), the judge's output and exit
status reach the user unchanged, and an unknown option is a usage error before any set-up or build."""

import json
import os
import shutil
import subprocess
import time
import sys
from pathlib import Path

from clitest import SOURCE, expect, max_points, run, temp_dir

build = Path(sys.argv[1])
tmp = temp_dir("grade")
try:
    env = dict(os.environ, COURSE_BUILD_DIR=str(build))
    solution = SOURCE / "solutions" / "02_schema"
    for i, args in enumerate(
        (
            ["grade", "02_schema", str(solution), "--out", str(tmp / "after"), "--no-color"],
            ["grade", "--out", str(tmp / "before"), "--no-color", "02_schema", str(solution)],
            ["grade", "02_schema", "--seed", "7", "--out", str(tmp / "between"), str(solution), "--no-color"],
        )
    ):
        out_dir = Path(args[args.index("--out") + 1])
        rc, out = run(args, env=env)
        expect(rc == 0, f"{out_dir.name}: the reference solution passes (exit 0)")
        rows = json.loads((out_dir / "rows.json").read_text())
        expect(
            rows["exercise"] == "02_schema" and rows["failed"] == 0 and rows["score"] == max_points("02_schema"),
            f"{out_dir.name}: --out DIR gets rows.json, wherever --out is on the line",
        )
        expect(out.rstrip().endswith(f"results in {out_dir})"), f"{out_dir.name}: the judge's output, nothing after it")
    expect("(seed 7;" in out, "--seed reaches the judge")

    # the stub: the judge's exit status 1 (a check failed) and its table come through unchanged
    rc, out = run(
        ["grade", "--no-color", "2", str(SOURCE / "exercises" / "02_schema"), "--out", str(tmp / "stub")], env=env
    )
    table = (tmp / "stub" / "table.txt").read_text()
    expect(rc == 1 and table in out, "a failing check: exit 1, and the judge's table as it printed it")

    # --list reaches the judge too (it lists the checks without building anything)
    rc, out = run(["grade", "02_schema", "--list"], env=env)
    expect(rc == 0 and "schema.mm16.out" in out, "--list lists the checks")

    # usage errors: argparse's, naming the option, exit 2, and nothing graded
    for bad, says in (
        (
            ["grade", "02_schema", str(solution), "--bogus", "--out", str(tmp / "bogus")],
            "unrecognized arguments: --bogus",
        ),
        (["grade", "--seed", "-1", "02_schema"], "argument --seed"),
        (["grade", "--out"], "argument --out: expected one argument"),
        (["grade"], "required: EX"),
    ):
        rc, out = run(bad, env=env)
        expect(
            rc == 2 and says in out and "--help` lists the options" in out and len(out.strip().splitlines()) == 1,
            f"{bad[1:]}: a usage error in one line, with where the options are ({says})",
        )
    expect(not (tmp / "bogus").exists(), "an unknown option grades nothing")
    rc, out = run(["grade", "--help"], env=env)
    expect(
        rc == 0 and all(o in out for o in ("--out DIR", "--seed N", "--worker-timeout S", "--no-color")),
        "--help explains the options",
    )

    # ./course itself checks the arguments before the set-up and the build (which it would otherwise run first)
    # every usage error is one line with the fix, exit 2, in under 2 s: an unknown exercise (with the closest one), a
    # folder that does not exist, a bad option, an unknown command
    for args, want_rc, says in (
        (["grade", "02_schema", "--bogus"], 2, "unrecognized arguments: --bogus"),
        (["grade", "--help"], 0, "--worker-timeout S"),
        (["batch", "--jobs"], 2, "argument --jobs/-j: expected one argument"),
        (["grade", "99_nope"], 2, "no exercise '99_nope'"),
        (["grade", "schemaa"], 2, "did you mean 02_schema?"),
        (["grade", "03_cpu", "/nonexistent"], 2, "no submission folder '/nonexistent'"),
        (["watch", "3", "--dir", "/nonexistent"], 2, "no folder to watch '/nonexistent'"),
        (["batch", "/nonexistent"], 2, "no folder of submissions '/nonexistent'"),
        (["gradee", "3"], 2, "unknown command 'gradee'"),
    ):
        t0 = time.monotonic()
        r = subprocess.run([str(SOURCE / "course")] + args, env=env, capture_output=True, text=True, timeout=120)
        took = time.monotonic() - t0
        out = r.stdout + r.stderr
        print(f"$ ./course {' '.join(args)}  -> {r.returncode} in {took:.1f} s\n{out}")
        expect(
            r.returncode == want_rc and says in out and "setup:" not in out,
            f"./course {' '.join(args)}: answered before any set-up",
        )
        expect(
            want_rc == 0 or (len(out.strip().splitlines()) == 1 and took < 2),
            f"./course {' '.join(args)}: one line, in under 2 s ({took:.1f} s)",
        )
    print("ok: grade")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
