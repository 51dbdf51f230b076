"""batch: a folder of submissions (one folder per student) graded in parallel; gradebook.csv, and for each student
results.json (Gradescope's format) and feedback.md. A re-run regrades only what changed.

The gradebook never hides what a grade left out: `not_graded` (points) and `not_graded_why` (per exercise, why:
e.g. "04_cuda: 12 needs a CUDA device") count the checks this machine could not run, and `protections_off` lists the
sandbox protections that were off in any of the student's grades. With --require-cuda, a grade that could not run
its CUDA rows fails (its CUDA rows FAIL as not graded, it is not kept for reuse, and batch exits 1)."""

from __future__ import annotations

import concurrent.futures as futures
import hashlib
import json
import os
import shutil
import statistics
import sys
import threading
import time
from pathlib import Path

from .common import BUILD, ROOT, die, say
from .exercises import exercise_ids, load_exercise, resolve_exercise, total_points
from .gradescope import merge_results
from .judge import judge_path, run_judge
from ..reports import Report, ReportError, read_rows, stand_in, write_results, write_rows
from . import spreadsheet
from .submissions import file_hash, hash_tree, link_below, real_dir, real_file, submission_folder


class Progress:
    def __init__(self, total: int):
        self.total, self.done, self.cached, self.lock = total, 0, 0, threading.Lock()
        self.tty = sys.stderr.isatty()
        self.t0 = time.monotonic()

    def tick(self, label: str, cached: bool) -> None:
        with self.lock:
            self.done += 1
            self.cached += cached
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            bar = "#" * filled + "." * (width - filled)
            line = (
                f"[{bar}] {self.done}/{self.total} ({self.cached} unchanged) "
                f"{time.monotonic() - self.t0:5.0f} s  {label}"
            )
            if self.tty:
                print(
                    "\r" + line[:110].ljust(110),
                    end="" if self.done < self.total else "\n",
                    file=sys.stderr,
                    flush=True,
                )
            else:
                print(line, file=sys.stderr, flush=True)


def grade_one(
    ex: str, sub: Path | None, out: Path, key: str, timeout: float, refused: str = "", require_cuda: bool = False
) -> tuple[Report, bool, float | None]:
    """Returns (the grade's rows.json, reused, seconds the judge ran or None when it did not run). Reuses the previous
    grade when the key is unchanged (and its rows.json reads: one that does not match its schema is graded again)."""
    key_file = out / "grade.key"
    if key_file.is_file() and key_file.read_text() == key and (out / "rows.json").is_file():
        try:
            return read_rows(out), True, None
        except (OSError, ReportError) as e:
            say(f"grading again: {e}")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if sub is None or refused:  # nothing to grade: every check fails, and the table says why
        meta = load_exercise(ex)
        rows = write_rows(
            out, stand_in(ex, total_points(meta), len(meta["checks"]), refused=refused, missing=not refused)
        )
        why = f"not graded: {refused}" if refused else f"not submitted (no folder {ex}/ in the submission)"
        (out / "table.txt").write_text(f"{ex}: {why}\n")
        key_file.write_text(key)
        return rows, False, None
    seed = int(key[:8], 16) | 1
    r = run_judge(ex, sub, out, show="capture", color=False, seed=seed, timeout=timeout, require_cuda=require_cuda)
    log, rc = (f"the judge did not finish in {timeout:g} s", -1) if r.timed_out else (r.stdout + r.stderr, r.returncode)
    (out / "judge.log").write_text(log)
    try:
        rows = read_rows(out)
    except (OSError, ReportError) as e:
        if isinstance(e, ReportError):  # the judge's report is not what the judge writes: said, never read
            log = f"{log}\n{e}"
            say(str(e))
        meta = load_exercise(ex)
        rows = write_rows(out, stand_in(ex, total_points(meta), len(meta["checks"]), error=f"judge exit {rc}"))
        (out / "table.txt").write_text(
            f"{ex}: the grader could not grade this submission (exit {rc}):\n{log[-2000:]}\n"
        )
        return rows, False, r.seconds
    # a grade that could not run some rows under --require-cuda is not complete: the next run grades it again
    if rc in (0, 1) and not (require_cuda and rows.not_graded_points > 0):
        key_file.write_text(key)
    return rows, False, r.seconds


def throughput(seconds: dict[str, list[float]], wall: float, jobs: int) -> dict:
    """What this machine graded per hour in this run (submissions the judge ran; reused and missing ones excluded),
    and per exercise the median seconds of one grade and the rate that gives with the same number of jobs."""
    graded = sum(len(v) for v in seconds.values())
    every = sorted(s for v in seconds.values() for s in v)
    report = {
        "graded": graded,
        "wall_s": round(wall, 1),
        "jobs": jobs,
        "cores": os.cpu_count(),
        "per_hour": round(3600 * graded / wall) if graded and wall > 0 else 0,
        "median_s": round(statistics.median(every), 2) if every else None,
        "per_exercise": {},
        "lines": [],
    }
    if not graded:
        report["lines"].append("throughput: nothing was graded (every submission unchanged or missing)")
        return report
    report["lines"].append(
        f"throughput: {graded} submission(s) graded in {wall:.0f} s with {jobs} job(s) on "
        f"{os.cpu_count()} cores: {report['per_hour']} per hour; one grade takes "
        f"{report['median_s']:g} s (median)"
    )
    for ex in sorted(seconds):
        med = statistics.median(seconds[ex])
        rate = round(3600 * jobs / med) if med > 0 else 0
        report["per_exercise"][ex] = {"graded": len(seconds[ex]), "median_s": round(med, 2), "per_hour_est": rate}
        report["lines"].append(
            f"  {ex:<16} {len(seconds[ex]):4d} graded, {med:6.1f} s each (median): about {rate} "
            f"per hour with {jobs} job(s)"
        )
    return report


def feedback_report(student: str, per_ex: dict[str, Path], merged: dict) -> str:
    total = f"Total: {merged['score']:g} / {merged['extra_data']['max_score']:g}"
    ng = merged["extra_data"].get("not_graded", {})
    if ng.get("points", 0) > 0:
        total += (
            f" ({ng['points']:g} more points not graded here: "
            + ", ".join(f"{p:g} {why}" for why, p in sorted(ng["why"].items()))
            + ")"
        )
    parts = [f"# Feedback for {student}", "", total, ""]
    for ex, out in per_ex.items():
        table = (out / "table.txt").read_text() if (out / "table.txt").is_file() else f"{ex}: no report\n"
        parts += [f"## {ex}", "", "```", table.rstrip(), "```", ""]
    return "\n".join(parts)


def _jobs(args, subs: Path, out: Path, judge: Path, students: list[Path], exercises: list[str]) -> list[tuple]:
    """One job per student and exercise: (student, exercise, submission, output folder, cache key, why refused)."""
    judge_key = file_hash(judge) + file_hash(BUILD / "toolchain.json") + hash_tree(ROOT / "autograder" / "worker")
    jobs = []
    for st in students:
        for ex in exercises:
            sub = submission_folder(st, ex) if real_dir(st) else st
            if sub is None and len(exercises) == 1 and any(real_file(st / s) for s in load_exercise(ex)["sources"]):
                sub = st
            bad = link_below(subs, sub) if sub else None
            refused = f"{bad} is a symbolic link or not a folder: submit the folder itself" if bad else ""
            fingerprint = "refused" if refused else hash_tree(sub) if sub else "missing"
            key = hashlib.sha256(
                fingerprint.encode()
                + judge_key.encode()
                + (b"require-cuda" if args.require_cuda else b"")
                + file_hash(ROOT / "exercises" / ex / "exercise.json").encode()
                + file_hash(ROOT / "autograder" / "metadata" / "checks.json").encode()
            ).hexdigest()
            jobs.append((st.name, ex, sub, out / "students" / st.name / ex, key, refused))
    return jobs


def _grade_jobs(args, jobs: list[tuple]) -> tuple[dict, dict, float]:
    """Every job graded, --jobs at once: the reports by (student, exercise), the judge's seconds per exercise, the
    wall-clock seconds."""
    bar = Progress(len(jobs))
    rows: dict[tuple[str, str], Report] = {}
    seconds: dict[str, list[float]] = {}  # per exercise, the judge's time for each submission it graded
    wall_start = time.monotonic()
    with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        running = {
            pool.submit(grade_one, ex, sub, o, key, args.timeout, refused, args.require_cuda): (st, ex)
            for st, ex, sub, o, key, refused in jobs
        }
        for f in futures.as_completed(running):
            st, ex = running[f]
            r, cached, took = f.result()
            rows[(st, ex)] = r
            if took is not None:
                seconds.setdefault(ex, []).append(took)
            bar.tick(f"{st}/{ex} {r.score:g}/{r.max_score:g}", cached)
    return rows, seconds, time.monotonic() - wall_start


def _write_gradebook(out: Path, students: list[Path], exercises: list[str], rows: dict) -> None:
    with open(out / "gradebook.csv", "w", newline="") as fh:
        w = spreadsheet.writer(fh)  # a student's folder name is text, never a formula (spreadsheet.py)
        w.writerow(["student"] + exercises + ["total", "max", "not_graded", "not_graded_why", "protections_off"])
        for st in students:
            per = [rows[(st.name, ex)] for ex in exercises]
            missed = {ex: rows[(st.name, ex)].not_graded() for ex in exercises}
            why = "; ".join(
                f"{ex}: " + ", ".join(f"{p:g} {reason}" for reason, p in sorted(reasons.items()))
                for ex, (points, reasons) in missed.items()
                if points > 0
            )
            off = sorted({p for r in per for p in r.protections_off()})
            w.writerow(
                [st.name]
                + [f"{r.score:g}" for r in per]
                + [
                    f"{sum(r.score for r in per):g}",
                    f"{sum(r.max_score for r in per):g}",
                    f"{sum(points for points, _ in missed.values()):g}",
                    why,
                    " ".join(off),
                ]
            )


def _write_student_reports(out: Path, students: list[Path], exercises: list[str], rows: dict) -> None:
    """Each student's results.json (Gradescope's format) and feedback.md."""
    for st in students:
        per_ex = {ex: out / "students" / st.name / ex for ex in exercises}
        merged = merge_results(st.name, per_ex, {ex: rows[(st.name, ex)] for ex in exercises})
        write_results(out / "students" / st.name / "results.json", merged)
        (out / "students" / st.name / "feedback.md").write_text(feedback_report(st.name, per_ex, merged))


def _warnings(args, rows: dict) -> int:
    """The warnings after the run: protections off, points not graded here (a failure with --require-cuda)."""
    off = sorted({p for r in rows.values() for p in r.protections_off()})
    if off:
        say(f"WARNING: graded with sandbox protections off: {', '.join(off)} (gradebook column protections_off)")
    missed = sorted(f"{st}/{ex}" for (st, ex), r in rows.items() if r.not_graded_points > 0)
    if missed:
        say(
            f"{'FAILED' if args.require_cuda else 'NOTE'}: {len(missed)} grade(s) left points not graded on this "
            f"machine (gradebook columns not_graded, not_graded_why): {', '.join(missed[:10])}"
            + (" ..." if len(missed) > 10 else "")
            + (": --require-cuda makes them fail; grade them on a machine with a GPU" if args.require_cuda else "")
        )
        if args.require_cuda:
            return 1
    return 0


def cmd_batch(args) -> int:
    subs = Path(args.submissions)
    if not subs.is_dir():
        die(f"{subs} is not a folder (expected one folder per student)")
    out = Path(args.out) if args.out else subs.parent / (subs.name + "-grades")
    judge = judge_path()
    exercises = [resolve_exercise(e) for e in args.exercises.split(",")] if args.exercises else exercise_ids()
    # a student folder that is a link is listed (the student gets a row) and refused, never followed
    students = sorted(p for p in subs.iterdir() if (p.is_dir() or p.is_symlink()) and not p.name.startswith("."))
    if not students:
        die(f"{subs} holds no student folders")
    jobs = _jobs(args, subs, out, judge, students, exercises)
    say(f"grading {len(students)} student(s) x {len(exercises)} exercise(s) with {args.jobs} job(s) into {out}")
    rows, seconds, wall = _grade_jobs(args, jobs)
    out.mkdir(parents=True, exist_ok=True)
    _write_gradebook(out, students, exercises, rows)
    _write_student_reports(out, students, exercises, rows)
    report = throughput(seconds, wall, args.jobs)
    (out / "throughput.json").write_text(json.dumps(report, indent=2))
    for line in report["lines"]:
        say(line)
    say(f"gradebook: {out / 'gradebook.csv'}")
    say(f"per student: {out}/students/NAME/results.json (Gradescope format) and feedback.md")
    if args.summary:
        say((out / "gradebook.csv").read_text().rstrip())
    return _warnings(args, rows)
