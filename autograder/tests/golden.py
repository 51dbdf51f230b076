"""Golden output: the part of the judge's table a planted case pins word for word, compared with a committed file.

A planted case with "golden": "golden.txt" in its expected.json (run_planted.py) has the build row of its table and
the build's block under "What to fix" compared with autograder/planted/EXERCISE/CASE/golden.txt. Only that part: the
other rows differ between a machine with a GPU and one without. What varies from run to run is normalised first: the
paths of the machine (the course, the case's work folder, the Python packages) become @NAME@, a duration in seconds
becomes @SECONDS@ s, and an offset the linker prints into a section ((.text+0x137d)) becomes (.text+0x@OFFSET@).

A change that is meant: COURSE_UPDATE_GOLDEN=1 ctest -R planted/EX/CASE rewrites the file; review it with git diff.
"""

from __future__ import annotations

import difflib
import os
import re

ROW_HEADER = re.compile(r"^\s+#\s+check\s+result\s+points\s+detail\s*$")
BUILD_ROW = re.compile(r"^\s+\d+\s+build\s+(PASS|FAIL|SKIPPED)\s")
SECONDS = re.compile(r"\b\d+(\.\d+)? s\b")
SECTION_OFFSET = re.compile(r"\((\.[\w.]+)\+0x[0-9a-f]+\)")


def build_view(console: str) -> str:
    """The rows' header, the build row and the build's block under "What to fix" (up to the blank line after it)."""
    lines = console.splitlines()
    view = [l for l in lines if ROW_HEADER.match(l)][:1] + [l for l in lines if BUILD_ROW.match(l)][:1]
    if "FAIL build: " in "\n".join(lines):
        start = next(i for i, l in enumerate(lines) if l.startswith("FAIL build: "))
        end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
        view += [""] + lines[start:end]
    return "\n".join(view) + "\n"


def normalise(text: str, paths: dict[str, str]) -> str:
    """paths: {absolute path: its token}; longer paths are replaced first (a folder inside another)."""
    for path, token in sorted(paths.items(), key=lambda kv: -len(kv[0])):
        if path:
            text = text.replace(path.rstrip("/"), token)
    text = SECONDS.sub("@SECONDS@ s", text)
    return SECTION_OFFSET.sub(r"(\1+0x@OFFSET@)", text)


def compare(view: str, golden_file: str, update: bool | None = None) -> list[str]:
    """Problems (empty: the view is the golden file's text). With update (default: $COURSE_UPDATE_GOLDEN), the file
    is rewritten instead."""
    if update is None:
        update = os.environ.get("COURSE_UPDATE_GOLDEN") == "1"
    if update:
        with open(golden_file, "w") as f:
            f.write(view)
        print(f"golden output written to {golden_file}: review it with git diff")
        return []
    try:
        with open(golden_file) as f:
            golden = f.read()
    except OSError as e:
        return [f"no golden output to compare with ({e}); COURSE_UPDATE_GOLDEN=1 writes it"]
    if golden == view:
        return []
    diff = "".join(difflib.unified_diff(golden.splitlines(True), view.splitlines(True), golden_file, "this run"))
    print(diff)
    return [
        f'the build row and its "What to fix" differ from {os.path.basename(golden_file)} (diff above); if the '
        "change is meant, COURSE_UPDATE_GOLDEN=1 rewrites it"
    ]
