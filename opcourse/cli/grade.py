"""grade: one exercise, one submission folder, the judge's table as it prints it; and the tables of `./course main`
(every reference solution)."""

from __future__ import annotations

import concurrent.futures as futures
import sys
from pathlib import Path

from .common import BUILD, GRADES, ROOT, die, say
from .exercises import resolve_exercise
from .judge import JudgeRun, load_toolchain, run_judge
from ..reports import ReportError, read_rows

# `./course grade`'s exit status when every check that ran passed but some points could not be graded here (no GPU,
# no CUDA toolkit): the exercise is not done, and a script must not read it as done (the judge itself exits 0)
NOT_DONE = 3


def exit_status(rc: int) -> int:
    """The judge's exit status as a shell reports it (killed by signal N: 128 + N)."""
    return 128 - rc if rc < 0 else rc


def not_done(out: Path | str) -> str:
    """'' when the grade in `out` graded every point; else the line that says how many points this machine could
    not grade and why (rows.json's not_graded, written by the judge). A rows.json that does not match its schema
    stops the command, naming the file and the mismatch."""
    try:
        report = read_rows(out)
    except ReportError as e:
        die(str(e), 1)
    except OSError:
        return ""
    points, why = report.not_graded()
    total = report.points_total
    if points <= 0:
        return ""
    reasons = ", ".join(f"{p:g} {reason}" for reason, p in sorted(why.items())) or f"{points:g} not graded"
    return (
        f"not done: {points:g} of {total:g} points need what this machine lacks ({reasons}); they are SKIPPED "
        f"above, not passed. Grade it where they can run (a machine with an NVIDIA GPU and the CUDA toolkit)"
    )


def cmd_grade(args) -> int:
    # with --course-root the exercise is that course's: the judge looks it up there (and says if it does not exist)
    ex = args.exercise if args.course_root else resolve_exercise(args.exercise)
    submission = args.submission if args.submission is not None else ROOT / "exercises" / ex
    out = Path(args.out) if args.out else GRADES / ex  # the student's grades: what `./course list` reads
    run = run_judge(
        ex,
        submission,
        out,
        show="stream",
        seed=args.seed,
        worker_timeout=args.worker_timeout,
        color=not args.no_color,
        toolchain=args.toolchain,
        course_root=args.course_root,
        list_checks=args.list,
        protections=args.protections,
        require_cuda=args.require_cuda,
        doctest_args=args.doctest_args,
    )
    status = exit_status(run.returncode)
    if status == 0 and not (args.list or args.protections):
        line = not_done(out)
        if line:
            say(line)
            return NOT_DONE
    return status


def cmd_grade_solutions(args) -> int:
    """Grades the reference solution of every exercise CMake configured (toolchain.json's "exercises") into
    build/grades/solutions/EX, printing each table in exercise order; 1 if any check failed."""
    exercises = load_toolchain()["exercises"]
    out = BUILD / "grades" / "solutions"
    status = 0
    if args.jobs <= 1:
        for ex in exercises:
            status |= run_judge(ex, ROOT / "solutions" / ex, out / ex).returncode != 0
        return status
    out.mkdir(parents=True, exist_ok=True)

    def grade(ex: str) -> JudgeRun:
        r = run_judge(ex, ROOT / "solutions" / ex, out / ex, show="capture")
        (out / f"{ex}.log").write_text(r.stdout + r.stderr)
        return r

    # several at once (the GPU run: each grade is mostly waiting on one worker), the tables in exercise order
    with futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(grade, exercises))
    for r in runs:
        sys.stdout.write(r.stdout + r.stderr)
        sys.stdout.flush()
        status |= r.returncode != 0
    return status
