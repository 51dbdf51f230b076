"""The metadata half of the course's static integrity check (test_course_integrity.py calls problems()):
* every exercise.json and checks.json meets its JSON Schema (autograder/metadata/*.schema.json) and loads;
* every check an exercise lists is a TEST_CASE compiled into the judge, and every TEST_CASE is listed by some
  exercise (the names come from the built judge itself: `judge --list-checks`);
* every file an exercise declares as given (carried forward from an earlier exercise) is, in the stub and in the
  solution, the code of the reference solution that first holds it: only the leading comment (which names the
  exercise) and snippet markers may differ. A copy that drifted is named, with its first differing line;
* every other stub file is its solution with TODO blocks in place of the student's part: outside its TODO(student)
  blocks (the marker, and what follows it at the same or a deeper indentation), the stub's code lines appear in the
  solution, in order (comments and blank lines aside). Scaffolding that drifted between the two is named;
* no value comparison (abs, isnan, allclose, ...) in the judge or the worker outside judge/compare.{hpp,cpp}.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from opcourse import metadata as course_metadata

SNIPPET_MARKER = "// --8<-- ["


def code_of(path: Path) -> list[str]:
    """The file's code: without its leading comment block and without snippet markers."""
    lines = path.read_text().splitlines()
    start = 0
    while start < len(lines) and lines[start].lstrip().startswith("//"):
        start += 1
    return [l for l in lines[start:] if not l.lstrip().startswith(SNIPPET_MARKER)]


def first_difference(a: list[str], b: list[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"code line {i + 1}: {y.strip()[:70]!r} instead of {x.strip()[:70]!r}"
    return f"{len(b)} code lines instead of {len(a)}"


def given_problems(root: Path) -> list[str]:
    problems = []
    for ex in course_metadata.exercise_ids(root):
        given = course_metadata.raw(ex, root).get("given", {})
        for name, origin in given.items():
            source = root / "solutions" / origin / name
            if not source.is_file():
                problems.append(
                    f"exercises/{ex}/exercise.json: given {name} comes from solutions/{origin}/{name}, "
                    "which does not exist"
                )
                continue
            want = code_of(source)
            for kind in ("exercises", "solutions"):
                copy = root / kind / ex / name
                if copy == source:
                    continue
                if not copy.is_file():
                    problems.append(f"{kind}/{ex}/{name} is missing (exercise.json gives it from {origin})")
                elif code_of(copy) != want:
                    problems.append(
                        f"{kind}/{ex}/{name} drifted from solutions/{origin}/{name}, its given source: "
                        + first_difference(want, code_of(copy))
                    )
    return problems


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _code_line(line: str, python: bool) -> str:
    """The line's code, its trailing comment and surrounding blanks removed ("" for a comment or blank line)."""
    marker = "#" if python else "//"
    quote = None
    for i, ch in enumerate(line):  # a comment marker inside a string literal is not a comment
        if quote:
            if ch == quote and line[i - 1] != "\\":
                quote = None
        elif ch in "'\"":
            quote = ch
        elif line.startswith(marker, i):
            return line[:i].strip()
    return line.strip()


def _python_prose(text: str) -> tuple[set[int], dict[int, int]]:
    """Lines that hold docstrings (a string that is a statement of its own) and where comments start, by tokenize."""
    import io
    import tokenize

    prose, comments, prev = set(), {}, tokenize.NEWLINE
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.start[1]
        elif tok.type == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            prose.update(range(tok.start[0], tok.end[0] + 1))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            prev = tok.type
    return prose, comments


def scaffold_lines(path: Path, drop_todo_blocks: bool) -> list[str]:
    """The file's code lines: no header (leading comments or module docstring), no comments or docstrings, no blank
    lines, and (in a stub) no TODO(student) blocks."""
    python = path.suffix == ".py"
    text = path.read_text()
    lines = text.splitlines()
    prose, comments = _python_prose(text) if python else (set(), {})
    i = 0
    while not python and i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("//")):
        i += 1
    out, todo_indent = [], None
    for n, line in enumerate(lines[i:], start=i + 1):
        if drop_todo_blocks and "TODO(student)" in line:
            todo_indent = _indent(line)
            continue
        if todo_indent is not None:
            if not line.strip() or _indent(line) >= todo_indent:
                continue
            todo_indent = None
        if n in prose:
            continue
        code = (line[: comments[n]] if n in comments else line).strip() if python else _code_line(line, False)
        if code and not code.startswith("// --8<--"):
            out.append(code)
    return out


def scaffold_problems(root: Path) -> list[str]:
    problems = []
    for ex in course_metadata.exercise_ids(root):
        given = course_metadata.raw(ex, root).get("given", {})
        for stub in sorted((root / "exercises" / ex).iterdir()):
            sol = root / "solutions" / ex / stub.name
            if stub.name in given or stub.suffix not in (".cpp", ".cu", ".h", ".py") or not sol.is_file():
                continue
            want, have = scaffold_lines(stub, True), scaffold_lines(sol, False)
            at = 0
            for line in want:  # in order: each next stub line further down the solution
                found = next((k for k in range(at, len(have)) if have[k] == line), None)
                if found is None:
                    problems.append(
                        f"exercises/{ex}/{stub.name} drifted from solutions/{ex}/{stub.name} outside its "
                        f"TODO(student) blocks: {line[:80]!r} is not in the solution (in that order)"
                    )
                    break
                at = found + 1
    return problems


def check_problems(root: Path, judge: str | None) -> list[str]:
    """Listed checks against the judge's compiled test cases (skipped, with a note, when no judge is given)."""
    listed = {}
    for ex in course_metadata.exercise_ids(root):
        for c in course_metadata.load(ex, root)["checks"]:
            listed.setdefault(c["id"], ex)
    problems = []
    declared = set(course_metadata.catalog(root))
    for cid in sorted(declared - set(listed)):
        problems.append(f"autograder/metadata/checks.json declares {cid!r}, which no exercise lists")
    if not judge:
        print("note: no judge given: checks not compared with its test cases")
        return problems
    r = subprocess.run([judge, "--list-checks"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        return problems + [f"{judge} --list-checks failed ({r.returncode}): {r.stderr[-300:]}"]
    names = [l for l in r.stdout.splitlines() if l.strip()]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"check {dup!r} is defined by more than one TEST_CASE in autograder/checks/")
    for cid, ex in sorted(listed.items()):
        if cid not in names:
            problems.append(f"exercises/{ex}/exercise.json lists check {cid!r}, which has no TEST_CASE in the judge")
    for name in sorted(set(names) - set(listed)):
        problems.append(f"TEST_CASE {name!r} (autograder/checks/) is listed by no exercise.json: it never runs")
    return problems


# The judge compares values in one place, judge/compare.{hpp,cpp}: a tolerance or a NaN rule written anywhere else
# is a second comparator that can disagree with it (issue 24 found three, one right). A line that does such
# arithmetic for another purpose says so with NOT_A_COMPARISON.
COMPARATOR_FILES = {"autograder/judge/compare.hpp", "autograder/judge/compare.cpp"}
VALUE_COMPARISON = re.compile(
    r"\b(?:std::)?(?:f?abs|isnan|isinf|isfinite|fmax|fmin)\s*\(|\b(?:allclose|isclose|"
    r"assert_close|torch\.equal)\b|\.abs\(\)"
)
NOT_A_COMPARISON = "not a value comparison:"


def comparison_problems(root: Path) -> list[str]:
    """Value comparisons (abs, isnan, allclose, ...) in the judge's C++ or the worker's Python outside the one
    comparator."""
    problems = []
    for folder, patterns in (
        ("autograder/judge", ("*.cpp", "*.hpp")),
        ("autograder/checks", ("*.cpp", "*.hpp")),
        ("autograder/worker", ("*.py",)),
    ):
        for pattern in patterns:
            for path in sorted((root / folder).glob(pattern)):
                rel = path.relative_to(root).as_posix()
                if rel in COMPARATOR_FILES:
                    continue
                for n, line in enumerate(path.read_text().splitlines(), 1):
                    if VALUE_COMPARISON.search(line) and NOT_A_COMPARISON not in line:
                        problems.append(
                            f"{rel}:{n}: a value comparison outside the judge's one comparator "
                            f"(judge/compare.hpp): {line.strip()[:80]!r}"
                        )
    return problems


def problems(root: Path, judge: str | None = None) -> list[str]:
    found = course_metadata.schema_problems(root)
    for ex in course_metadata.exercise_ids(root):
        try:
            course_metadata.load(ex, root)
        except course_metadata.MetadataError as e:
            found.append(str(e))
    if found:  # the rest assumes loadable metadata
        return found
    return given_problems(root) + scaffold_problems(root) + check_problems(root, judge) + comparison_problems(root)
