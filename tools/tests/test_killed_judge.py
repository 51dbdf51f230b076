"""A judge killed outright (SIGKILL: a job's time limit, `kill -9`) cannot clean up after itself: its worker dies with
it (the sandbox dies with its parent), but its folder of memory cgroups stays. The next judge removes it before it
makes its own, and grades as usual. Exit 77 (SKIPPED) where the judge cannot make memory cgroups on this machine.
(Found on the GPU machine: a batch cut by the 10-minute limit left two, evidence/gpu/2026-12-05-h100-mutants-neighbours.)"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from clitest import CLI, SOURCE, expect, run, temp_dir


def cgroup_folders():
    """Where a judge of this process's cgroup makes its folder (judge/memory_cgroup.cpp: the same candidates)."""
    own = Path("/proc/self/cgroup").read_text().splitlines()
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        path = next((line.split(":", 2)[2] for line in own if line.startswith("0::")), "/")
        return [Path("/sys/fs/cgroup" + (path if path != "/" else "")), Path("/sys/fs/cgroup")]
    path = next((line.split(":", 2)[2] for line in own if ",memory," in f",{line.split(':', 2)[1]},"), None)
    return [] if path is None else [Path("/sys/fs/cgroup/memory" + (path if path != "/" else ""))]


def judge_folders():
    found = set()
    for folder in cgroup_folders():
        if folder.is_dir():
            found |= {p for p in folder.iterdir() if re.fullmatch(r"course-judge-\d+", p.name) and p.is_dir()}
    return found


tmp = temp_dir("killed-judge")
try:
    before = judge_folders()
    grade = subprocess.Popen([sys.executable, str(CLI), "grade", "01_custom_op", str(SOURCE / "solutions" / "01_custom_op"),
                              "--out", str(tmp / "killed"), "--no-color"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    stale, deadline = None, time.monotonic() + 600
    while stale is None and grade.poll() is None and time.monotonic() < deadline:
        for folder in judge_folders() - before:
            if any(p.is_dir() for p in folder.iterdir()):  # a worker runs in it: the judge is mid-grade
                stale = folder
        time.sleep(0.05)
    if stale is None:
        os.killpg(grade.pid, signal.SIGKILL)
        grade.wait()
        print(f"SKIPPED: no judge made a memory cgroup here (looked in {[str(f) for f in cgroup_folders()]}): the "
              "limit_host_memory protection is off on this machine, so nothing of it can be left behind")
        sys.exit(77)
    judge_pid = int(stale.name.rsplit("-", 1)[1])
    os.kill(judge_pid, signal.SIGKILL)
    os.killpg(grade.pid, signal.SIGKILL)  # the course command above it too: nobody cleans up
    grade.wait()
    # its worker dies with it, a moment later: until then the folder is in use and no judge could remove it
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(
            (run / "cgroup.procs").is_file() and (run / "cgroup.procs").read_text().strip()
            for run in stale.iterdir() if run.is_dir()):
        time.sleep(0.1)
    expect(stale.is_dir(), f"the killed judge left its cgroup folder {stale} (the case this test exists for)")
    print(f"left by the killed judge {judge_pid}: {stale} {sorted(p.name for p in stale.iterdir() if p.is_dir())}")

    rc, out = run(["grade", "02_schema", str(SOURCE / "solutions" / "02_schema"), "--out", str(tmp / "next"),
                   "--no-color"])
    expect(rc == 0, f"the next grade ran as usual (exit {rc})")
    expect(not stale.exists(), f"the next judge removed the killed judge's cgroup folder {stale}")
    expect(not (judge_folders() - before), f"no judge's cgroup folder is left ({judge_folders() - before})")
    print("ok: a killed judge's cgroups are removed by the next judge")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
