"""Walking a student's upload (batch, gradescope-run).

A submission is data from someone who may be hostile: walk it without following links and read bounded amounts.
The judge itself reads only regular files opened without following links (autograder/judge/submission_files.cpp);
these keep the CLI from being led elsewhere before it even starts the judge."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


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
