"""The course's own `dev check` (rustlings' model), the static half: every chapter of COURSE.md has its chapter page
in the site's navigation, an exercise with a stub and metadata (its schema, its checks compiled into the judge, its
given files equal to their source: integrity_metadata.py), a reference solution with the same files, and the two
planted cases that run both in the test suite: the untouched stub (must fail, naming a TODO) and the reference (must
pass every row). The planted cases themselves prove the dynamic half.

usage: test_course_integrity.py COURSE_ROOT [JUDGE]   (with the built judge, its test cases are compared too)"""
import json
import re
import sys
from pathlib import Path

import integrity_metadata
from integrity_metadata import course_metadata

ROOT = Path(sys.argv[1]).resolve()
JUDGE = sys.argv[2] if len(sys.argv) > 2 else None
problems = integrity_metadata.problems(ROOT, JUDGE)
CHAPTERS = 9  # COURSE.md's chapters 1 to 9

nav = (ROOT / "mkdocs.yml").read_text()
exercises = sorted(p.parent.name for p in (ROOT / "exercises").glob("*/exercise.json"))
solutions = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
if exercises != solutions:
    problems.append(f"exercises/ and solutions/ differ: {sorted(set(exercises) ^ set(solutions))}")
numbers = [int(e.split("_")[0]) for e in exercises]
if numbers != list(range(1, CHAPTERS + 1)):
    problems.append(f"expected exercises 01 to {CHAPTERS:02d}, one per chapter; found {exercises}")

for ex in exercises:
    try:
        meta = course_metadata.load(ex, ROOT)
    except course_metadata.MetadataError:
        continue  # reported by integrity_metadata
    where = f"exercises/{ex}/exercise.json"
    if meta.get("id") != ex:
        problems.append(f"{where}: id {meta.get('id')!r} is not the folder's name")
    chapter = meta.get("chapter", "")
    if not (ROOT / "chapters" / chapter).is_file():
        problems.append(f"{where}: chapter {chapter!r} is not in chapters/")
    elif not re.search(rf":\s*{re.escape(chapter)}\s*$", nav, re.M):
        problems.append(f"chapters/{chapter} is not in mkdocs.yml's nav")
    if not meta.get("hints"):
        problems.append(f"{where}: no hints")
    stub_text = ""
    for src in meta.get("sources", []):
        for kind in ("exercises", "solutions"):
            if not (ROOT / kind / ex / src).is_file():
                problems.append(f"{kind}/{ex}/{src} is missing (exercise.json lists it)")
        if (ROOT / "exercises" / ex / src).is_file():
            stub_text += (ROOT / "exercises" / ex / src).read_text()
    if "TODO(student)" not in stub_text:
        problems.append(f"exercises/{ex}: no TODO(student) marker in the stub's sources")
    for case, submission, must_fail in (("stub", f"exercises/{ex}", True), ("reference", f"solutions/{ex}", False)):
        path = ROOT / "autograder" / "planted" / ex / case / "expected.json"
        if not path.is_file():
            problems.append(f"autograder/planted/{ex}/{case} is missing: the suite would not run the {case}")
            continue
        exp = json.loads(path.read_text())
        if exp.get("submission") != submission or "patch" in exp:
            problems.append(f"autograder/planted/{ex}/{case} does not grade {submission} as it is")
        if must_fail and (not exp.get("fail") or not any("TODO" in t for t in exp.get("output_contains", []))):
            problems.append(f"autograder/planted/{ex}/stub must fail some rows and check that the output names a TODO")
        if not must_fail and exp.get("fail"):
            problems.append(f"autograder/planted/{ex}/reference must pass every row, not fail {exp['fail']}")

for p in problems:
    print("FAIL:", p)
print(f"course/integrity: {len(exercises)} exercises, {len(solutions)} solutions, "
      f"{len(course_metadata.catalog(ROOT))} checks declared, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
