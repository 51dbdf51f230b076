"""bench: what a student's edit-and-regrade loop costs, against what the compiler alone costs.

For each kind of source the exercise has (.cpp, .cu), each round edits one file of that kind by one line and times
the warm regrade (the student's previous grade filled the compiler cache), then the compile of that file alone with
the judge's own command line, read from the regrade's rows.json "timeline": for a .cpp with the precompiled header
(what a regrade compiles), for a .cu the bare nvcc; neither through ccache. Rounds interleave, so a busy machine slows
them alike; the figures are medians. A cold grade (empty compiler cache) is timed once per round as well.

--breakdown prints where one regrade's time went (rows.json "timeline": each compile, the link, each worker: its
start, its imports, its probes; what remains is the judge's own work)."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from .common import ROOT, die, say
from .exercises import load_exercise, resolve_exercise
from .judge import JudgeRun, judge_path, load_toolchain, run_judge
from ..reports import Report, read_rows

MARGIN_S = 4.0  # a regrade may cost the compile of what changed plus this


def judged(ex: str, run: JudgeRun) -> float:
    """The seconds a grade took; a judge that could not grade (not 0 or 1) stops the bench."""
    if run.returncode not in (0, 1):
        die(f"judge --exercise {ex} ... failed ({run.returncode}):\n{(run.stdout + run.stderr)[-3000:]}", 1)
    return run.seconds


def timed(argv: list[str], cwd: Path) -> float:
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        die(f"{' '.join(argv[:3])} ... failed ({r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}", 1)
    return dt


def compile_step(rows: Report, source: str) -> dict:
    """The judge's compile of `source` in a grade's timeline (its argv and folder)."""
    for step in rows.timeline:
        if step.get("what") == f"compile {source}" and step.get("variant") == "default":
            return step
    die(f"the judge's timeline has no compile of {source} (an older judge? run ./course build)", 1)


def alone(step: dict) -> list[str]:
    """The judge's compile line without ccache (its precompiled header, if any, kept: that is what a regrade pays)."""
    argv = list(step["argv"])
    if argv and Path(argv[0]).name == "ccache":
        argv = argv[1:]
    return argv


def without_pch(argv: list[str]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "-include":
            skip = True
        else:
            out.append(a)
    return out


def union_seconds(steps: list[dict]) -> float:
    spans = sorted((s["start"], s["start"] + s["seconds"]) for s in steps)
    total, end = 0.0, float("-inf")
    for a, b in spans:
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def print_breakdown(title: str, wall: float, rows: Report) -> None:
    steps = sorted(rows.timeline, key=lambda s: s["start"])
    say(f"\n{title}: {wall:.2f} s as the student waits; the judge's own clock {rows.seconds:.2f} s")
    say(f"  {'start':>6} {'seconds':>7}  step")
    for s in steps:
        line = f"  {s['start']:6.2f} {s['seconds']:7.2f}  {s['what']}"
        if "worker" in s:
            phases = ", ".join(f"{k} {v:.3f}" for k, v in s["worker"].items())
            line += " [forked by the worker server]" if s.get("forked") else " [fresh sandbox and Python]"
            line += f": {phases}" if phases else ""
            if s.get("server"):
                line += f"\n{'':18}{s['server']}"
        say(line)
    busy = union_seconds(steps)
    say(
        f"  the judge's own work (start-up, inputs, comparisons, reports; nothing above running): "
        f"{max(0.0, wall - busy):.2f} s"
    )


def cmd_bench(args) -> int:
    ex = resolve_exercise(args.exercise)
    meta = load_exercise(ex)
    judge_path()
    tc = load_toolchain()
    source_dir = ROOT / "solutions" / ex if (ROOT / "solutions" / ex).is_dir() else ROOT / "exercises" / ex
    kinds = {}
    for suffix, label in ((".cpp", ".cpp edit"), (".cu", ".cu edit")):
        found = [s for s in meta["sources"] if s.endswith(suffix)]
        if found:
            kinds[label] = found[0]
    if not kinds:
        die(f"{ex} has no C++ or CUDA source to edit")
    runs = max(3, args.runs)
    work = Path(tempfile.mkdtemp(prefix=f"bench-{ex}-"))
    cold: list[float] = []
    warm = {k: [] for k in kinds}
    compiled = {k: [] for k in kinds}
    no_pch: list[float] = []
    last = {}
    try:
        sub = work / "submission"
        shutil.copytree(source_dir, sub)
        base_env = dict(os.environ)
        say(
            f"bench {ex}: {runs} rounds; each edits "
            + " and ".join(f"{f} ({k})" for k, f in kinds.items())
            + f" by one line (copied from {source_dir.relative_to(ROOT)}) and regrades; the rounds interleave, so a "
            "busy machine slows every figure alike"
        )
        tcf = work / "toolchain.json"  # the course's, but ccache's folder from the environment
        tcf.write_text(json.dumps(dict(tc, ccache_dir="")))
        warm_env = dict(base_env, CCACHE_DIR=str(work / "ccache-warm"))

        def grade(out: str, env: dict) -> tuple[float, Report]:
            seconds = judged(ex, run_judge(ex, sub, work / out, show="capture", env=env, color=False, toolchain=tcf))
            return seconds, read_rows(work / out)

        grade("warm", warm_env)  # the student's previous grade: fills the cache
        for i in range(runs):
            # cold: an empty ccache, so nothing of this source is cached
            cold.append(grade(f"cold{i}", dict(base_env, CCACHE_DIR=str(work / f"ccache-cold-{i}")))[0])
            line = f"  round {i + 1}: cold grade {cold[-1]:.1f} s"
            for kind, source in kinds.items():
                with open(sub / source, "a") as fh:
                    # a code change (a comment would leave the preprocessed text, so ccache's key, unchanged)
                    fh.write(f"namespace {{ [[maybe_unused]] int course_bench_edit_{i} = {i}; }}\n")
                seconds, rows = grade("warm", warm_env)
                warm[kind].append(seconds)
                last[kind] = (seconds, rows)
                step = compile_step(rows, source)
                compiled[kind].append(timed(alone(step), Path(step["cwd"])))
                what = "compile with the PCH" if source.endswith(".cpp") else "bare nvcc"
                line += f"; {kind}: regrade {seconds:.1f} s, {what} {compiled[kind][-1]:.1f} s"
                if source.endswith(".cpp"):
                    no_pch.append(timed(without_pch(alone(step)), Path(step["cwd"])))
            say(line)
        if args.breakdown:
            for kind, (seconds, rows) in last.items():
                print_breakdown(f"one warm regrade after a {kind} (the last round's)", seconds, rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    say("")
    say(f"bench {ex} (medians of {runs} rounds, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    say(f"  cold grade (compiler cache empty)          {statistics.median(cold):6.1f} s")
    met = True
    for kind, source in kinds.items():
        w, c = statistics.median(warm[kind]), statistics.median(compiled[kind])
        what = f"compile of {source} with the PCH" if source.endswith(".cpp") else f"bare nvcc of {source}"
        ok = w <= c + MARGIN_S
        met = met and ok
        say(f"  warm regrade after a one-line {kind:<9}     {w:6.1f} s")
        say(
            f"    {what:<41}{c:6.1f} s   target: regrade <= {c:.1f} + {MARGIN_S:.0f} = {c + MARGIN_S:.1f} s: "
            f"{'met' if ok else 'NOT met'}"
        )
    if no_pch:
        say(f"  (the .cpp without the precompiled header     {statistics.median(no_pch):6.1f} s)")
    return 0 if met or not args.check else 1
