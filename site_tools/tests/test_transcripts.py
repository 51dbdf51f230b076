"""The grader transcripts the chapters show (`$ ./course grade EX`, the untouched stub on a machine without a GPU) still
agree with the course: the rows are the exercise's checks, in order, with their points; a row fails exactly when the
stub's planted case says it fails, and is SKIPPED exactly when it needs a GPU; the score line adds up, and so does the
line of the points not graded (the SKIPPED rows' points, which never vanish from a total); and every hint
printed under "What to fix" is the one in exercise.json. A transcript pasted once and left behind when a check is
renamed, re-weighted or re-hinted would teach the wrong thing; this test makes that a failure.

usage: test_transcripts.py"""

import json
import os
import re
import sys

from sitelib import COURSE_ROOT, chapter_files

from opcourse import metadata as course_metadata

GRADE = re.compile(r"^\$ \./course grade (\S+)\s*$")
ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(PASS|FAIL|SKIPPED)\s+(\S+)\s")
SCORE = re.compile(r"^score ([\d.]+)/([\d.]+): (\d+) passed, (\d+) failed, (\d+) skipped")
NOT_GRADED = re.compile(r"^NOT GRADED HERE: ")
FIX = re.compile(r"^FAIL (\S+): ")
HINT = re.compile(r"^  hint:\s+(.*)$")


def transcripts(text):
    """[(line number, exercise, [lines of the transcript up to the end of its code block])]"""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = GRADE.match(line)
        if m:
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
            out.append((i + 1, m.group(1), lines[i + 1 : end]))
    return out


HINTS_COMPARED = [0]


def fmt(x):
    return f"{x:g}"


def check(chapter, lineno, exercise, lines, problems):
    where = f"{os.path.relpath(chapter, COURSE_ROOT)}:{lineno} ({exercise})"
    meta_path = os.path.join(COURSE_ROOT, "exercises", exercise, "exercise.json")
    if not os.path.isfile(meta_path):
        problems.append(f"{where}: no exercise {exercise}")
        return
    meta = course_metadata.load(exercise, COURSE_ROOT)
    with open(os.path.join(COURSE_ROOT, "autograder", "planted", exercise, "stub", "expected.json")) as f:
        stub_fails = set(json.load(f).get("fail", []))
    checks = {c["id"]: c for c in meta["checks"]}

    rows = [ROW.match(l).groups() for l in lines if ROW.match(l)]
    ids = [r[1] for r in rows]
    if ids != [c["id"] for c in meta["checks"]]:
        problems.append(f"{where}: the rows {ids} are not exercise.json's checks {list(checks)}")
        return
    earned = total = skipped = 0.0
    counts = {"PASS": 0, "FAIL": 0, "SKIPPED": 0}
    for _, cid, result, points in rows:
        c = checks[cid]
        pts = c.get("points", 1)
        wanted = "SKIPPED" if c.get("cuda") else "FAIL" if cid in stub_fails else "PASS"
        if result != wanted:
            problems.append(
                f"{where}: row {cid} shows {result}; without a GPU the stub gets {wanted} "
                f"(autograder/planted/{exercise}/stub/expected.json, exercise.json's cuda flag)"
            )
        counts[result] += 1
        if result == "SKIPPED":
            if points != "-":
                problems.append(f"{where}: skipped row {cid} shows points {points!r}, not '-'")
            skipped += pts
            continue
        total += pts
        got = pts if result == "PASS" else 0
        earned += got
        if points != f"{fmt(got)}/{fmt(pts)}":
            problems.append(f"{where}: row {cid} shows {points}; exercise.json gives it {fmt(got)}/{fmt(pts)}")

    scores = [SCORE.match(l) for l in lines if SCORE.match(l)]
    if len(scores) != 1:
        problems.append(f"{where}: {len(scores)} score lines (expected one)")
    else:
        s = scores[0].groups()
        want = (fmt(earned), fmt(total), str(counts["PASS"]), str(counts["FAIL"]), str(counts["SKIPPED"]))
        if tuple(s) != want:
            problems.append(f"{where}: the score line says {s}, the rows add up to {want}")

    shown = [l for l in lines if NOT_GRADED.match(l)]
    want = (
        [
            f"NOT GRADED HERE: {fmt(total)} of {fmt(total + skipped)} points graded: {fmt(skipped)} not graded "
            "(needs a CUDA device)"
        ]
        if skipped
        else []
    )
    if shown != want:
        problems.append(f"{where}: the line of the points not graded is {shown}; the rows give {want}")

    current = None
    for l in lines:
        m = FIX.match(l)
        if m:
            current = m.group(1)
            continue
        h = HINT.match(l)
        if h and current in checks:
            HINTS_COMPARED[0] += 1
            if h.group(1).strip() != checks[current]["hint"].strip():
                problems.append(
                    f"{where}: the hint under FAIL {current} is not exercise.json's:\n"
                    f"    shown:   {h.group(1).strip()}\n    current: {checks[current]['hint'].strip()}"
                )
            current = None


def shown_checks():
    """{check id: ({titles}, {hints})} over every exercise: what a FAIL section may say of that check."""
    out = {}
    for ex in sorted(os.listdir(os.path.join(COURSE_ROOT, "exercises"))):
        if not os.path.isfile(os.path.join(COURSE_ROOT, "exercises", ex, "exercise.json")):
            continue
        for c in course_metadata.load(ex, COURSE_ROOT)["checks"]:
            titles, hints = out.setdefault(c["id"], (set(), set()))
            titles.add(c["title"].strip())
            hints.add(c["hint"].strip())
    return out


FAIL_SECTIONS = [0]


def check_fail_sections(chapter, text, known, problems):
    """Every "FAIL id: title" a grader-output block shows, transcripts and excerpts alike, names a check by its
    current title, and the hint under it is that check's: an excerpt pasted once goes stale as silently as a table."""
    lines = text.splitlines()
    inside, current = False, None
    for i, line in enumerate(lines, 1):
        if line.startswith('<div class="grader-output"'):
            inside = True
        elif line.startswith("</div>"):
            inside, current = False, None
        if not inside:
            continue
        where = f"{os.path.relpath(chapter, COURSE_ROOT)}:{i}"
        m = re.match(r"^FAIL (\S+): (.*)$", line)
        if m:
            FAIL_SECTIONS[0] += 1
            current = m.group(1)
            if current not in known:
                problems.append(f"{where}: FAIL {current}: no exercise has that check")
                current = None
            elif m.group(2).strip() not in known[current][0]:
                problems.append(
                    f"{where}: FAIL {current} shows the title {m.group(2).strip()!r}; the check's title is "
                    f"{sorted(known[current][0])[0]!r} (opcourse/site/refresh_transcripts.py rewrites a block "
                    "under a planted-output marker)"
                )
            continue
        h = HINT.match(line)
        if h and current:
            if h.group(1).strip() not in known[current][1]:
                problems.append(f"{where}: the hint under FAIL {current} is not the check's current hint")
            current = None


def main():
    problems = []
    seen = []
    known = shown_checks()
    for chapter in chapter_files():
        with open(chapter) as f:
            text = f.read()
        for lineno, exercise, lines in transcripts(text):
            seen.append(exercise)
            check(chapter, lineno, exercise, lines, problems)
        check_fail_sections(chapter, text, known, problems)
    exercises = sorted(
        d
        for d in os.listdir(os.path.join(COURSE_ROOT, "exercises"))
        if os.path.isfile(os.path.join(COURSE_ROOT, "exercises", d, "exercise.json"))
    )
    missing = sorted(set(exercises) - set(seen))
    if missing:
        problems.append(f"no chapter shows what the stub of {missing} prints (`$ ./course grade EX`)")
    for p in problems:
        print("FAIL:", p)
    print(
        f"site/transcripts: {len(seen)} transcripts checked against exercise.json and the stubs' planted cases, "
        f"{HINTS_COMPARED[0]} hints compared, {FAIL_SECTIONS[0]} FAIL sections against their checks, "
        f"{len(problems)} problem(s)"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
