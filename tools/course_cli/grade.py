"""grade: one exercise, one submission folder, the judge's table as it prints it; and the tables of `./course main`
(every reference solution)."""
from __future__ import annotations

import concurrent.futures as futures
import sys

from .common import BUILD, ROOT
from .exercises import resolve_exercise
from .judge import JudgeRun, load_toolchain, run_judge


def exit_status(rc: int) -> int:
    """The judge's exit status as a shell reports it (killed by signal N: 128 + N)."""
    return 128 - rc if rc < 0 else rc


def cmd_grade(args) -> int:
    # with --course-root the exercise is that course's: the judge looks it up there (and says if it does not exist)
    ex = args.exercise if args.course_root else resolve_exercise(args.exercise)
    submission = args.submission if args.submission is not None else ROOT / "exercises" / ex
    run = run_judge(ex, submission, args.out, show="stream", seed=args.seed, worker_timeout=args.worker_timeout,
                    color=not args.no_color, toolchain=args.toolchain, course_root=args.course_root,
                    list_checks=args.list, protections=args.protections, require_cuda=args.require_cuda,
                    doctest_args=args.doctest_args)
    return exit_status(run.returncode)


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
