"""Shared helpers of the site's tests: where the course is, how to build the site, what the chapters include (imported
by the tests beside it: a script's own folder is where Python looks first)."""

import os
import re
import shutil
import subprocess
import sys
from opcourse.site.build_site import SITE_INPUTS  # what a copy of the course needs to build its site

COURSE_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def copy_course(tmp):
    """A copy of what the site's build reads, to plant a breakage in."""
    for name in SITE_INPUTS:
        src = os.path.join(COURSE_ROOT, name)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, os.path.join(tmp, name))


# --8<-- "path:region" (a whole file when there is no :region)
SNIPPET_LINE = re.compile(r'^\s*-{1,}8<-{1,}\s+"([^"]+)"\s*$')
REGION_MARK = re.compile(r"--8<--\s+\[(start|end):([A-Za-z0-9_.-]+)\]")


def plant(tmp, path, old, new):
    """Replaces the first `old` of the copy's file `path` by `new` (a planted breakage); returns the file as it was."""
    full = os.path.join(tmp, path)
    with open(full, encoding="utf-8") as f:
        text = f.read()
    assert old in text, f"the planted case expects {old!r} in {path}: the page has changed, update PLANTED"
    with open(full, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new, 1))
    return text


def build_site(project_dir, site_dir):
    """Runs the site command of the course at project_dir (its opcourse/site/build_site.py: `mkdocs build --strict`,
    then KaTeX); returns (exit status, combined output). Run with -m from project_dir, which Python then searches
    first: a copy's own package builds the copy."""
    proc = subprocess.run(
        [sys.executable, "-m", "opcourse.site.build_site", "--site-dir", site_dir],
        cwd=project_dir,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return proc.returncode, proc.stdout + proc.stderr


def chapter_files(root=COURSE_ROOT):
    chapters = os.path.join(root, "chapters")
    out = []
    for dirpath, _, names in os.walk(chapters):
        out += [os.path.join(dirpath, n) for n in names if n.endswith(".md")]
    return sorted(out)


def snippet_references(root=COURSE_ROOT):
    """[(chapter, line number, path, region or None)] for every snippet line of every chapter."""
    refs = []
    for chapter in chapter_files(root):
        with open(chapter) as f:
            for no, line in enumerate(f, 1):
                m = SNIPPET_LINE.match(line)
                if m:
                    target = m.group(1)
                    path, _, region = target.partition(":")
                    refs.append((os.path.relpath(chapter, root), no, path, region or None))
    return refs


def marked_regions(root=COURSE_ROOT, folders=("exercises", "solutions", "site_tools/examples")):
    """{(relative path, region)} for every region marked in the exercise, solution and example sources."""
    regions = set()
    for folder in folders:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for n in names:
                if not n.endswith((".cpp", ".cu", ".h", ".hpp", ".cuh", ".py")):
                    continue
                p = os.path.join(dirpath, n)
                with open(p, errors="replace") as f:
                    for m in REGION_MARK.finditer(f.read()):
                        regions.add((os.path.relpath(p, root), m.group(2)))
    return regions


def regions_in_file(path):
    """{region: (has start, has end)} of one file."""
    found = {}
    with open(path, errors="replace") as f:
        for m in REGION_MARK.finditer(f.read()):
            s, e = found.get(m.group(2), (False, False))
            found[m.group(2)] = (s or m.group(1) == "start", e or m.group(1) == "end")
    return found
