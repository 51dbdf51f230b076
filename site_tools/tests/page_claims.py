"""What a page says about the course is true of the course (run by test_glossary.py check and catches, so by ctest's
site/glossary and site/glossary_catches; also on its own: page_claims.py [check | catches]).

- Cross-references: a chapter named by number ("chapter 12", "chapters 3 to 6") is one of the chapters of mkdocs.yml's
  nav, and no page promises a chapter by description ("the later chapter on a fast kernel"): a promise of a chapter
  that does not exist yet is found here, not by a reader. "The next chapter" on the last chapter is one too.
- Claims about what a page holds: a sentence that says hints, or a reference solution, are "below" is followed on
  its page by the hints (a <!-- hints: EXERCISE --> mark) or a collapsed reference solution (??? success "Reference
  solution..."); a sentence that says each (or every) chapter has hints, or a reference solution, is true of every
  chapter of the nav (its hints mark names an exercise whose exercise.json has hints).
"""

import json
import os
import re
import sys
import tempfile

import yaml

from sitelib import COURSE_ROOT, copy_course, plant  # beside the tests that import this module

NUMBERED = re.compile(r"\bchapters?\s+(\d+)((?:\s*(?:,|and|or|to|-)\s*\d+)*)", re.I)
PROMISE = re.compile(r"\b(?:a|an|the)\s+(?:later|future|coming|upcoming|forthcoming)\s+chapters?\b[^.;:]*", re.I)
NEXT = re.compile(r"\bthe\s+next\s+chapter\b", re.I)
HINTS_MARK = re.compile(r"^<!-- hints: ([A-Za-z0-9_]+) -->", re.M)
SOLUTION_BOX = re.compile(r'^\s*\?\?\?\+? success "Reference solution', re.M)
SENTENCE = re.compile(r"[^.!?]+[.!?]?")


class _Loader(yaml.SafeLoader):
    """mkdocs.yml may hold !!python tags (a theme's or an extension's); the nav is plain YAML."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def nav_chapters(root):
    """The chapter files of mkdocs.yml's nav, in order (the entries of its "Chapters" section)."""
    with open(os.path.join(root, "mkdocs.yml"), encoding="utf-8") as f:
        nav = yaml.load(f, Loader=_Loader)["nav"]
    for entry in nav:
        if isinstance(entry, dict) and "Chapters" in entry:
            return [list(e.values())[0] if isinstance(e, dict) else e for e in entry["Chapters"]]
    raise ValueError("mkdocs.yml's nav has no Chapters section")


def _prose(text):
    from test_glossary import prose  # fenced code, comments and grader transcripts removed

    return re.sub(r"\s+", " ", re.sub(r"`[^`]*`", "``", prose(text))).replace("**", "")


def _pages(root):
    chapters = os.path.join(root, "chapters")
    return sorted(
        os.path.join(d, n)
        for d, _, ns in os.walk(chapters)
        for n in ns
        if n.endswith(".md") and n != "abbreviations.md"
    )


def _after(raw, sentence, pattern):
    """Whether `pattern` matches in the raw page after the place `sentence` (from the flattened prose) starts."""
    words = sentence.split()[:4]
    start = re.search(r"\s+".join(re.escape(w) for w in words), raw) if words else None
    return bool(pattern.search(raw, start.start() if start else 0))


def _has_hints(root, raw):
    for exercise in HINTS_MARK.findall(raw):
        path = os.path.join(root, "exercises", exercise, "exercise.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                if json.load(f).get("hints"):
                    return True
    return False


def check(root=COURSE_ROOT):
    problems = []
    chapters = nav_chapters(root)
    last = len(chapters)
    raws = {}
    for chapter in chapters:
        with open(os.path.join(root, "chapters", chapter), encoding="utf-8") as f:
            raws[chapter] = f.read()
    for path in _pages(root):
        page = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        text = _prose(raw)
        for m in NUMBERED.finditer(text):
            numbers = [int(n) for n in re.findall(r"\d+", m.group(0))]
            beyond = [n for n in numbers if n > last or n < 1]
            if beyond:
                problems.append(
                    f"{page}: '{m.group(0)}' names chapter {beyond[0]}, but mkdocs.yml's nav has chapters 1 to {last}"
                )
        for m in PROMISE.finditer(text):
            problems.append(
                f"{page}: '{m.group(0).strip()}' promises a chapter that mkdocs.yml's nav does not have: "
                f"name one of chapters 1 to {last}, or say what the course does not cover yet"
            )
        if os.path.relpath(path, os.path.join(root, "chapters")) == chapters[-1]:
            for m in NEXT.finditer(text):
                problems.append(f"{page}: '{m.group(0)}' on the last chapter of mkdocs.yml's nav")
        for sentence in SENTENCE.findall(text):
            low = sentence.lower()
            claims = [
                ("hint", "the hints (a <!-- hints: EXERCISE --> mark)", HINTS_MARK),
                (
                    "reference solution",
                    'a collapsed reference solution (??? success "Reference solution")',
                    SOLUTION_BOX,
                ),
            ]
            for word, what, pattern in claims:
                if word not in low:
                    continue
                if re.search(r"\bbelow\b", low) and not _after(raw, sentence.strip(), pattern):
                    problems.append(
                        f"{page}: '{sentence.strip()[:90]}' says {word}s are below, but {what} does "
                        "not follow on the page"
                    )
                if re.search(r"\b(each|every)\s+chapter\b", low):
                    lacking = [
                        c
                        for c in chapters
                        if not (_has_hints(root, raws[c]) if word == "hint" else SOLUTION_BOX.search(raws[c]))
                    ]
                    if lacking:
                        problems.append(
                            f"{page}: '{sentence.strip()[:90]}' says every chapter has {word}s, but "
                            f"{', '.join(lacking)} has none"
                        )
    return problems


# (what is planted, file, old text, new text, what the report must contain); the first three are what the pages said
# before the fix, as the issue found them
PLANTED = [
    (
        "a promise of a chapter the nav does not have",
        "chapters/04_cuda.md",
        "## Registration",
        "The later chapter on a fast kernel measures both.\n\n## Registration",
        ["chapters/04_cuda.md", "'The later chapter on a fast kernel measures both' promises a chapter"],
    ),
    (
        "a chapter named by a number beyond the nav",
        "chapters/03_cpu.md",
        "## The contract",
        "Chapter 12 makes it fast.\n\n## The contract",
        ["chapters/03_cpu.md", "names chapter 12, but mkdocs.yml's nav has chapters 1 to"],
    ),
    (
        "hints promised below on a page that has none",
        "chapters/index.md",
        "## The chapters",
        "Each exercise section below has hints that open one at a time.\n\n## The chapters",
        ["chapters/index.md", "says hints are below"],
    ),
    (
        "every chapter said to have hints, one without",
        "chapters/05_fake.md",
        "<!-- hints: 05_fake -->",
        "",
        ["chapters/index.md", "says every chapter has hints, but 05_fake.md has none"],
    ),
]


def catches():
    """[problem]: each PLANTED breakage, in a temporary copy of the course, must be reported by name."""
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        base = check(tmp)
        if base:
            missed.append(f"the unmodified copy already fails the page claims check: {base}")
        for what, path, old, new, expected in PLANTED:
            original = plant(tmp, path, old, new)
            found = check(tmp)
            hit = [p for p in found if all(e in p for e in expected)]
            if hit:
                print(f"caught: {what}: {hit[0]}")
            else:
                missed.append(f"not caught: {what} (expected a problem containing {expected}, got {found})")
            with open(os.path.join(tmp, path), "w", encoding="utf-8") as f:
                f.write(original)
    return missed


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    found = check() if mode == "check" else catches()
    for p in found:
        print("FAIL:", p)
    print(f"page claims ({mode}): {len(found)} problem(s)")
    sys.exit(1 if found else 0)
