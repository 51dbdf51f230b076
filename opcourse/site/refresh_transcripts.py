"""Maintainer command: re-runs every grader output a chapter shows and writes the judge's real output into the
chapter, so a changed check is shown as it now prints:
  * `$ ./course grade EX` blocks: the untouched stub, graded here (the whole table and what to fix);
  * blocks after `<!-- planted-output: EX/CASE CHECK [CHECK ...] -->`: the "What to fix" sections of those checks
    when the planted case EX/CASE (autograder/planted/) is graded.
site/transcripts (test_transcripts.py) then checks the stub transcripts against exercise.json and the planted cases.

usage: python -m opcourse.site.refresh_transcripts [BUILD_DIR] [CHAPTER.md ...]   (run after ./course build)"""

import os
import re
import subprocess
import sys
import tempfile
from opcourse import planted as planted_cases

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GRADE = re.compile(r"^\$ \./course grade (\S+)\s*$")
PLANTED = re.compile(r"^<!-- planted-output: (\S+)/(\S+) ([^>]+) -->\s*$")


def transcript(judge, exercise, seed=1, submission=None):
    with tempfile.TemporaryDirectory() as out:
        r = subprocess.run(
            [
                judge,
                "--exercise",
                exercise,
                "--submission",
                submission or os.path.join(ROOT, "exercises", exercise),
                "--out",
                out,
                "--no-color",
                "--seed",
                str(seed),
            ],
            capture_output=True,
            text=True,
        )
    # the machine-specific lines (the sandbox's protections, the seed and the results folder) are left out
    # ... and the clone's own path, which names the maintainer's machine, not the course
    lines = [
        l.replace(ROOT + os.sep, "")
        for l in r.stdout.strip("\n").splitlines()
        if not l.startswith("sandbox:") and not l.startswith("(seed ")
    ]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def planted_sections(judge, exercise, case, checks):
    """The "What to fix" sections of `checks` when the planted case is graded."""
    with tempfile.TemporaryDirectory() as work:
        sub = planted_cases.materialize(ROOT, os.path.join(ROOT, "autograder", "planted", exercise, case), work)
        lines = transcript(judge, exercise, submission=str(sub))
    sections = []
    for check in checks:
        start = next((i for i, l in enumerate(lines) if l.startswith(f"FAIL {check}: ")), None)
        if start is None:
            raise SystemExit(f"{exercise}/{case} does not fail {check}: the chapter's block cannot show it")
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("FAIL ")), len(lines))
        section = lines[start:end]
        while section and not section[-1].strip():
            section.pop()
        sections += ([""] if sections else []) + section
    return sections


def refresh(path, judge):
    lines = open(path).read().split("\n")
    out, i, changed, planted = [], 0, 0, None
    while i < len(lines):
        out.append(lines[i])
        m, p = GRADE.match(lines[i]), PLANTED.match(lines[i])
        if p:
            planted = p.groups()
        elif planted and lines[i].startswith("```text"):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            out.extend(planted_sections(judge, planted[0], planted[1], planted[2].split()))
            changed += 1
            planted = None
            i = end
            continue
        if m:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            out.extend(transcript(judge, m.group(1)))
            changed += 1
            i = end
            continue
        i += 1
    open(path, "w").write("\n".join(out))
    return changed


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    chapters = sys.argv[2:] or sorted(
        os.path.join(ROOT, "chapters", f) for f in os.listdir(os.path.join(ROOT, "chapters")) if f.endswith(".md")
    )
    for path in chapters:
        n = refresh(path, os.path.join(build, "judge"))
        if n:
            print(f"{os.path.relpath(path, ROOT)}: {n} transcript(s) refreshed")


if __name__ == "__main__":
    main()
