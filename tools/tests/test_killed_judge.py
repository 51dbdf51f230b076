"""What a killed grade leaves behind. (1) A judge killed outright (SIGKILL: a job's time limit, `kill -9`) cannot clean
up after itself: its worker dies with it (the sandbox dies with its parent), but its folder of memory cgroups stays;
the next judge removes it before it makes its own, and grades as usual. (2) A course command killed outright takes its
judge with it (else the judge grades on, into a folder the next command reuses). Exit 77 (SKIPPED) where the judge
cannot make memory cgroups on this machine (the folder is how the test finds the judge mid-grade).
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


def gone(pid):
    """Not running: no such process, or a zombie (killed, not yet reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(") ") + 2 :][:1] == "Z"


def judge_mid_grade(tmp, name, before):
    """Starts `./course grade 01` and returns (the command, its judge's cgroup folder) once a worker runs in it."""
    grade = subprocess.Popen(
        [
            sys.executable,
            *CLI,
            "grade",
            "01_custom_op",
            str(SOURCE / "solutions" / "01_custom_op"),
            "--out",
            str(tmp / name),
            "--no-color",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 600
    while grade.poll() is None and time.monotonic() < deadline:
        for folder in judge_folders() - before:
            try:
                if any(p.is_dir() for p in folder.iterdir()):  # a worker runs in it: the judge is mid-grade
                    return grade, folder
            except OSError:  # a judge that ended meanwhile
                pass
        time.sleep(0.05)
    os.killpg(grade.pid, signal.SIGKILL)
    grade.wait()
    print(
        f"SKIPPED: no judge made a memory cgroup here (looked in {[str(f) for f in cgroup_folders()]}): the "
        "limit_host_memory protection is off on this machine, so nothing of it can be left behind"
    )
    sys.exit(77)


def settle(folder):
    """A killed judge's worker dies a moment after it: until then its folder is in use and no judge could remove it."""
    deadline = time.monotonic() + 60

    def busy():
        try:
            return any((run / "cgroup.procs").read_text().strip() for run in folder.iterdir() if run.is_dir())
        except OSError:  # removed meanwhile
            return False

    while time.monotonic() < deadline and busy():
        time.sleep(0.1)


tmp = temp_dir("killed-judge")
try:
    before = judge_folders()
    # (1) the judge killed outright, and the command above it
    grade, stale = judge_mid_grade(tmp, "killed", before)
    judge_pid = int(stale.name.rsplit("-", 1)[1])
    os.kill(judge_pid, signal.SIGKILL)
    os.killpg(grade.pid, signal.SIGKILL)
    grade.wait()
    settle(stale)
    expect(stale.is_dir(), f"the killed judge left its cgroup folder {stale} (the case this test exists for)")
    print(f"left by the killed judge {judge_pid}: {stale} {sorted(p.name for p in stale.iterdir() if p.is_dir())}")

    # (2) only the course command killed: its judge must not grade on
    grade, orphan = judge_mid_grade(tmp, "orphan", before | {stale})
    orphan_pid = int(orphan.name.rsplit("-", 1)[1])
    os.kill(grade.pid, signal.SIGKILL)
    grade.wait()
    deadline = time.monotonic() + 300
    while not gone(orphan_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(grade.pid, signal.SIGKILL)  # whatever is left of that grade, before an expectation can exit
    finished = [f for f in ("results.json", "table.txt") if (tmp / "orphan" / f).exists()]
    expect(
        not finished,
        f"the judge {orphan_pid} stopped when its course command was killed (it graded on and wrote {finished})",
    )
    if orphan.exists():
        settle(orphan)
    print(f"the judge {orphan_pid} stopped with its command, its grade unfinished")

    rc, out = run(
        ["grade", "02_schema", str(SOURCE / "solutions" / "02_schema"), "--out", str(tmp / "next"), "--no-color"]
    )
    expect(rc == 0, f"the next grade ran as usual (exit {rc})")
    expect(
        not stale.exists() and not orphan.exists(),
        f"the next judge removed the killed judges' cgroup folders ({stale.exists()}, {orphan.exists()})",
    )
    # (a judge still running beside this test, in a parallel test's grade, has its folder: that one is not left)
    left = {f for f in judge_folders() - before if gone(int(f.name.rsplit("-", 1)[-1]))}
    expect(not left, f"no judge's cgroup folder is left ({left})")
    print("ok: a killed command takes its judge with it; a killed judge's cgroups are removed by the next judge")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
