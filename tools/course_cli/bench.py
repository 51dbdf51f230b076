"""bench: times a cold grade (empty compiler cache), a warm regrade after a one-line edit, and a bare compile of the
edited source with the judge's own flags (toolchain.json's "cxx_flags"), so the regrade's cost can be compared with
what the compiler alone costs."""
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
from .judge import JudgeRun, compile_flags, judge_path, load_toolchain, run_judge


def judged(ex: str, run: JudgeRun) -> float:
    """The seconds a grade took; a judge that could not grade (not 0 or 1) stops the bench."""
    if run.returncode not in (0, 1):
        die(f"judge --exercise {ex} ... failed ({run.returncode}):\n{(run.stdout + run.stderr)[-3000:]}", 1)
    return run.seconds


def timed(argv: list[str]) -> float:
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        die(f"{' '.join(argv[:3])} ... failed ({r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}", 1)
    return dt


def cmd_bench(args) -> int:
    ex = resolve_exercise(args.exercise)
    meta = load_exercise(ex)
    judge_path()
    tc = load_toolchain()
    flags = compile_flags(tc)
    source_dir = ROOT / "solutions" / ex if (ROOT / "solutions" / ex).is_dir() else ROOT / "exercises" / ex
    cpu_sources = [s for s in meta["sources"] if not s.endswith(".cu")]
    if not cpu_sources:
        die(f"{ex} has no C++ source to edit")
    edit = cpu_sources[0]
    runs = max(3, args.runs)
    work = Path(tempfile.mkdtemp(prefix=f"bench-{ex}-"))
    cold, warm, bare, with_pch = [], [], [], []
    try:
        sub = work / "submission"
        shutil.copytree(source_dir, sub)
        base_env = dict(os.environ)
        say(f"bench {ex}: {runs} rounds, editing {edit} (copied from {source_dir.relative_to(ROOT)}); each round "
            "times the four in turn, so a busy machine slows them alike")
        tcf = work / "toolchain.json"  # the course's, but ccache's folder from the environment
        tcf.write_text(json.dumps(dict(tc, ccache_dir="")))
        warm_env = dict(base_env, CCACHE_DIR=str(work / "ccache-warm"))

        def grade(out: str, env: dict) -> float:
            return judged(ex, run_judge(ex, sub, work / out, show="capture", env=env, color=False, toolchain=tcf))
        grade("warm", warm_env)  # the student's previous grade: fills the cache
        pch = tc.get("pch_include", "")
        pch = pch if pch and Path(pch + ".gch").is_file() else ""
        for i in range(runs):
            # cold: an empty ccache, so nothing of this source is cached
            cold.append(grade(f"cold{i}", dict(base_env, CCACHE_DIR=str(work / f"ccache-cold-{i}"))))
            with open(sub / edit, "a") as fh:
                # a code change (a comment would leave the preprocessed text, so ccache's key, unchanged)
                fh.write(f"namespace {{ [[maybe_unused]] int course_bench_edit_{i} = {i}; }}\n")
            warm.append(grade("warm", warm_env))
            # bare compile: the judge's own compile line, without ccache and without the precompiled header
            bare.append(timed([tc["cxx"]] + flags + ["-c", str(sub / edit), "-o", str(work / "bare.o")]))
            line = f"  round {i + 1}: cold grade {cold[-1]:.1f} s, warm regrade {warm[-1]:.1f} s, bare compile {bare[-1]:.1f} s"
            if pch:
                with_pch.append(timed([tc["cxx"]] + flags + ["-include", pch, "-c", str(sub / edit), "-o",
                                                                str(work / "pch.o")]))
                line += f", compile with the PCH {with_pch[-1]:.1f} s"
            say(line)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mc, mw, mb = statistics.median(cold), statistics.median(warm), statistics.median(bare)
    target = 1.5 * mb + 5
    say("")
    say(f"bench {ex} (medians of {runs} runs, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    say(f"  cold grade (ccache empty)           {mc:6.1f} s")
    say(f"  warm regrade after a one-line edit  {mw:6.1f} s")
    say(f"  bare compile of {edit:<20}{mb:6.1f} s")
    if with_pch:
        say(f"  compile with the precompiled header {statistics.median(with_pch):6.1f} s   (what a regrade compiles)")
    say(f"  target: warm <= 1.5 x bare + 5 s = {target:.1f} s: {'met' if mw <= target else 'NOT met'}")
    return 0 if mw <= target or not args.check else 1
