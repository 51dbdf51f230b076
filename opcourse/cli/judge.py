"""The judge (build/judge, C++; `build/judge --help`): run_judge() is the one function that builds its command line
and runs it. grade, watch, batch, gradescope-run, bench and the tables of `./course main` all go through it.

build/toolchain.json (written by CMake) holds the settings the judge compiles a submission with, its compile flags
among them ("cxx_flags", "cuda_flags"): the flags are declared once, in CMakeLists.txt, and read from there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .common import BUILD, die, say
from ..reports import Row, build_error, clear_phase, decided_rows, printable, read_phase


def judge_path() -> Path:
    j = Path(os.environ.get("COURSE_JUDGE", BUILD / "judge"))
    if not j.is_file():
        die(f"no judge at {j}: run ./course build first", 1)
    return j


def load_toolchain(path: Path | None = None) -> dict:
    path = path or BUILD / "toolchain.json"
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        die(f"cannot read {path} ({e}): run ./course build first", 1)


def compile_flags(tc: dict) -> list[str]:
    """The judge's compile flags for a submission's .cpp file (Session::build in autograder/judge/build.cpp), less
    the precompiled header: toolchain.json's "cxx_flags", its definitions and its include folders."""
    if "cxx_flags" not in tc:
        die('toolchain.json has no "cxx_flags" (written by an older CMakeLists.txt): run ./course build', 1)
    flags = list(tc["cxx_flags"]) + ["-D" + d for d in tc["definitions"]]
    for inc in tc["include_dirs"]:
        flags += ["-isystem", inc]
    return flags


def judge_argv(
    ex: str,
    submission: Path | str | None,
    out: Path | str | None = None,
    *,
    seed: int | None = None,
    worker_timeout: float | None = None,
    color: bool = True,
    toolchain: Path | str | None = None,
    course_root: Path | str | None = None,
    list_checks: bool = False,
    protections: bool = False,
    require_cuda: bool = False,
    doctest_args: Sequence[str] = (),
) -> list[str]:
    """The judge's command line. An option left at None is left to the judge's default (`build/judge --help`)."""
    argv = [str(judge_path()), "--exercise", ex]
    if submission is not None:
        argv += ["--submission", str(submission)]
    if out is not None:
        argv += ["--out", str(out)]
    if not color:
        argv.append("--no-color")
    if seed is not None:
        argv += ["--seed", str(seed)]
    if worker_timeout is not None:
        argv += ["--worker-timeout", f"{worker_timeout:g}"]
    if course_root is not None:
        argv += ["--course-root", str(course_root)]
    if toolchain is not None:
        argv += ["--toolchain", str(toolchain)]
    if list_checks:
        argv.append("--list")
    if protections:
        argv.append("--protections")
    if require_cuda:
        argv.append("--require-cuda")
    if doctest_args:
        argv += ["--", *doctest_args]
    return argv


@dataclass
class JudgeRun:
    returncode: int  # the judge's exit status: 0 every check that ran passed, 1 one failed, 2 a usage error;
    #                  negative: killed by that signal; -1 with timed_out: stopped after the timeout
    stdout: str = ""  # what it printed, when the output was captured ("progress": its stderr too)
    stderr: str = ""
    seconds: float = 0.0
    timed_out: bool = False


def row_line(r: Row, width: int = 110) -> str:
    """One decided row as watch shows it while the grade runs: verdict, points, id, the start of its detail (one
    line of at most `width` characters, so a terminal can erase it)."""
    points = "-" if r.status == "SKIPPED" else f"{r.points:g}/{r.max_points:g}"
    line = f"  {r.status:<8} {points:>6}  {r.id}: {printable(r.detail)}"
    return line if len(line) <= width else line[: width - 3] + "..."


def run_judge(
    ex: str,
    submission: Path | str | None,
    out: Path | str | None = None,
    *,
    show: str = "stream",
    timeout: float | None = None,
    env: dict | None = None,
    lead_with_build_error: bool = False,
    **options,
) -> JudgeRun:
    """Runs the judge on one submission folder; `options` are judge_argv's. `show` says what the user sees:

    "stream"    the judge's own output, unchanged (its table, in colour on a terminal), as it prints it
    "progress"  while it runs, one line saying what it is doing (compiling X, running checks ...), rewritten in
                place on a terminal, and once the build has passed each row as it is decided; then its output and
                how long it took (`out` is required: both are read from its folder)
    "capture"   nothing: its stdout and stderr come back in the JudgeRun

    lead_with_build_error ("progress"): when the build failed, its first compiler error is printed before the table
    (`watch`: the line a student needs, where each regrade's output starts).
    `timeout` (seconds) stops a judge that runs longer ("capture" and "stream"): returncode -1, timed_out."""
    t0 = time.monotonic()
    # the judge dies with this command (a batch stopped must not leave judges grading): see the judge's main.cpp
    env = dict(os.environ if env is None else env, COURSE_JUDGE_PARENT=str(os.getpid()))
    if show == "capture":
        return _run_captured(judge_argv(ex, submission, out, **options), env, timeout, t0)
    if show == "stream":
        return _run_streamed(judge_argv(ex, submission, out, **options), env, timeout, t0)
    if show != "progress":
        raise ValueError(f"run_judge: show={show!r}")
    if out is None:
        raise ValueError("run_judge: show='progress' needs the out folder")
    return _run_with_progress(ex, submission, Path(out), env, t0, lead_with_build_error, options)


def _run_captured(argv: list[str], env: dict, timeout: float | None, t0: float) -> JudgeRun:
    try:
        r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return JudgeRun(-1, seconds=time.monotonic() - t0, timed_out=True)
    return JudgeRun(r.returncode, r.stdout, r.stderr, time.monotonic() - t0)


def _run_streamed(argv: list[str], env: dict, timeout: float | None, t0: float) -> JudgeRun:
    proc = subprocess.Popen(argv, env=env)
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return JudgeRun(-1, seconds=time.monotonic() - t0, timed_out=True)
    except KeyboardInterrupt:  # Ctrl-C reached the judge too: its status says how it ended
        rc = proc.wait()
    return JudgeRun(rc, seconds=time.monotonic() - t0)


def _run_with_progress(
    ex: str, submission, out: Path, env: dict, t0: float, lead_with_build_error: bool, options: dict
) -> JudgeRun:
    """run_judge's "progress": the judge's output read whole while the progress line and the decided rows show."""
    tty = sys.stdout.isatty()
    if not tty:
        options["color"] = False
    argv = judge_argv(ex, submission, out, **options)
    clear_phase(out)  # the progress line reads the new run's phase.json only
    wall_start = time.time() - 1  # (file times can be a little coarse)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    shown = _show_progress(proc, out, wall_start, t0, tty)
    reader.join()
    if tty:
        print("\r" + " " * 78 + "\r", end="")
        if shown:  # the rows as decided give way to the judge's table
            print(f"\x1b[{len(shown)}A\x1b[J", end="")
    text = b"".join(chunks).decode(errors="replace")
    first_error = build_error(out, since=wall_start) if lead_with_build_error else ""
    if first_error:
        say(f"first error: {first_error}")
    sys.stdout.write(text)
    seconds = time.monotonic() - t0
    say(f"graded in {seconds:.1f} s")
    return JudgeRun(proc.returncode, text, "", seconds)


def _show_progress(proc: subprocess.Popen, out: Path, wall_start: float, t0: float, tty: bool) -> list[str]:
    """Until the judge ends: its phase (one line, rewritten in place on a terminal) and each row once decided. The
    ids of the rows printed."""
    last = ""
    shown: list[str] = []  # ids of the rows printed as decided (none while the build has not passed: a failed
    # build's output leads with its first error)
    while True:
        running = proc.poll() is None
        rows = decided_rows(out, wall_start)
        build_passed = any(r.id == "build" and r.status == "PASS" for r in rows)
        fresh = [r for r in rows if r.id not in shown] if build_passed else []
        if fresh and tty:
            print("\r" + " " * 78 + "\r", end="")
        for r in fresh:
            say(row_line(r, min(110, shutil.get_terminal_size().columns - 1) if tty else 110))
            shown.append(r.id)
        if not running:
            break
        phase = read_phase(out, wall_start).text
        line = f"  {phase} ... {time.monotonic() - t0:4.0f} s"
        if tty:
            print("\r" + line.ljust(78), end="", flush=True)
        elif phase != last:
            say(line)
        last = phase
        time.sleep(0.25)
    return shown
