"""class-bench: a synthetic class, graded as an instructor would, timed, and every score checked against what it must be.

The class (one folder per student, each holding one exercise, cycling through the course's exercises) mixes each
exercise's reference, its stub and its planted bugs (the patch cases of autograder/planted/, whose expected.json lists
the rows that fail): every student's verdicts are known before anything is graded. `./course batch` grades it with
--jobs J (its throughput report says how fast); with --gradescope the same class is also graded as Gradescope would,
one submission after another: the zip unpacked into Gradescope's layout, setup.sh once, run_autograder per student.
Any score that differs from the expected one fails the command (exit 1) and names the student."""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, die, say
from .exercises import exercise_ids, load_exercise
from ..reports import read_results, read_rows


def _planted_cases():
    """opcourse/planted.py, the one module that makes a planted submission (imported when a class is
    made, not by every ./course command)."""
    from .. import planted as planted_cases

    return planted_cases


# what makes a planted case a poor stand-in for a student: it needs the machine set up, or takes minutes on purpose
UNFIT = (
    "needs",
    "judge_args",
    "judge_env",
    "template",
    "links",
    "hardlinks",
    "fifos",
    "submission_link",
    "listener",
    "settle_s",
)


def class_cases(exercise: str) -> list[Path]:
    """The planted bugs of an exercise that a class can hold: a patch of its reference or stub, nothing else."""
    cases = []
    for case in sorted((ROOT / "autograder" / "planted" / exercise).iterdir()):
        try:
            expected = _planted_cases().load(case)
        except (OSError, ValueError):
            continue
        if "patch" in expected and not any(k in expected for k in UNFIT):
            cases.append(case)
    return cases


def make_class(out: Path, students: int, seed: int) -> list[dict]:
    """Writes out/student-NN/EXERCISE/ and out/expected.json; returns the expectations."""
    planted_cases = _planted_cases()
    rng = random.Random(seed)
    exercises = exercise_ids()
    expected = []
    for i in range(students):
        ex = exercises[i % len(exercises)]
        kind = ["reference", "stub", "planted"][(i + i // len(exercises)) % 3]  # 27 students: every pair once
        name = f"student-{i + 1:02d}"
        dest = out / name / ex
        if kind == "planted" and class_cases(ex):
            case = rng.choice(class_cases(ex))
            with tempfile.TemporaryDirectory() as work:
                shutil.copytree(planted_cases.materialize(ROOT, case, Path(work)), dest)
            fail, what = planted_cases.load(case).get("fail", []), f"planted {ex}/{case.name}"
        else:
            kind = "stub" if kind == "planted" else kind  # an exercise with no fit planted case: its stub
            case = ROOT / "autograder" / "planted" / ex / kind
            shutil.copytree(ROOT / ("solutions" if kind == "reference" else "exercises") / ex, dest)
            fail, what = planted_cases.load(case).get("fail", []), f"{kind} of {ex}"
        expected.append({"student": name, "exercise": ex, "submission": what, "fail": sorted(fail)})
    (out / "expected.json").write_text(json.dumps(expected, indent=2))
    return expected


def verdict_problems(expect: dict, statuses: dict[str, str], score: float) -> list[str]:
    """Each row FAILs if the case says so, else PASSes, unless SKIPPED for want of a GPU; the score is the points of
    the rows that passed. statuses: {check id: PASS | FAIL | SKIPPED}."""
    meta = load_exercise(expect["exercise"])
    checks = {c["id"]: c for c in meta["checks"]}
    problems, want_score = [], 0.0
    for cid, c in checks.items():
        got = statuses.get(cid, "missing")
        if got == "SKIPPED" and c.get("cuda"):
            continue
        want = "FAIL" if cid in expect["fail"] else "PASS"
        if got != want:
            problems.append(f"{cid} {got}, expected {want}")
        want_score += float(c["points"]) if want == "PASS" else 0.0
    if abs(score - want_score) > 1e-9:
        problems.append(f"score {score:g}, expected {want_score:g}")
    return [f"{expect['student']} ({expect['submission']}): " + "; ".join(problems)] if problems else []


def run_batch(klass: Path, grades: Path, jobs: int, expected: list[dict]) -> tuple[dict, list[str]]:
    cmd = [sys.executable, "-m", "opcourse.cli", "batch", str(klass), "--out", str(grades), "--jobs", str(jobs)]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if r.returncode not in (0, 1):
        die(f"batch failed ({r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}", 1)
    problems = []
    with open(grades / "gradebook.csv", newline="") as fh:  # the instructor's figure: the score in the gradebook
        book = {row["student"]: row for row in csv.DictReader(fh)}
    for e in expected:
        try:
            rows = read_rows(grades / "students" / e["student"] / e["exercise"])
            score = float(book[e["student"]][e["exercise"]])
        except (OSError, ValueError, KeyError) as err:
            problems.append(f"{e['student']}: no grade in rows.json and gradebook.csv ({err})")
            continue
        problems += verdict_problems(e, {r.id: r.status for r in rows.rows}, score)
    report = json.loads((grades / "throughput.json").read_text())
    report["command_wall_s"] = round(wall, 1)
    return report, problems


def run_gradescope(klass: Path, work: Path, expected: list[dict]) -> tuple[dict, list[str]]:
    from .gradescope import unpack_zip

    env = dict(os.environ, COURSE_OFFLINE="1")
    zpath = work / "autograder.zip"
    r = subprocess.run(
        [sys.executable, "-m", "opcourse.cli", "gradescope-zip", "--out", str(zpath)],
        capture_output=True,
        text=True,
        env=env,
    )
    if r.returncode != 0:
        die(f"gradescope-zip failed:\n{(r.stdout + r.stderr)[-3000:]}", 1)
    root = work / "autograder"
    src = root / "source"
    unpack_zip(zpath, src)
    tc = json.loads((Path(os.environ.get("COURSE_BUILD_DIR", ROOT / "build")) / "toolchain.json").read_text())
    gs_env = dict(env, GRADESCOPE_ROOT=str(root), CCACHE_BASEDIR=str(root), COURSE_PYTHON=tc["python"])
    gs_env.pop("COURSE_BUILD_DIR", None)
    t0 = time.monotonic()
    r = subprocess.run([str(src / "setup.sh")], cwd=src, env=gs_env, capture_output=True, text=True)
    setup_s = time.monotonic() - t0
    if r.returncode != 0:
        die(f"setup.sh failed:\n{(r.stdout + r.stderr)[-3000:]}", 1)
    seconds, problems = [], []
    for e in expected:
        sub = root / "submission"
        shutil.rmtree(sub, ignore_errors=True)
        shutil.rmtree(root / "results", ignore_errors=True)
        shutil.copytree(klass / e["student"], sub)
        t0 = time.monotonic()
        r = subprocess.run([str(src / "run_autograder")], cwd=src, env=gs_env, capture_output=True, text=True)
        seconds.append(time.monotonic() - t0)
        try:
            res = read_results(root / "results")
        except (OSError, ValueError) as err:
            problems.append(f"{e['student']}: no results.json ({err}; run_autograder exit {r.returncode})")
            continue
        prefix = e["exercise"] + " / "
        tests = [t for t in res["tests"] if t["name"].startswith(prefix)]
        statuses = {t["name"][len(prefix) :].split(":", 1)[0]: t.get("status", "skipped").upper() for t in tests}
        statuses = {k: {"PASSED": "PASS", "FAILED": "FAIL"}.get(v, "SKIPPED") for k, v in statuses.items()}
        problems += verdict_problems(e, statuses, sum(float(t["score"]) for t in tests))
        say(f"  gradescope {e['student']} ({e['submission']}): {seconds[-1]:.1f} s")
    return {
        "setup_s": round(setup_s, 1),
        "runs": len(seconds),
        "total_s": round(sum(seconds), 1),
        "median_s": round(statistics.median(seconds), 2),
    }, problems


def cmd_class_bench(args) -> int:
    work = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="class-bench-"))
    klass = work / "class"
    shutil.rmtree(klass, ignore_errors=True)
    klass.mkdir(parents=True)
    expected = make_class(klass, args.students, args.seed)
    kinds = {}
    for e in expected:
        k = e["submission"].split()[0]
        kinds[k] = kinds.get(k, 0) + 1
    say(
        f"class-bench: {len(expected)} synthetic students in {klass} ("
        + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        + f"; seed {args.seed}), each one exercise"
    )
    report, problems = run_batch(klass, work / "grades", args.jobs, expected)
    say(
        f"batch --jobs {args.jobs}: {report['graded']} graded in {report['command_wall_s']:g} s as the instructor "
        f"waits, {report['per_hour']} per hour; one grade {report['median_s']:g} s (median); "
        f"{len(expected) - len(set(p.split(':')[0] for p in problems))} of {len(expected)} scores as expected"
    )
    for line in report["lines"][1:]:
        say(line)
    gs = None
    if args.gradescope:
        gs, gs_problems = run_gradescope(klass, work, expected)
        problems += [f"gradescope: {p}" for p in gs_problems]
        say(
            f"gradescope layout, one after another: setup.sh {gs['setup_s']:g} s once, then {gs['runs']} runs in "
            f"{gs['total_s']:g} s, {gs['median_s']:g} s each (median)"
        )
    (work / "class-bench.json").write_text(
        json.dumps(
            {"students": len(expected), "seed": args.seed, "batch": report, "gradescope": gs, "problems": problems},
            indent=2,
        )
    )
    for p in problems:
        say(f"WRONG SCORE: {p}")
    say(
        f"{'every score as expected' if not problems else f'{len(problems)} score(s) differ'}; "
        f"details in {work / 'class-bench.json'}"
    )
    if not args.out:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0
