"""A grade does not depend on its neighbours, on a GPU machine (the CPU half is ctest cli/batch_neighbours).

Run by tools/gpu/run_on_gpu.sh LOG_DIR neighbours, with the course built. Four parts, each with its expectation:
1. The issue's batch (`--jobs 2`, 04_cuda, the judge's default settings): a student who submits the reference beside
   one whose operator takes every byte of the GPU's memory when loaded (planted 04_cuda/takes_all_gpu_memory). The
   reference's rows and score must be exactly those it gets graded alone, and the memory taker's failures its own (no
   row of it "not graded").
2. Eight students, `--jobs 8`: four references beside two memory takers, one that takes 8 GiB of host memory in every
   CUDA worker (holds_host_memory) and one whose kernel never ends (kernel_never_ends); the same expectations, the
   wall time and throughput reported.
3. Part 1 with the GPU turns switched off (COURSE_GPU_LOCK=off): what the turns prevent. No row of the reference may
   FAIL; a row spoiled by the neighbour is retried, then PASS or not graded.
4. A process outside the course holds every byte of the GPU's memory while the reference is graded alone: each CUDA
   row is "not graded: the grading machine ran out of GPU memory", none FAILs, and the totals say so.
5. Nothing of any grade is left behind: no process of a sandbox uid, no process holding GPU memory.

usage: python tools/gpu/neighbours.py LOG_DIR [PARTS]   (PARTS: e.g. 1,4; default 1,2,3,4; part 5 always runs. Exit
       status 1 when an expectation fails; the report: LOG_DIR/neighbours.txt)
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from opcourse import planted as planted_cases

ROOT = Path(__file__).resolve().parents[2]

PY = os.environ.get("COURSE_PYTHON", sys.executable)
EX = "04_cuda"
HOLD_GPU = r"""
import sys, time, torch
held, chunk = [], 1 << 30
while chunk >= 1 << 20:
    try:
        held.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError:
        chunk //= 2
free, total = torch.cuda.mem_get_info()
print(f"holding {sum(t.numel() for t in held) / 2**30:.1f} GiB; free {free / 2**20:.0f} of {total / 2**30:.1f} GiB", flush=True)
sys.stdin.read()
"""

lines, failures = [], []


def say(text=""):
    print(text, flush=True)
    lines.append(text)


def expect(cond, what):
    say(("ok:     " if cond else "FAILED: ") + what)
    if not cond:
        failures.append(what)


def course(*args, env=None):
    start = time.monotonic()
    r = subprocess.run(
        [PY, "-m", "opcourse.cli", *map(str, args)], capture_output=True, text=True, env=dict(os.environ, **(env or {}))
    )
    seconds = time.monotonic() - start
    say(
        f"$ {' '.join(map(str, ('./course',) + args))}{''.join(f' [{k}={v}]' for k, v in (env or {}).items())}"
        f"  -> exit {r.returncode} in {seconds:.0f} s"
    )
    return r, seconds


def rows(folder):
    data = json.loads((Path(folder) / "rows.json").read_text())
    return data, {r["id"]: r for r in data["rows"]}


def verdicts(folder):
    data, by_id = rows(folder)
    return [(i, r["status"], r["points"]) for i, r in by_id.items()], data


def make_class(tmp, students):
    klass = tmp / "class"
    for student, case in students.items():
        dest = klass / student / EX
        if case == "reference":
            shutil.copytree(ROOT / "solutions" / EX, dest)
        else:
            shutil.copytree(
                planted_cases.materialize(ROOT, ROOT / "autograder" / "planted" / EX / case, tmp / "work" / student),
                dest,
            )
    return klass


def smi(query):
    try:
        return subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def gradebook(out):
    path = Path(out) / "gradebook.csv"
    return path.read_text().strip() if path.exists() else "(no gradebook)"


def check_batch(out, references, ref, ref_data, takers):
    say(gradebook(out))
    if (out / "throughput.json").exists():
        for line in json.loads((out / "throughput.json").read_text())["lines"]:
            say("  " + line)
    for student in references:
        got, data = verdicts(out / "students" / student / EX)
        expect(
            got == ref,
            f"{student} (the reference): the rows and score it gets alone ({data['score']:g} and "
            f"{ref_data['score']:g} of {data['max_score']:g})",
        )
    for student in takers:
        _, taken = rows(out / "students" / student / EX)
        machine = [i for i, r in taken.items() if r.get("not_graded") and "CUDA device" not in r["not_graded"]]
        failed = [i for i, r in taken.items() if r["status"] == "FAIL"]
        own = [i for i in failed if "the operator's own doing" in taken[i]["detail"]]
        expect(
            failed and not machine,
            f"{student} (takes all of the GPU's memory): its failures are its own, "
            f"{len(failed)} rows FAIL ({len(own)} retried alone and judged its own "
            f"doing), none 'not graded' ({machine or 'none'})",
        )


def main(logs, parts):
    logs = Path(logs)
    logs.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="course-neighbours-"))
    try:
        say(f"# Neighbours on {smi('--query-gpu=name,memory.total') or 'a machine without nvidia-smi'}")
        say("\n## The reference graded alone")
        alone = tmp / "alone"
        course("grade", EX, ROOT / "solutions" / EX, "--out", alone, "--no-color")
        ref, ref_data = verdicts(alone)
        say(f"score {ref_data['score']:g} of {ref_data['max_score']:g}")

        say(f"compute mode: {smi('--query-gpu=compute_mode') or '?'}; parts: {', '.join(map(str, sorted(parts)))}")
        if 1 in parts:
            say(
                "\n## 1. The issue's batch (--jobs 2): the reference beside an operator that takes all of the GPU's memory"
            )
            one = tmp / "batch-2"
            course(
                "batch",
                make_class(tmp / "c1", {"alice": "reference", "mallory": "takes_all_gpu_memory"}),
                "--jobs",
                "2",
                "--exercises",
                EX,
                "--out",
                one,
            )
            check_batch(one, ["alice"], ref, ref_data, ["mallory"])

        if 2 in parts:
            say("\n## 2. Eight students, --jobs 8, default settings: four references beside hostile neighbours")
            eight = tmp / "batch-8"
            course(
                "batch",
                make_class(
                    tmp / "c2",
                    {
                        "alice": "reference",
                        "bob": "reference",
                        "carol": "reference",
                        "dave": "reference",
                        "mallory_gpu": "takes_all_gpu_memory",
                        "mallory_gpu_2": "takes_all_gpu_memory",
                        "mallory_host": "holds_host_memory",
                        "mallory_hang": "kernel_never_ends",
                    },
                ),
                "--jobs",
                "8",
                "--exercises",
                EX,
                "--out",
                eight,
            )
            check_batch(eight, ["alice", "bob", "carol", "dave"], ref, ref_data, ["mallory_gpu", "mallory_gpu_2"])
            host, _ = verdicts(eight / "students" / "mallory_host" / EX)
            expect(host == ref, "the host-memory taker (right, only greedy): the reference's verdicts")
            hang, _ = rows(eight / "students" / "mallory_hang" / EX)
            say(f"  the kernel that never ends: {hang['score']:g} of {hang['max_score']:g}")

        if 3 in parts:
            say("\n## 3. The GPU turns switched off (COURSE_GPU_LOCK=off): the batch of part 1 again")
            off = tmp / "batch-off"
            course(
                "batch",
                make_class(tmp / "c3", {"alice": "reference", "mallory": "takes_all_gpu_memory"}),
                "--jobs",
                "2",
                "--exercises",
                EX,
                "--out",
                off,
                env={"COURSE_GPU_LOCK": "off"},
            )
            say(gradebook(off))
            _, alice = rows(off / "students" / "alice" / EX)
            failed = [i for i, r in alice.items() if r["status"] == "FAIL"]
            spoiled = {
                i: r["detail"][:200] for i, r in alice.items() if r.get("not_graded") or "retried" in r["detail"]
            }
            expect(
                not failed,
                f"no row of the reference FAILs without the turns ({failed or 'none'}); retried or not "
                f"graded: {len(spoiled)}",
            )
            for i, d in spoiled.items():
                say(f"  {i}: {d}")

        if 4 in parts:
            say(
                "\n## 4. A process outside the course holds all of the GPU's memory while the reference is graded alone"
            )
            hog = subprocess.Popen([PY, "-c", HOLD_GPU], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            say("  " + hog.stdout.readline().strip())
            try:
                held = tmp / "held"
                course("grade", EX, ROOT / "solutions" / EX, "--out", held, "--no-color")
            finally:
                hog.stdin.close()
                hog.wait(timeout=60)
            data, got = rows(held)
            cuda_rows = [i for i, r in got.items() if i.endswith(".cuda") and i != "guard.cuda"]
            machine = [i for i in cuda_rows if got[i]["status"] == "SKIPPED"]
            failed = [i for i, r in got.items() if r["status"] == "FAIL"]
            expect(
                not failed and machine == cuda_rows,
                f"every CUDA row not graded ({len(machine)} of {len(cuda_rows)}), none FAILs ({failed or 'none'})",
            )
            for why in sorted({got[i]["not_graded"] for i in machine}):
                say(f"  not graded: {why[:240]}")
            say(
                f"  the totals: score {data['score']:g} of {data['max_score']:g}; not graded: "
                f"{json.dumps(data.get('not_graded'))}"
            )
            if machine:
                say(f"  {machine[0]}: {got[machine[0]]['detail'][:300]}")

        say("\n## 5. Nothing left behind")
        left = subprocess.run(["ps", "-eo", "uid,pid,args", "--no-headers"], capture_output=True, text=True).stdout
        sandboxed = [l for l in left.splitlines() if l.split() and int(l.split()[0]) >= 1000000]
        expect(not sandboxed, f"no process of a sandbox uid is running ({len(sandboxed)})")
        cgroups = [str(p) for p in Path("/sys/fs/cgroup").rglob("course-judge-*") if p.is_dir()]
        expect(not cgroups, f"no memory cgroup of a judge is left ({cgroups[:3] or 'none'})")
        gpu_apps = smi("--query-compute-apps=pid,used_memory")
        expect(not gpu_apps, f"no process holds GPU memory ({gpu_apps or 'none'})")
        say(f"\n{len(failures)} expectation(s) failed" if failures else "\nevery expectation held")
    finally:
        (logs / "neighbours.txt").write_text("\n".join(lines) + "\n")
        for name in ("batch-2", "batch-8", "batch-off"):
            for f in ("gradebook.csv", "throughput.json"):
                if (tmp / name / f).exists():
                    shutil.copy(tmp / name / f, logs / f"neighbours-{name}-{f}")
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], {int(p) for p in (sys.argv[2] if len(sys.argv) == 3 else "1,2,3,4").split(",")}))
