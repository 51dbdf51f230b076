"""Helpers shared by the tests of the course's commands (tools/course.py, the package tools/course_cli/)."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]
CLI = SOURCE / "tools" / "course.py"


def run(args, env=None, cwd=None, timeout=900, input=None):
    r = subprocess.run([sys.executable, str(CLI)] + list(args), env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=timeout, input=input)
    out = r.stdout + r.stderr
    print(f"$ course.py {' '.join(map(str, args))}  -> {r.returncode}\n{out}")
    return r.returncode, out


def _course_metadata():
    if str(SOURCE / "autograder" / "metadata") not in sys.path:
        sys.path.insert(0, str(SOURCE / "autograder" / "metadata"))
    import course_metadata
    return course_metadata


def metadata(exercise: str) -> dict:
    """An exercise's metadata, its checks resolved (the one source of its checks and points)."""
    return _course_metadata().load(exercise)


def max_points(exercise: str) -> int:
    """An exercise's full marks, from its metadata."""
    return int(_course_metadata().max_points(metadata(exercise)))


def expect(cond, msg):
    if not cond:
        print(f"FAILED: {msg}")
        sys.exit(1)


def temp_dir(name):
    d = Path(tempfile.mkdtemp(prefix=f"course-{name}-"))
    return d


def course_copy(tmp: Path) -> Path:
    """A throwaway course checkout (exercises + requirements, one git commit) to run student commands in."""
    root = tmp / "course"
    shutil.copytree(SOURCE / "exercises", root / "exercises")
    shutil.copytree(SOURCE / "requirements", root / "requirements")
    shutil.copytree(SOURCE / "autograder" / "metadata", root / "autograder" / "metadata")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "course"], check=True)
    return root


def env_for(root: Path, build: Path, **extra):
    env = dict(os.environ, COURSE_ROOT=str(root), COURSE_BUILD_DIR=str(build), COURSE_STATE_DIR=str(root / ".course"))
    env.update(extra)
    return env


def judge_row(row_id: str, status: str, points: float = 0, max_points: float = 1) -> dict:
    """One row of a rows.json, every field the judge writes (autograder/schemas/rows.schema.json)."""
    return {"id": row_id, "title": row_id, "status": status, "points": points, "max_points": max_points,
            "detail": "", "expected": "", "seen": "", "hint": "", "not_graded": ""}


def judge_rows(exercise: str, **fields) -> dict:
    """A final rows.json as the judge writes it (every field its schema requires), with `fields` replaced."""
    doc = {"exercise": exercise, "seed": 1, "score": 0, "max_score": 0, "passed": 0, "failed": 0, "skipped": 0,
           "rows": [], "points_total": fields.get("max_score", 0), "not_graded": {"points": 0, "why": {}},
           "require_cuda": False, "protections": [], "sandbox_uid": -1, "worker_server_uid": -1,
           "judge_peak_rss_mb": 1.0, "timeline": [], "final": True, "grader_crash": None, "seconds": 1.0,
           "removed_bytes": 0}
    doc.update(fields)
    return doc
