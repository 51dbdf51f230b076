#!/usr/bin/env python3
"""The student and instructor commands of ./course (stdlib only; ./course runs it).

Student:    list | hint EX | watch EX | reset EX | doctor
Instructor: batch SUBMISSIONS_DIR | gradescope-zip | bench [EX]

State a student accumulates (hints seen, pristine copies of the stubs, backups made by reset) lives in .course/ at
the root of the checkout, which git ignores.
"""
from __future__ import annotations

import argparse
import concurrent.futures as futures
import csv
import hashlib
import io
import json
import os
import re
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

ROOT = Path(os.environ.get("COURSE_ROOT", Path(__file__).resolve().parent.parent))
BUILD = Path(os.environ.get("COURSE_BUILD_DIR", ROOT / "build"))
STATE_DIR = Path(os.environ.get("COURSE_STATE_DIR", ROOT / ".course"))


def say(msg: str) -> None:
    print(msg, flush=True)


def die(msg: str, code: int = 2) -> "NoReturn":  # type: ignore[name-defined]
    print(f"course: {msg}", file=sys.stderr)
    sys.exit(code)


# --- exercises -----------------------------------------------------------------------------------------------------
sys.path.insert(0, str(ROOT / "autograder" / "metadata"))
import course_metadata  # noqa: E402  (the one Python reader of exercise.json)


def exercise_ids() -> list[str]:
    return course_metadata.exercise_ids(ROOT)


def load_exercise(ex: str) -> dict:
    path = ROOT / "exercises" / ex / "exercise.json"
    if not path.is_file():
        known = ", ".join(exercise_ids()) or "none"
        die(f"no exercise '{ex}' (known: {known}); `./course list` shows them all")
    try:
        return course_metadata.load(ex, ROOT)
    except course_metadata.MetadataError as e:
        die(str(e))


def resolve_exercise(ex: str) -> str:
    """Accepts the full id (02_schema), its number (02, 2) or its name (schema)."""
    ids = exercise_ids()
    if ex in ids:
        return ex
    matches = [i for i in ids if i.split("_", 1)[0].lstrip("0") == ex.lstrip("0") or i.split("_", 1)[-1] == ex]
    if len(matches) == 1:
        return matches[0]
    load_exercise(ex)  # dies with the list of known ids
    return ex


def stub_files(ex: str) -> list[str]:
    """Files of the stub a student edits: every file of the exercise folder but exercise.json."""
    meta = load_exercise(ex)
    names = set(meta.get("sources", []))
    names.update(meta.get("student_files", []))
    for p in (ROOT / "exercises" / ex).iterdir():
        if p.is_file() and p.name != "exercise.json" and not p.name.startswith("."):
            names.add(p.name)
    return sorted(names)


def git_show(relpath: str) -> bytes | None:
    try:
        r = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{relpath}"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout if r.returncode == 0 else None


def pristine(ex: str, name: str) -> bytes | None:
    """The original stub file: kept under .course/pristine the first time it is needed, from git's HEAD."""
    kept = STATE_DIR / "pristine" / ex / name
    if kept.is_file():
        return kept.read_bytes()
    data = git_show(f"exercises/{ex}/{name}")
    if data is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(data)
    return data


def snapshot_pristine() -> None:
    """Run by set-up: a pristine copy of every stub, from git's HEAD; outside a git checkout (a downloaded archive),
    the files as they are at the first set-up, before the student has edited them."""
    for ex in exercise_ids():
        for name in stub_files(ex):
            if pristine(ex, name) is None and (ROOT / "exercises" / ex / name).is_file():
                kept = STATE_DIR / "pristine" / ex / name
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / "exercises" / ex / name, kept)


# --- state ---------------------------------------------------------------------------------------------------------
def load_state() -> dict:
    try:
        return json.loads((STATE_DIR / "state.json").read_text())
    except (OSError, ValueError):
        return {}


def save_state(state: dict) -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = STATE_DIR / "state.json.tmp"
    tmp.write_text(json.dumps(state, indent=2, sort_keys=True))
    tmp.replace(STATE_DIR / "state.json")


# --- list ----------------------------------------------------------------------------------------------------------
def progress(ex: str) -> tuple[str, str]:
    """(status, detail): done / failing / not started / not graded."""
    folder = ROOT / "exercises" / ex
    names = stub_files(ex)
    unchanged = True
    for name in names:
        orig = pristine(ex, name)
        cur = folder / name
        if orig is None or not cur.is_file() or cur.read_bytes() != orig:
            unchanged = False
            break
    if unchanged:
        return "not started", "the stub is untouched"
    rows_file = BUILD / "grades" / ex / "rows.json"
    try:
        rows = json.loads(rows_file.read_text())
    except (OSError, ValueError):
        return "not graded", f"edited, not graded yet: ./course grade {ex}"
    newest = max(((folder / n).stat().st_mtime for n in names if (folder / n).is_file()), default=0)
    stale = " (edited since)" if newest > rows_file.stat().st_mtime else ""
    score = f"{rows.get('score', 0):g}/{rows.get('max_score', 0):g}"
    if rows.get("failed", 1) == 0:
        skipped = rows.get("skipped", 0)
        note = f", {skipped} skipped (no GPU)" if skipped else ""
        return "done", f"{score}{note}{stale}"
    failing = [r["id"] for r in rows.get("rows", []) if r.get("status") == "FAIL"]
    return "failing", f"{score}, failing: {', '.join(failing[:4])}{' ...' if len(failing) > 4 else ''}{stale}"


def cmd_list(args) -> int:
    ids = exercise_ids()
    if not ids:
        die("no exercises found under exercises/")
    counts: dict[str, int] = {}
    width = max(len(i) for i in ids)
    say(f"    {'exercise':<{width}}  {'status':<11}  detail")
    for ex in ids:
        status, detail = progress(ex)
        counts[status] = counts.get(status, 0) + 1
        mark = {"done": "[x]", "failing": "[!]", "not graded": "[~]"}.get(status, "[ ]")
        title = load_exercise(ex).get("title", "")
        say(f"{mark} {ex:<{width}}  {status:<11}  {title}: {detail}")
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    say(f"\n{counts.get('done', 0)}/{len(ids)} done ({summary})")
    nxt = next((ex for ex in ids if progress(ex)[0] != "done"), None)
    if nxt:
        say(f"next: ./course grade {nxt}   (stuck? ./course hint {nxt})")
    return 0


# --- hint ----------------------------------------------------------------------------------------------------------
def cmd_hint(args) -> int:
    ex = resolve_exercise(args.exercise)
    hints = load_exercise(ex).get("hints", [])
    if not hints:
        say(f"{ex} has no hints; the failing rows of `./course grade {ex}` each carry one")
        return 0
    state = load_state()
    seen = state.setdefault("hints", {})
    if args.reset:
        seen.pop(ex, None)
        save_state(state)
        say(f"hints of {ex} hidden again")
        return 0
    n = min(seen.get(ex, 0) + 1, len(hints))
    if args.all:
        n = len(hints)
    seen[ex] = n
    save_state(state)
    for i in range(n):
        prefix = "hint" if i == n - 1 else "(seen)"
        say(f"{prefix} {i + 1}/{len(hints)}: {hints[i]}")
    if n < len(hints):
        say(f"run `./course hint {ex}` again for the next one")
    else:
        say("that was the last hint; each failing row of the grade table has its own hint too")
    return 0


# --- reset ---------------------------------------------------------------------------------------------------------
def cmd_reset(args) -> int:
    ex = resolve_exercise(args.exercise)
    folder = ROOT / "exercises" / ex
    changed = []
    for name in stub_files(ex):
        orig = pristine(ex, name)
        if orig is None:
            die(f"cannot find the original of exercises/{ex}/{name} (not in git's HEAD nor in {STATE_DIR}/pristine)", 1)
        cur = folder / name
        if not cur.is_file() or cur.read_bytes() != orig:
            changed.append((name, orig))
    if not changed:
        say(f"{ex} is already the original stub; nothing to reset")
        return 0
    say(f"reset will restore the original stub of: {', '.join('exercises/' + ex + '/' + n for n, _ in changed)}")
    if not args.yes:
        if not sys.stdin.isatty():
            die("refusing to reset without confirmation: add --yes", 1)
        answer = input("your version is backed up first. Reset? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            say("nothing changed")
            return 1
    backup = STATE_DIR / "backups" / f"{ex}-{time.strftime('%Y%m%d-%H%M%S')}"
    n = 0
    while backup.exists():
        n += 1
        backup = backup.with_name(backup.name.split("+")[0] + f"+{n}")
    backup.mkdir(parents=True)
    for name, orig in changed:
        cur = folder / name
        if cur.is_file():
            shutil.copy2(cur, backup / name)
        cur.write_bytes(orig)
    say(f"restored {len(changed)} file(s); your version is in {backup}")
    return 0


# --- doctor --------------------------------------------------------------------------------------------------------
def find_course_python() -> str | None:
    if os.environ.get("COURSE_PYTHON"):
        return os.environ["COURSE_PYTHON"]
    cache = Path(os.environ.get("COURSE_CACHE", Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "opcourse"))
    base = os.environ.get("COURSE_BASE_PYTHON", "python3")
    try:
        version = subprocess.run([base, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
                                 timeout=30).stdout
    except OSError:
        return None
    lines = [l for l in (ROOT / "requirements" / "course.txt").read_text().splitlines() if l and not l.startswith("#")]
    key = hashlib.sha256(("\n".join(lines) + "\n" + version).encode()).hexdigest()[:16]
    venv = cache / f"venv-{key}"
    return str(venv / "bin" / "python") if (venv / ".complete").is_file() else None


def run_quiet(argv: list[str], timeout: float = 60) -> tuple[int, str]:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        return r.returncode, (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return 127, str(e)


def cmd_doctor(args) -> int:
    deps_root = os.environ.get("COURSE_DEPS_ROOT", "")
    results = []  # (name, ok, detail, fix, required)

    def check(name, ok, detail, fix, required=True):
        results.append((name, ok, detail, fix, required))

    def which(*names):
        for n in names:
            p = shutil.which(n)
            if p:
                return p
            if deps_root and Path(deps_root, "usr/bin", n).exists():
                return str(Path(deps_root, "usr/bin", n))
        return None

    apt = "apt-get update && apt-get install -y --no-install-recommends"
    py = find_course_python()
    torch_cuda = None
    if py:
        rc, out = run_quiet([py, "-c", "import torch, safetensors; print(torch.__version__, torch.version.cuda)"], 120)
        ok = rc == 0
        if ok:
            torch_cuda = out.split()[-1]
        check("python + torch", ok, f"{py}: torch {out}" if ok else out.splitlines()[-1] if out else py,
              f"{py} -m pip install -r requirements/course.txt")
    else:
        check("python + torch", False, "no course venv and COURSE_PYTHON is unset",
              "tools/setup.sh   (creates the venv; or export COURSE_PYTHON=/path/to/python-with-torch)")
    nvcc = os.environ.get("CUDACXX") or which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
    nvcc_ver = None
    if nvcc:
        rc, out = run_quiet([nvcc, "--version"])
        m = re.search(r"release (\d+\.\d+)", out)
        nvcc_ver = m.group(1) if m else None
    check("nvcc", bool(nvcc_ver), f"{nvcc} (CUDA {nvcc_ver})" if nvcc_ver else "not found",
          "install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) or export CUDACXX=/path/to/nvcc")
    if torch_cuda and nvcc_ver:
        same = torch_cuda.split(".")[0] == nvcc_ver.split(".")[0]
        check("torch CUDA = nvcc major", same, f"torch built for CUDA {torch_cuda}, nvcc is {nvcc_ver}",
              f"pin a torch built for CUDA {nvcc_ver.split('.')[0]} in requirements/course.txt, then tools/setup.sh")
    cmake = which("cmake")
    if cmake:
        rc, out = run_quiet([cmake, "--version"])
        m = re.search(r"version (\d+)\.(\d+)", out)
        ok = bool(m) and (int(m.group(1)), int(m.group(2))) >= (3, 24)
        check("cmake >= 3.24", ok, f"{cmake} {m.group(0) if m else out[:60]}", f"{apt} cmake   (or pip install cmake)")
    else:
        check("cmake >= 3.24", False, "not found", f"{apt} cmake")
    ninja = which("ninja")
    check("ninja", bool(ninja), ninja or "not found", f"{apt} ninja-build")
    cxx = os.environ.get("CXX") or which("c++", "g++")
    if cxx:
        rc, out = run_quiet([cxx, "--version"])
        first = out.splitlines()[0] if out else ""
        with tempfile.TemporaryDirectory() as t:
            src = Path(t, "a.cpp")
            src.write_text("#include <span>\n#include <concepts>\nint main(){ std::span<int> s; return (int)s.size(); }\n")
            rc2, out2 = run_quiet([cxx, "-std=c++20", "-c", str(src), "-o", str(Path(t, "a.o"))])
        check("C++20 compiler", rc2 == 0, f"{cxx}: {first}" if rc2 == 0 else f"{cxx} cannot compile C++20: {out2[-200:]}",
              f"{apt} g++   (g++ 12 or newer; or export CXX=/path/to/g++)")
    else:
        check("C++20 compiler", False, "no c++ / g++ on PATH", f"{apt} g++")
    for name, header, pkg in (("doctest headers", "doctest/doctest.h", "doctest-dev"),
                              ("nlohmann-json headers", "nlohmann/json.hpp", "nlohmann-json3-dev")):
        found = next((str(p) for p in (Path("/usr/include", header), Path(deps_root or "/nonexistent", "usr/include", header),
                                       Path("/usr/local/include", header)) if p.is_file()), None)
        check(name, bool(found), found or "not found", f"{apt} {pkg}")
    ccache = which("ccache")
    check("ccache", bool(ccache), ccache or "not found (regrades recompile everything)", f"{apt} ccache", False)
    bwrap = which("bwrap")
    if bwrap:
        rc, out = run_quiet([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"])
        check("bubblewrap", rc == 0, bwrap if rc == 0 else f"{bwrap} present but cannot sandbox: {out[-200:]}",
              "allow unprivileged user namespaces: sysctl -w kernel.unprivileged_userns_clone=1", False)
    else:
        check("bubblewrap", False, "not found (grading runs without the sandbox, loudly)", f"{apt} bubblewrap", False)
    chromium = which("chromium", "chromium-browser", "google-chrome")
    check("chromium", bool(chromium), chromium or "not found (only needed to render the site to PDF/screenshots)",
          f"{apt} chromium", False)

    width = max(len(r[0]) for r in results)
    bad_required = 0
    for name, ok, detail, fix, required in results:
        tag = "ok" if ok else ("MISSING" if required else "missing (optional)")
        say(f"{'ok  ' if ok else '!!  '}{name:<{width}}  {tag if not ok else detail}")
        if not ok:
            say(f"    {'':<{width}}  {detail}")
            say(f"    {'':<{width}}  fix: {fix}")
            bad_required += required
    say("")
    if bad_required:
        say(f"doctor: {bad_required} required tool(s) missing; fix them, or run tools/setup.sh (installs what it can)")
        return 1
    say("doctor: everything the course needs is here")
    return 0


# --- running the judge -----------------------------------------------------------------------------------------------
def judge_path() -> Path:
    j = Path(os.environ.get("COURSE_JUDGE", BUILD / "judge"))
    if not j.is_file():
        die(f"no judge at {j}: run ./course build first", 1)
    return j


def phase_of(out_dir: Path, meta: dict) -> str:
    """What a running judge is doing, read from its work folder."""
    work = out_dir / "work"
    runs = sorted(work.glob("run-*"), key=lambda p: p.stat().st_mtime) if work.is_dir() else []
    if runs:
        return f"running checks ({runs[-1].name.split('-', 2)[-1]})"
    build = work / "build-default"
    if (build / f"lib{meta.get('library', '')}.so").exists():
        return "linked; starting the checks"
    if build.is_dir():
        sources = meta.get("sources", [])
        done = [s for s in sources if (build / (s + ".o")).exists()]
        if len(done) == len(sources) and sources:
            return f"linking lib{meta.get('library', '')}.so"
        current = next((s for s in sources if s not in done), "")
        return f"compiling {current} ({len(done) + 1}/{len(sources)})"
    return "starting"


def grade_with_progress(ex: str, submission: Path, out_dir: Path, quiet: bool = False) -> int:
    """Runs the judge, showing the build's progress on one line, then its table."""
    meta = load_exercise(ex)
    argv = [str(judge_path()), "--exercise", ex, "--submission", str(submission), "--out", str(out_dir)]
    if not sys.stdout.isatty():
        argv.append("--no-color")
    if out_dir.exists():
        shutil.rmtree(out_dir / "work", ignore_errors=True)
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()), daemon=True)
    reader.start()
    tty = sys.stdout.isatty()
    last = ""
    while proc.poll() is None:
        phase = phase_of(out_dir, meta)
        line = f"  {phase} ... {time.monotonic() - t0:4.0f} s"
        if tty:
            print("\r" + line.ljust(78), end="", flush=True)
        elif phase != last and not quiet:
            say(line)
        last = phase
        time.sleep(0.5)
    reader.join()
    if tty:
        print("\r" + " " * 78 + "\r", end="")
    sys.stdout.write(b"".join(chunks).decode(errors="replace"))
    say(f"graded in {time.monotonic() - t0:.1f} s")
    return proc.returncode


# --- watch ---------------------------------------------------------------------------------------------------------
def snapshot(folder: Path) -> dict:
    snap = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.name.startswith(".") and not p.name.endswith("~"):
            st = p.stat()
            snap[str(p)] = (st.st_mtime_ns, st.st_size)
    return snap


def cmd_watch(args) -> int:
    ex = resolve_exercise(args.exercise)
    folder = Path(args.dir) if args.dir else ROOT / "exercises" / ex
    out_dir = Path(args.out) if args.out else BUILD / "grades" / ex
    say(f"watching {folder} (every {args.interval:g} s); save a file to regrade, Ctrl-C to stop")
    status = 0
    graded = 0
    if not args.no_initial and not args.once_after_change:
        status = grade_with_progress(ex, folder, out_dir)
        graded += 1
    before = snapshot(folder)
    try:
        while args.max_iterations is None or graded < args.max_iterations:
            time.sleep(args.interval)
            now = snapshot(folder)
            if now == before:
                continue
            changed = sorted(set(now.items()) ^ set(before.items()))
            names = sorted({Path(k).name for k, _ in changed})
            time.sleep(min(0.3, args.interval))  # let the editor finish writing
            before = snapshot(folder)
            say(f"\n--- {time.strftime('%H:%M:%S')} changed: {', '.join(names)}; regrading {ex}")
            status = grade_with_progress(ex, folder, out_dir)
            graded += 1
            if status == 0:
                say(f"all checks of {ex} pass. `./course list` shows what is next")
            if args.once_after_change:
                break
    except KeyboardInterrupt:
        say("\nstopped watching")
    return status


# --- batch ---------------------------------------------------------------------------------------------------------
# A submission is data from someone who may be hostile: walk it without following links and read bounded amounts.
# The judge itself reads only regular files opened without following links (autograder/judge/submission_files.cpp);
# these keep the CLI from being led elsewhere before it even starts the judge.
def link_below(root: Path, path: Path) -> str | None:
    """The first component of `path` below `root` (root excluded: the instructor chose it) that is not a real folder
    (a symbolic link, a file), or None when every one is a real folder."""
    rel = path.relative_to(root)
    cur = root
    for part in rel.parts:
        cur = cur / part
        try:
            st = os.lstat(cur)
        except OSError:
            return str(cur.relative_to(root))
        if not stat.S_ISDIR(st.st_mode):
            return str(cur.relative_to(root))
    return None


def real_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def hash_tree(folder: Path, max_file_bytes: int = 4 << 20, max_entries: int = 20000) -> str:
    """A fingerprint of a folder for change detection: names, kinds and contents of regular files (bounded), link
    targets as text; never follows a link, never reads a special file."""
    h = hashlib.sha256()
    count = 0
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(top, d))]):
            count += 1
            if count > max_entries:
                h.update(b"...too many entries")
                return h.hexdigest()
            p = os.path.join(top, name)
            st = os.lstat(p)
            h.update(os.path.relpath(p, folder).encode() + b"\0")
            if stat.S_ISLNK(st.st_mode):
                h.update(b"link:" + os.readlink(p).encode(errors="replace"))
            elif stat.S_ISREG(st.st_mode) and st.st_size <= max_file_bytes:
                with open(p, "rb", opener=lambda f, fl: os.open(f, fl | os.O_NOFOLLOW | os.O_NONBLOCK)) as fh:
                    h.update(fh.read(max_file_bytes + 1))
            else:
                h.update(f"{stat.S_IFMT(st.st_mode)}:{st.st_size}:{st.st_mtime_ns}".encode())
            h.update(b"\0")
    return h.hexdigest()


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "-"


def submission_folder(student: Path, ex: str) -> Path | None:
    """A student folder is a copy of exercises/ (or a subset): student/EX/...; a folder holding the sources
    directly counts for an exercise when it is the only exercise graded. Links count as folders here: the grade
    refuses them (see link_below), with the reason in the student's report."""
    for cand in (student / ex, student / "exercises" / ex):
        if cand.is_dir() or cand.is_symlink():
            return cand
    return None


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
            line = (f"[{bar}] {self.done}/{self.total} ({self.cached} unchanged) "
                    f"{time.monotonic() - self.t0:5.0f} s  {label}")
            if self.tty:
                print("\r" + line[:110].ljust(110), end="" if self.done < self.total else "\n", file=sys.stderr, flush=True)
            else:
                print(line, file=sys.stderr, flush=True)


def grade_one(judge: Path, ex: str, sub: Path | None, out: Path, key: str, timeout: float,
              refused: str = "") -> tuple[dict, bool]:
    """Returns (rows-like summary, reused). Reuses the previous grade when the key is unchanged."""
    key_file = out / "grade.key"
    if key_file.is_file() and key_file.read_text() == key and (out / "rows.json").is_file():
        return json.loads((out / "rows.json").read_text()), True
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if sub is None or refused:  # nothing to grade: every check fails, and the table says why
        meta = load_exercise(ex)
        rows = {"exercise": ex, "score": 0.0, "max_score": float(sum(c.get("points", 0) for c in meta["checks"])),
                "passed": 0, "failed": len(meta["checks"]), "skipped": 0, "rows": [],
                **({"refused": refused} if refused else {"missing": True})}
        (out / "rows.json").write_text(json.dumps(rows, indent=2))
        why = f"not graded: {refused}" if refused else f"not submitted (no folder {ex}/ in the submission)"
        (out / "table.txt").write_text(f"{ex}: {why}\n")
        key_file.write_text(key)
        return rows, False
    seed = int(key[:8], 16) | 1
    argv = [str(judge), "--exercise", ex, "--submission", str(sub), "--out", str(out), "--no-color", "--seed", str(seed)]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        log, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired:
        log, rc = f"the judge did not finish in {timeout:g} s", -1
    (out / "judge.log").write_text(log)
    try:
        rows = json.loads((out / "rows.json").read_text())
    except (OSError, ValueError):
        meta = load_exercise(ex)
        rows = {"exercise": ex, "score": 0.0, "max_score": float(sum(c.get("points", 0) for c in meta["checks"])),
                "passed": 0, "failed": len(meta["checks"]), "skipped": 0, "error": f"judge exit {rc}", "rows": []}
        (out / "rows.json").write_text(json.dumps(rows, indent=2))
        (out / "table.txt").write_text(f"{ex}: the grader could not grade this submission (exit {rc}):\n{log[-2000:]}\n")
        return rows, False
    if rc in (0, 1):
        key_file.write_text(key)
    return rows, False


def merge_results(student: str, per_ex: dict[str, Path], rows: dict[str, dict]) -> dict:
    tests, score, max_score, seconds, lines = [], 0.0, 0.0, 0.0, []
    for ex, out in per_ex.items():
        try:
            res = json.loads((out / "results.json").read_text())
        except (OSError, ValueError):
            r = rows[ex]
            res = {"score": 0.0, "extra_data": {"max_score": r["max_score"]}, "tests": [], "execution_time": 0,
                   "output": f"{ex}: {'not submitted' if r.get('missing') else 'not graded: ' + r.get('refused', r.get('error', ''))}"}
            res["tests"].append({"name": f"{ex}: submitted and graded", "score": 0.0, "max_score": r["max_score"],
                                 "status": "failed", "output": res["output"], "visibility": "visible"})
        for t in res.get("tests", []):
            t = dict(t)
            t["name"] = f"{ex} / {t.get('name', '')}"
            t["number"] = f"{ex}.{t.get('number', len(tests) + 1)}"
            tests.append(t)
        score += float(res.get("score", 0))
        max_score += float(res.get("extra_data", {}).get(
            "max_score", sum(float(t.get("max_score", 0)) for t in res.get("tests", []))))
        seconds += float(res.get("execution_time", 0))
        lines.append(res.get("output", ex))
    return {"score": score, "execution_time": round(seconds), "output": "\n".join(lines),
            "visibility": "visible", "stdout_visibility": "hidden", "tests": tests, "extra_data": {"max_score": max_score}}


def feedback_report(student: str, per_ex: dict[str, Path], merged: dict) -> str:
    parts = [f"# Feedback for {student}", "", f"Total: {merged['score']:g} / {merged['extra_data']['max_score']:g}", ""]
    for ex, out in per_ex.items():
        table = (out / "table.txt").read_text() if (out / "table.txt").is_file() else f"{ex}: no report\n"
        parts += [f"## {ex}", "", "```", table.rstrip(), "```", ""]
    return "\n".join(parts)


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
            key = hashlib.sha256(fingerprint.encode() + judge_key.encode()
                                 + file_hash(ROOT / "exercises" / ex / "exercise.json").encode()).hexdigest()
            jobs.append((st.name, ex, sub, out / "students" / st.name / ex, key, refused))
    say(f"grading {len(students)} student(s) x {len(exercises)} exercise(s) with {args.jobs} job(s) into {out}")
    bar = Progress(len(jobs))
    rows: dict[tuple[str, str], dict] = {}
    with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        running = {pool.submit(grade_one, judge, ex, sub, o, key, args.timeout, refused): (st, ex)
                   for st, ex, sub, o, key, refused in jobs}
        for f in futures.as_completed(running):
            st, ex = running[f]
            r, cached = f.result()
            rows[(st, ex)] = r
            bar.tick(f"{st}/{ex} {r.get('score', 0):g}/{r.get('max_score', 0):g}", cached)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "gradebook.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["student"] + exercises + ["total", "max"])
        for st in students:
            per = [rows[(st.name, ex)] for ex in exercises]
            w.writerow([st.name] + [f"{r.get('score', 0):g}" for r in per]
                       + [f"{sum(r.get('score', 0) for r in per):g}", f"{sum(r.get('max_score', 0) for r in per):g}"])
    for st in students:
        per_ex = {ex: out / "students" / st.name / ex for ex in exercises}
        merged = merge_results(st.name, per_ex, {ex: rows[(st.name, ex)] for ex in exercises})
        (out / "students" / st.name / "results.json").write_text(json.dumps(merged, indent=2))
        (out / "students" / st.name / "feedback.md").write_text(feedback_report(st.name, per_ex, merged))
    say(f"gradebook: {out / 'gradebook.csv'}")
    say(f"per student: {out}/students/NAME/results.json (Gradescope format) and feedback.md")
    if args.summary:
        say((out / "gradebook.csv").read_text().rstrip())
    return 0


# --- gradescope-zip ----------------------------------------------------------------------------------------------------
GRADESCOPE_FILES = ["CMakeLists.txt", "course", "cmake", "autograder/CMakeLists.txt", "autograder/judge",
                    "autograder/checks", "autograder/metadata", "autograder/worker", "autograder/tests",
                    "autograder/portability", "requirements", "tools/setup.sh", "tools/course_cli.py", "tools/gradescope"]


def cmd_gradescope_zip(args) -> int:
    # Chapters 7 and 8 test the course's own operator (exercise 06's solution and planted-bug variants of it), which
    # CMake builds from solutions/: the zip never carries solutions, so it cannot grade those two.
    needs_operator = [e for e in exercise_ids() if load_exercise(e).get("tests_course_operator")]
    if args.exercises:
        exercises = [resolve_exercise(e) for e in args.exercises.split(",")]
        refused = [e for e in exercises if e in needs_operator]
        if refused:
            say(f"gradescope-zip: {', '.join(refused)} grade(s) a harness or a profile against the course's own "
                "operator, built from solutions/06_autograd, and the zip never carries solutions: grade "
                f"{'them' if len(refused) > 1 else 'it'} with ./course batch instead")
            return 2
    else:
        exercises = [e for e in exercise_ids() if e not in needs_operator]
    out = Path(args.out) if args.out else BUILD / "gradescope" / "autograder.zip"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".zip.tmp")
    count = 0
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        def add(path: Path, arc: str, mode: int | None = None):
            nonlocal count
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            st_mode = path.stat().st_mode if mode is None else mode
            info.external_attr = (0o100000 | (st_mode & 0o777)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, path.read_bytes())
            count += 1
        for rel in GRADESCOPE_FILES:
            p = ROOT / rel
            if not p.exists():
                continue
            files = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file() and "__pycache__" not in q.parts
                                                  and "planted" not in q.parts)
            for f in files:
                add(f, str(f.relative_to(ROOT)))
        for ex in exercises:  # the exercises' metadata and stubs; never the solutions
            for f in sorted((ROOT / "exercises" / ex).iterdir()):
                if f.is_file():
                    add(f, f"exercises/{ex}/{f.name}")
        add(ROOT / "tools" / "gradescope" / "setup.sh", "setup.sh", 0o755)
        add(ROOT / "tools" / "gradescope" / "run_autograder", "run_autograder", 0o755)
        cfg = json.dumps({"exercises": exercises}, indent=2).encode()
        info = zipfile.ZipInfo("gradescope.json", date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        z.writestr(info, cfg)
        count += 1
    tmp.replace(out)
    say(f"wrote {out} ({count} files, exercises: {', '.join(exercises)}); upload it as the Gradescope autograder")
    return 0


def find_sources(sub: Path, meta: dict) -> Path | None:
    """The folder of an upload that holds an exercise's sources: sub/EX, sub/exercises/EX, sub itself, or the
    shallowest folder below that has them all (uploads are often zipped with a parent folder). Folders are found
    without following links; a source that is itself a link is found, and the judge refuses it with its name."""
    ex, sources = meta["id"], meta["sources"]

    def holds_all(folder: Path) -> bool:
        if folder != sub and link_below(sub, folder.parent) is not None:
            return False  # reached through a link: never followed
        # a folder that is itself a link is handed to the judge, which refuses it by name
        return os.path.islink(folder) or all(os.path.lexists(folder / s) for s in sources)

    for cand in (sub / ex, sub / "exercises" / ex, sub):
        if holds_all(cand):
            return cand
    found = []
    for top, dirs, files in os.walk(sub, followlinks=False):
        if sources[0] in files or sources[0] in dirs:
            if holds_all(Path(top)):
                found.append(Path(top))
    found.sort(key=lambda p: (len(p.parts), str(p)))
    return found[0] if found else None


def cmd_gradescope_run(args) -> int:
    gs = Path(os.environ.get("GRADESCOPE_ROOT", "/autograder"))
    sub, results = gs / "submission", gs / "results"
    results.mkdir(parents=True, exist_ok=True)
    try:
        exercises = json.loads((ROOT / "gradescope.json").read_text())["exercises"]
    except (OSError, ValueError, KeyError):
        exercises = exercise_ids()
    judge = judge_path()
    per_ex, rows = {}, {}
    for ex in exercises:
        meta = load_exercise(ex)
        meta.setdefault("id", ex)
        folder = find_sources(sub, meta)
        out = results / "work" / ex
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        per_ex[ex] = out
        if folder is None:
            rows[ex] = {"max_score": float(sum(c.get("points", 0) for c in meta["checks"])), "missing": True}
            say(f"{ex}: not submitted (none of the uploaded folders holds {', '.join(meta['sources'])})")
            continue
        argv = [str(judge), "--exercise", ex, "--submission", str(folder), "--out", str(out), "--no-color",
                "--course-root", str(ROOT), "--toolchain", str(BUILD / "toolchain.json")]
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout)
            sys.stdout.write(r.stdout[-20000:])
            rc = r.returncode
        except subprocess.TimeoutExpired:
            rc = -1
        rows[ex] = {"max_score": float(sum(c.get("points", 0) for c in meta["checks"])), "error": f"judge exit {rc}"}
    merged = merge_results("submission", per_ex, rows)
    if len(exercises) == 1:  # one assignment, one exercise: keep the judge's own test names
        for t in merged["tests"]:
            t["name"] = t["name"].split(" / ", 1)[-1]
            t["number"] = t["number"].split(".", 1)[-1]
    tmp = results / "results.json.tmp"
    tmp.write_text(json.dumps(merged, indent=2))
    tmp.replace(results / "results.json")
    say(f"score {merged['score']:g}/{merged['extra_data']['max_score']:g}; wrote {results / 'results.json'}")
    return 0


# --- bench ---------------------------------------------------------------------------------------------------------
def timed(argv: list[str], env: dict | None = None, cwd: str | None = None) -> float:
    t0 = time.monotonic()
    r = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    dt = time.monotonic() - t0
    if r.returncode not in (0, 1):
        die(f"{' '.join(argv[:3])} ... failed ({r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}", 1)
    return dt


def cmd_bench(args) -> int:
    ex = resolve_exercise(args.exercise)
    meta = load_exercise(ex)
    judge = judge_path()
    tc = json.loads((BUILD / "toolchain.json").read_text())
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
        warm_argv = [str(judge), "--exercise", ex, "--submission", str(sub), "--out", str(work / "warm"), "--no-color",
                     "--toolchain", str(tcf)]
        timed(warm_argv, env=warm_env)  # the student's previous grade: fills the cache
        flags = ["-std=c++20", "-O2", "-fPIC"] + ["-D" + d for d in tc["definitions"]]
        for inc in tc["include_dirs"]:
            flags += ["-isystem", inc]
        pch = tc.get("pch_include", "")
        pch = pch if pch and Path(pch + ".gch").is_file() else ""
        for i in range(runs):
            # cold: an empty ccache, so nothing of this source is cached
            cold_env = dict(base_env, CCACHE_DIR=str(work / f"ccache-cold-{i}"))
            cold.append(timed([str(judge), "--exercise", ex, "--submission", str(sub), "--out", str(work / f"cold{i}"),
                               "--no-color", "--toolchain", str(tcf)], env=cold_env))
            with open(sub / edit, "a") as fh:
                # a code change (a comment would leave the preprocessed text, so ccache's key, unchanged)
                fh.write(f"namespace {{ [[maybe_unused]] int course_bench_edit_{i} = {i}; }}\n")
            warm.append(timed(warm_argv, env=warm_env))
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


# --- main ----------------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="./course", description="course commands (see ./course help)")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("list", help="every exercise with your progress")
    s.set_defaults(fn=cmd_list)
    s = sub.add_parser("hint", help="the next hint of an exercise (one more each call)")
    s.add_argument("exercise")
    s.add_argument("--all", action="store_true", help="show every hint")
    s.add_argument("--reset", action="store_true", help="hide the hints again")
    s.set_defaults(fn=cmd_hint)
    s = sub.add_parser("watch", help="regrade an exercise whenever one of its files is saved")
    s.add_argument("exercise")
    s.add_argument("--dir", help="folder to watch and grade (default exercises/EX)")
    s.add_argument("--out", help="where the grade goes (default build/grades/EX, what `list` reads)")
    s.add_argument("--interval", type=float, default=1.0, help="seconds between polls (default 1)")
    s.add_argument("--no-initial", action="store_true", help="do not grade once at start")
    s.add_argument("--once-after-change", action="store_true", help="grade once after the first change, then exit")
    s.add_argument("--max-iterations", type=int, help="stop after this many grades")
    s.set_defaults(fn=cmd_watch)
    s = sub.add_parser("reset", help="restore an exercise's original stub (your version is backed up)")
    s.add_argument("exercise")
    s.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    s.set_defaults(fn=cmd_reset)
    s = sub.add_parser("doctor", help="check the toolchain; prints the fix for anything missing")
    s.set_defaults(fn=cmd_doctor)
    s = sub.add_parser("snapshot-stubs", help="keep a pristine copy of every stub (setup runs it)")
    s.set_defaults(fn=lambda a: (snapshot_pristine(), 0)[1])
    s = sub.add_parser("batch", help="grade a folder of submissions (one folder per student)")
    s.add_argument("submissions")
    s.add_argument("--jobs", "-j", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    s.add_argument("--out", help="output folder (default SUBMISSIONS-grades beside it)")
    s.add_argument("--exercises", help="comma-separated exercise ids (default: all)")
    s.add_argument("--timeout", type=float, default=1200, help="seconds one grade may take (default 1200)")
    s.add_argument("--summary", action="store_true", help="print the gradebook at the end")
    s.set_defaults(fn=cmd_batch)
    s = sub.add_parser("gradescope-zip", help="build the Gradescope autograder zip")
    s.add_argument("--out", help="zip to write (default build/gradescope/autograder.zip)")
    s.add_argument("--exercises", help="comma-separated exercise ids graded by this assignment (default: all)")
    s.set_defaults(fn=cmd_gradescope_zip)
    s = sub.add_parser("gradescope-run", help="(run_autograder) grade $GRADESCOPE_ROOT/submission")
    s.add_argument("--timeout", type=float, default=1200)
    s.set_defaults(fn=cmd_gradescope_run)
    s = sub.add_parser("bench", help="time a cold grade, a warm regrade after an edit, and a bare compile")
    s.add_argument("exercise", nargs="?", default="02_schema")
    s.add_argument("--runs", type=int, default=3)
    s.add_argument("--check", action="store_true", help="exit 1 when the target is not met")
    s.set_defaults(fn=cmd_bench)
    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
