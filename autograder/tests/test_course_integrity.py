"""The course's own `dev check` (rustlings' model), the static half: every chapter of COURSE.md has its chapter page
in the site's navigation, an exercise with a stub and metadata (its schema, its checks compiled into the judge, its
given files equal to their source: integrity_metadata.py), a reference solution with the same files, and the two
planted cases that run both in the test suite: the untouched stub (must fail, naming a TODO) and the reference (must
pass every row). The planted cases themselves prove the dynamic half; here every planted patch is dry-run (a
reference edit that breaks one fails in seconds, not after the suite), no planted file is a near copy of its
reference's file (a one-bug case is a patch, not a copy that drifts) and autograder/planted/ stays small.

usage: test_course_integrity.py COURSE_ROOT [JUDGE]   (with the built judge, its test cases are compared too)"""

import difflib
import json
import os
import re
import sys
from pathlib import Path

import integrity_metadata  # beside this script
from integrity_metadata import course_metadata
from opcourse import planted as planted_cases  # the module that prepares the cases for run_planted.py and CMake

ROOT = Path(sys.argv[1]).resolve()
JUDGE = sys.argv[2] if len(sys.argv) > 2 else None
problems = integrity_metadata.problems(ROOT, JUDGE)
nav = (ROOT / "mkdocs.yml").read_text()
# the chapters of the site's navigation (": NN_topic.md"), one exercise each
CHAPTERS = sorted(int(n) for n in re.findall(r":\s*(\d\d)_[a-z0-9_]+\.md\s*$", nav, re.M))
exercises = sorted(p.parent.name for p in (ROOT / "exercises").glob("*/exercise.json"))
solutions = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
if exercises != solutions:
    problems.append(f"exercises/ and solutions/ differ: {sorted(set(exercises) ^ set(solutions))}")
numbers = [int(e.split("_")[0]) for e in exercises]
if numbers != CHAPTERS:
    problems.append(f"expected one exercise per chapter of mkdocs.yml's nav ({CHAPTERS}); found {exercises}")

CUDA_INCLUDE = re.compile(r'#\s*include\s*[<"](cuda[_a-z0-9]*\.h|c10/cuda/|ATen/cuda/|cublas|mma\.h)')


def needs_cuda_headers(path, seen=()):
    """path includes a CUDA header, itself or through a header beside it (#include "x.h")"""
    text = path.read_text()
    if path.suffix == ".cu" or CUDA_INCLUDE.search(text):
        return True
    local = [path.parent / h for h in re.findall(r'#\s*include\s*"([^"]+)"', text)]
    return any(h.is_file() and h not in seen and needs_cuda_headers(h, (*seen, path)) for h in local)


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
    # A course without the CUDA toolkit (COURSE_CUDA=off) builds the sources outside cuda_sources: none of them may
    # need it, through a CUDA header or a local header that includes one.
    for src in meta.get("sources", []):
        path = ROOT / "solutions" / ex / src
        if src not in meta.get("cuda_sources", []) and path.is_file() and needs_cuda_headers(path):
            problems.append(
                f"{where}: {src} includes CUDA headers but is not in cuda_sources (a course without the "
                "CUDA toolkit could not compile it)"
            )
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

# The planted cases (autograder/planted/README.md): every patch still applies to its starting folder...
problems.extend(planted_cases.dry_run(ROOT))
# ...a case's own source file is its own code, not a drifting copy of the reference's file of the same name...
SOURCES = (".cpp", ".cu", ".h", ".hpp", ".py")
NEAR_COPY = 0.8  # difflib's ratio on lines: above it, the file is the reference with a few lines changed
PLANTED_LINES = 1000  # C++/CUDA/Python lines in autograder/planted/ in all: the cases are patches and small attacks
planted_root = ROOT / "autograder" / "planted"
planted_lines = 0
for folder, dirs, files in os.walk(planted_root):  # links are not followed
    dirs.sort()
    for name in sorted(files):
        path = Path(folder) / name
        if not name.endswith(SOURCES) or path.is_symlink() or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        planted_lines += len(text.splitlines())
        rel = path.relative_to(planted_root)
        reference = ROOT / "solutions" / rel.parts[0] / name
        if len(rel.parts) == 3 and reference.is_file():
            ratio = difflib.SequenceMatcher(
                None, reference.read_text(errors="replace").splitlines(), text.splitlines(), autojunk=False
            ).ratio()
            if ratio > NEAR_COPY:
                problems.append(
                    f"autograder/planted/{rel} is {ratio:.1%} identical to {reference.relative_to(ROOT)}: "
                    'make the case a patch over the reference ("submission" and "patch" in its '
                    "expected.json) and delete the copy"
                )
# ...and the folder stays small.
if planted_lines >= PLANTED_LINES:
    problems.append(
        f"autograder/planted/ holds {planted_lines} lines of C++/CUDA/Python ({', '.join(SOURCES)}); "
        f"it must stay under {PLANTED_LINES}: a one-bug case is a patch over the reference"
    )

for p in problems:
    print("FAIL:", p)
print(
    f"course/integrity: {len(exercises)} exercises, {len(solutions)} solutions, "
    f"{len(course_metadata.catalog(ROOT))} checks declared, {len(list(planted_cases.all_cases(ROOT)))} planted cases "
    f"({planted_lines} lines of code in autograder/planted/), {len(problems)} problem(s)"
)
sys.exit(1 if problems else 0)
