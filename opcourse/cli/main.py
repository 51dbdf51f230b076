"""The command line of every command of the package (`./course help` lists them all, the bash ones too).

Each command has a parser of its own, which takes its options anywhere on the line, before or after the positional
arguments, as users expect (`./course grade 03_cpu --out DIR` and `./course grade --out DIR 03_cpu` are the same).
`check-args CMD ARGS...` only parses: ./course runs it before the set-up and the build, so that a usage error or
--help needs neither."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable

from ..mutation import mutants
from . import batch, bench, doctor, grade, gradescope, student, synthetic
from .common import die
from .exercises import resolve_exercise
from ..reports import ReportError

# exit status of `check-args` after it printed a command's --help: ./course stops there, successfully
HELP_SHOWN = 3


def nonnegative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


nonnegative_int.__name__ = "non-negative integer"  # argparse names the type in its error message


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    return value


positive_float.__name__ = "positive number"


def p_grade(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Grades exercise EX: the judge builds the submission folder DIR (default: exercises/EX, your "
        "work), runs the exercise's checks and prints their table. Exit status: 0 when every check ran "
        "and passed; 1 if one failed; 2 on a usage error; 3 when every check that ran passed but some "
        "could not run here (a check that needs a GPU is SKIPPED on a machine without one: it neither "
        "passes nor fails, and the exercise is not done)."
    )
    p.epilog = (
        "Options may come before or after EX and DIR. Whatever follows `--` goes to the judge's doctest "
        "unchanged. The judge itself: build/judge --help."
    )
    p.add_argument("exercise", metavar="EX", help="the exercise: its id (02_schema), number (2) or name (schema)")
    p.add_argument("submission", metavar="DIR", nargs="?", help="the folder to grade (default: exercises/EX)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="where table.txt, junit.xml, results.json and rows.json go "
        "(default: .course/grades/EX, what `./course list` reads; kept across rebuilds)",
    )
    p.add_argument(
        "--seed",
        metavar="N",
        type=nonnegative_int,
        help="seed of the inputs the judge chooses (default: random, printed under the table)",
    )
    p.add_argument(
        "--worker-timeout",
        metavar="S",
        type=positive_float,
        help="wall-clock limit of one worker run, in seconds (default: 120)",
    )
    p.add_argument("--no-color", action="store_true", help="a plain table even on a terminal")
    p.add_argument(
        "--list", action="store_true", help="list the exercise's checks (id, points, cpu/toolkit/cuda, title) and exit"
    )
    p.add_argument(
        "--toolchain", metavar="FILE", help="compiler settings written by CMake (default: build/toolchain.json)"
    )
    p.add_argument(
        "--course-root",
        metavar="DIR",
        help="the course whose exercise.json says what to check (default: this checkout)",
    )
    p.add_argument(
        "--protections",
        action="store_true",
        help="print (JSON) which sandbox protections this machine allows, and exit",
    )
    p.add_argument(
        "--require-cuda",
        action="store_true",
        help="a check that needs a CUDA device FAILs (not graded) on a machine without one, instead of being SKIPPED",
    )


def p_grade_solutions(p: argparse.ArgumentParser) -> None:
    p.description = (
        "(./course main) Grades the reference solution of every exercise into "
        "build/grades/solutions/EX and prints the tables in exercise order; 1 if a check failed."
    )
    p.add_argument("--jobs", "-j", metavar="N", type=int, default=1, help="grades at once (default: 1)")


def p_hint(p: argparse.ArgumentParser) -> None:
    p.add_argument("exercise")
    p.add_argument("--all", action="store_true", help="show every hint")
    p.add_argument("--reset", action="store_true", help="hide the hints again")


def p_watch(p: argparse.ArgumentParser) -> None:
    p.add_argument("exercise")
    p.add_argument("--dir", help="folder to watch and grade (default exercises/EX)")
    p.add_argument("--out", help="where the grade goes (default .course/grades/EX, what `list` reads)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between polls (default 1)")
    p.add_argument("--no-initial", action="store_true", help="do not grade once at start")
    p.add_argument("--once-after-change", action="store_true", help="grade once after the first change, then exit")
    p.add_argument("--max-iterations", type=int, help="stop after this many grades")


def p_reset(p: argparse.ArgumentParser) -> None:
    p.add_argument("exercise")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")


def p_batch(p: argparse.ArgumentParser) -> None:
    p.add_argument("submissions")
    p.add_argument("--jobs", "-j", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    p.add_argument("--out", help="output folder (default SUBMISSIONS-grades beside it)")
    p.add_argument("--exercises", help="comma-separated exercise ids (default: all)")
    p.add_argument("--timeout", type=float, default=1200, help="seconds one grade may take (default 1200)")
    p.add_argument("--summary", action="store_true", help="print the gradebook at the end")
    p.add_argument(
        "--require-cuda",
        action="store_true",
        help="a grade that could not run its CUDA rows (no GPU "
        "here) fails instead of completing: those rows FAIL as not graded, the grade is not kept for "
        "reuse, and batch exits 1",
    )


def p_gradescope_zip(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", help="zip to write (default build/gradescope/autograder.zip)")
    p.add_argument("--exercises", help="comma-separated exercise ids graded by this assignment (default: all)")


def p_gradescope_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=float, default=1200)


def p_bench(p: argparse.ArgumentParser) -> None:
    p.add_argument("exercise", nargs="?", default="02_schema")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--check", action="store_true", help="exit 1 when a target is not met")
    p.add_argument(
        "--breakdown",
        action="store_true",
        help="print where one regrade's time went: each compile, each worker's start, imports, probes",
    )


def p_class_bench(p: argparse.ArgumentParser) -> None:
    p.add_argument("--students", type=int, default=30)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--gradescope", action="store_true", help="also grade the class in Gradescope's layout, in turn")
    p.add_argument("--out", help="keep the class, the grades and class-bench.json here (default: a temporary folder)")


def p_mutants(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Mutation analysis (maintainers): mutants of each exercise's reference solution (one small edit "
        "each of a C++, CUDA or Python file: an operator, a constant, a condition, a statement; comments, "
        "strings and docstrings left alone), each graded by the judge with one seed: killed, survived, "
        "stillborn (does not build), timed out, or not judged (GPU-only code on a machine without a "
        "GPU). Writes EX.md and EX.json per exercise and summary.md (default under build/mutants/). "
        "Exit status 0, or with --check 1 when a mutant survived that opcourse/mutation/ does not list, "
        "or a listed one is now killed."
    )
    p.epilog = (
        "score = (killed + timed out) / (killed + timed out + survived). A survivor that cannot change a grade "
        "goes into opcourse/mutation/equivalent.json with the reason (opcourse/mutation/README.md). "
        "Examples: ./course mutants 03 --jobs 2;  ./course mutants --sample 2 --seed commit --check;  "
        "./course mutants 06 --list;  ./course mutants 06 --show ID."
    )
    # three groups, in the order --help lists them
    _p_mutants_which(p)
    _p_mutants_judging(p)
    _p_mutants_output(p)


def _p_mutants_which(p: argparse.ArgumentParser) -> None:
    """mutants: which mutants (exercises, sample, seed, files, operators, generator) and how many graded at once."""
    p.add_argument("exercises", metavar="EX", nargs="*", help="exercises (id, number or name; default: all)")
    p.add_argument(
        "--sample",
        metavar="N",
        type=nonnegative_int,
        help="grade N mutants per exercise drawn with the seed (without a GPU, from those not GPU-only; with "
        "--check, from those opcourse/mutation/ does not list); default: every mutant",
    )
    p.add_argument(
        "--seed",
        metavar="S",
        default="1",
        help="the judge's input seed for every mutant, and the sample's; 'commit': from the checked-out "
        "commit's hash (default: 1)",
    )
    p.add_argument(
        "--jobs",
        "-j",
        metavar="J",
        type=int,
        default=max(1, (os.cpu_count() or 2) // 2),
        help="grades at once (default: half the cores)",
    )
    p.add_argument(
        "--files",
        metavar="F,G",
        help="mutate these files of solutions/EX (default: the exercise's own "
        "sources, less the files given from an earlier exercise)",
    )
    p.add_argument("--all-files", action="store_true", help="mutate every source of solutions/EX, given ones too")
    p.add_argument(
        "--operators",
        metavar="A,B",
        help="only these mutation operators: arith, relational, boundary, "
        "logical, negate, constant, increment, delete, swap-args, drop-call (opcourse/mutation/mutate.py)",
    )
    p.add_argument(
        "--generator",
        choices=tuple(mutants.GENERATORS),
        default="course",
        help="who makes the mutants: the course's own operators (opcourse/mutation/mutate.py), or "
        "universalmutator's rules (PyPI, installed on first use into an environment of its own; its "
        "reports go to a universalmutator/ folder of the output)",
    )


def _p_mutants_judging(p: argparse.ArgumentParser) -> None:
    """mutants: how the judge grades them (GPU, time limits, the run's budget)."""
    p.add_argument(
        "--gpu",
        choices=("auto", "yes", "no"),
        default="auto",
        help="whether a CUDA device grades the GPU rows here (auto: nvidia-smi)",
    )
    p.add_argument(
        "--grade-gpu-only",
        action="store_true",
        help="without a GPU, grade GPU-only mutants anyway "
        "(stillborn and CPU-row kills; a survivor is still 'not judged')",
    )
    p.add_argument(
        "--worker-timeout",
        metavar="S",
        type=positive_float,
        help="the judge's limit on one worker run (default: the judge's, 120 s)",
    )
    p.add_argument(
        "--timeout",
        metavar="S",
        type=positive_float,
        default=1800,
        help="limit on one mutant's whole grade (default 1800 s)",
    )
    p.add_argument(
        "--budget",
        metavar="S",
        type=positive_float,
        help="wall-clock seconds for the whole run: a mutant not started by then is 'not run', and the "
        "reports are written with what was graded (a machine lent for minutes; the cache resumes)",
    )


def _p_mutants_output(p: argparse.ArgumentParser) -> None:
    """mutants: what the run prints or writes, the reference's baseline, the cache and the work folders."""
    p.add_argument("--list", action="store_true", help="list the mutants (id, file:line:col, operator, edit) and exit")
    p.add_argument("--show", metavar="ID", action="append", help="print this mutant's diff and exit (repeatable)")
    p.add_argument("--out", metavar="DIR", help="where the reports go (default: build/mutants)")
    p.add_argument("--evidence", action="store_true", help="write the reports to evidence/mutants/ (committed)")
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when a survivor is listed neither as equivalent nor "
        "as a known missing check, when a listed entry is killed, or on a judge error (CI)",
    )
    p.add_argument(
        "--no-baseline",
        action="store_true",
        help="do not grade the reference first (it must pass every "
        "row with the seed, or every mutant would look killed; ctest's planted/EX/reference checks it too)",
    )
    p.add_argument("--no-cache", action="store_true", help="regrade even what build/mutants/cache holds")
    p.add_argument(
        "--keep-work",
        action="store_true",
        help="keep each mutant's submission and judge output under build/mutants/work",
    )


def p_none(p: argparse.ArgumentParser) -> None:
    pass


# name: (what it does, its arguments, the function that runs it)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {
    "grade": ("grade an exercise (default: your work in exercises/EX)", p_grade, grade.cmd_grade),
    "list": ("every exercise with your progress", p_none, student.cmd_list),
    "hint": ("the next hint of an exercise (one more each call)", p_hint, student.cmd_hint),
    "watch": ("regrade an exercise whenever one of its files is saved", p_watch, student.cmd_watch),
    "reset": ("restore an exercise's original stub (your version is backed up)", p_reset, student.cmd_reset),
    "doctor": ("check the toolchain; prints the fix for anything missing", p_none, doctor.cmd_doctor),
    "snapshot-stubs": ("keep a pristine copy of every stub (setup runs it)", p_none, student.cmd_snapshot_stubs),
    "batch": ("grade a folder of submissions (one folder per student)", p_batch, batch.cmd_batch),
    "gradescope-zip": ("build the Gradescope autograder zip", p_gradescope_zip, gradescope.cmd_gradescope_zip),
    "gradescope-run": (
        "(run_autograder) grade $GRADESCOPE_ROOT/submission",
        p_gradescope_run,
        gradescope.cmd_gradescope_run,
    ),
    "class-bench": (
        "(instructors) a synthetic class graded by batch (and --gradescope), timed, every score checked",
        p_class_bench,
        synthetic.cmd_class_bench,
    ),
    "bench": (
        "time a cold grade, warm regrades after a .cpp and a .cu edit, and the compiles alone",
        p_bench,
        bench.cmd_bench,
    ),
    "grade-solutions": ("(./course main) grade every reference solution", p_grade_solutions, grade.cmd_grade_solutions),
    "mutants": (
        "(maintainers) mutation analysis: mutants of the reference solutions graded by the judge",
        p_mutants,
        mutants.cmd_mutants,
    ),
}
# commands whose arguments after `--` go, unchanged, to the judge (its doctest options)
PASS_THROUGH = {"grade"}


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line: what is wrong, and where the options are listed (argparse's own prints the whole
    usage first)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (`{self.prog} --help` lists the options)\n")


def parser_for(name: str) -> argparse.ArgumentParser:
    what, add_arguments, fn = COMMANDS[name]
    p = OneLineParser(prog=f"./course {name}", description=what[:1].upper() + what[1:] + ".")
    add_arguments(p)
    p.set_defaults(fn=fn)
    return p


def parse(name: str, argv: list[str]) -> argparse.Namespace:
    """The command's arguments; a usage error or --help ends the process (argparse's SystemExit)."""
    p = parser_for(name)
    rest: list[str] = []
    if name in PASS_THROUGH and "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1 :]
    # intermixed: options anywhere, even between the positional arguments
    args = p.parse_intermixed_args(argv)
    if name in PASS_THROUGH:
        args.doctest_args = rest
    return args


def check_operands(args: argparse.Namespace) -> str | None:
    """What the parser cannot see, checked before the set-up and the build: the exercise exists, the folders named
    exist. Each problem ends the process with one line and status 2 (common.die). Returns the exercise's id, if the
    command names one."""
    if getattr(args, "course_root", None):
        return None  # another course's exercise: the judge looks it up there
    ex = getattr(args, "exercise", None)
    if isinstance(ex, str):
        ex = resolve_exercise(ex)
    for attr, what in (
        ("submission", "submission folder"),
        ("dir", "folder to watch"),
        ("submissions", "folder of submissions"),
    ):
        folder = getattr(args, attr, None)
        if folder is not None and not Path(folder).is_dir():
            hint = (
                f"leave it out to grade your work in exercises/{ex}"
                if attr == "submission" and ex
                else "give an existing folder"
            )
            die(f"no {what} '{folder}': {hint}")
    return ex


def overview() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        "usage: ./course COMMAND [ARGS...]   (./course help lists every command; ./course COMMAND --help its options)",
        "",
        "commands run here (opcourse/cli):",
    ]
    lines += [f"  {name:<{width}}  {what}" for name, (what, _, _) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(overview())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name == "check-args":  # ./course: are these arguments right? (before the set-up and the build)
        if not rest or rest[0] not in COMMANDS:
            print(f"course: unknown command '{rest[0] if rest else ''}'", file=sys.stderr)
            return 2
        try:
            ex = check_operands(parse(rest[0], rest[1:]))
        except SystemExit as e:
            return HELP_SHOWN if e.code in (0, None) else int(e.code)
        if ex:
            print(f"exercise={ex}")  # ./course builds what grading this exercise needs (grader_EX)
        return 0
    if name not in COMMANDS:
        print(f"course: unknown command '{name}'\n{overview()}", file=sys.stderr)
        return 2
    args = parse(name, rest)
    try:
        return args.fn(args)
    except ReportError as e:  # a report that does not match its schema: the file and the mismatch, not a traceback
        print(f"course: {e}", file=sys.stderr)
        return 1
