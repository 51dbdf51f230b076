"""The student's commands: list, hint, reset, watch. The pristine copies of the stubs (what `list` compares with and
`reset` restores) and the state (hints seen) live under .course/."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .common import GRADES, ROOT, STATE_DIR, die, say
from .exercises import exercise_ids, load_exercise, resolve_exercise, stub_files
from .grade import not_done
from .judge import run_judge
from ..reports import ReportError, read_rows


# --- pristine copies of the stubs ------------------------------------------------------------------------------------
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


def cmd_snapshot_stubs(args) -> int:
    snapshot_pristine()
    # which exercises have their copies: ./course skips this command while the folders of exercises/ are these
    stamp = STATE_DIR / "pristine" / ".exercises"
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text("\n".join(sorted(p.name for p in (ROOT / "exercises").iterdir())) + "\n")
    return 0


# --- state -----------------------------------------------------------------------------------------------------------
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


# --- list ------------------------------------------------------------------------------------------------------------
def progress(ex: str) -> tuple[str, str]:
    """(status, detail): done / failing / not done (every check that ran passed, some points could not be graded
    here) / not started / not graded."""
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
    rows_file = GRADES / ex / "rows.json"
    try:
        report = read_rows(rows_file)
    except ReportError as e:  # a grade this command cannot trust: say why, and how to get a new one
        return "not graded", f"{e}: ./course grade {ex}"
    except OSError:
        return "not graded", f"edited, not graded yet: ./course grade {ex}"
    newest = max(((folder / n).stat().st_mtime for n in names if (folder / n).is_file()), default=0)
    stale = " (edited since)" if newest > rows_file.stat().st_mtime else ""
    score = f"{report.score:g}/{report.max_score:g}"
    if report.failed == 0:
        points, _ = report.not_graded()
        if points > 0:
            return "not done", f"{score}, {points:g} more points not graded here (no GPU or toolkit){stale}"
        return "done", f"{score}{stale}"
    failing = [r.id for r in report.failing()]
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
        mark = {"done": "[x]", "failing": "[!]", "not graded": "[~]", "not done": "[~]"}.get(status, "[ ]")
        title = load_exercise(ex).get("title", "")
        say(f"{mark} {ex:<{width}}  {status:<11}  {title}: {detail}")
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    say(f"\n{counts.get('done', 0)}/{len(ids)} done ({summary})")
    nxt = next((ex for ex in ids if progress(ex)[0] != "done"), None)
    if nxt:
        say(f"next: ./course grade {nxt}   (stuck? ./course hint {nxt})")
    return 0


# --- hint ------------------------------------------------------------------------------------------------------------
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


# --- reset -----------------------------------------------------------------------------------------------------------
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


# --- watch -----------------------------------------------------------------------------------------------------------
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
    out_dir = Path(args.out) if args.out else GRADES / ex
    say(f"watching {folder} (every {args.interval:g} s); save a file to regrade, Ctrl-C to stop")
    status = 0
    graded = 0
    if not args.no_initial and not args.once_after_change:
        status = run_judge(ex, folder, out_dir, show="progress", lead_with_build_error=True).returncode
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
            status = run_judge(ex, folder, out_dir, show="progress", lead_with_build_error=True).returncode
            graded += 1
            if status == 0:
                say(not_done(out_dir) or f"all checks of {ex} pass. `./course list` shows what is next")
            if args.once_after_change:
                break
    except KeyboardInterrupt:
        say("\nstopped watching")
    return status
