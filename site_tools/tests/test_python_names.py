"""Every Python name a chapter writes as code resolves under the pinned torch: a reader who copies it gets the object
the chapter means, not an AttributeError or an ImportError.

What is read: inline code spans in the prose (paragraphs, lists, tables, headings, admonitions) and the lines of
```python blocks that are not snippet includes. Printed output is exempt: ```text and ```console blocks, other
fenced blocks (C++, dot, ...) and the grader transcripts (<div class="grader-output">) are skipped.

What is checked in them:
- a dotted name rooted at a module of ROOTS (`torch.autograd.gradcheck`, `torch.Tag.out`, `unittest.skipUnless`),
  cut at the first character that is not part of a name (so `torch.library.opcheck(op, args)` checks
  `torch.library.opcheck`): every module prefix that can be imported is imported, as a reader's `import` would,
  then the name is evaluated attribute by attribute from its root, as Python evaluates it. So
  `torch.autograd.gradcheck.GradcheckError` fails (`torch.autograd.gradcheck` is the function) although a module of
  that name exists;
- `from X import Y` (Y may be a list) and `import X` statements, by importing them.
A component in capitals (`torch.ops.NAMESPACE`) is a placeholder: what precedes it is checked.
`torch.ops.NS....` is checked only for PyTorch's own namespaces (aten, prims, prim): the course's operators exist only
once a chapter's library is loaded, which the example scripts (site/examples) do.

A chapter may show a name that must NOT resolve (the wrong form it warns about) by declaring it in a comment,
`<!-- python-name-fails: torch.autograd.gradcheck.GradcheckError -->`: the test then requires that it fails, and
does not report it.

usage: test_python_names.py [CHAPTER.md ...]     (default: every chapter)
       test_python_names.py --catches              each wrong name of CATCHES, planted in a scratch chapter, fails it
"""

import glob
import importlib
import json
import os
import re
import sys

from sitelib import COURSE_ROOT, chapter_files

ROOTS = ("torch", "unittest", "subprocess", "triton")
BUILTIN_OP_NAMESPACES = ("aten", "prims", "prim")
NAME = re.compile(r"(?<![\w.])(?:%s)(?:\.[A-Za-z_]\w*)+" % "|".join(ROOTS))
FROM_IMPORT = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+\(?([\w\s,]+?)\)?\s*(?:#.*)?$")
IMPORT = re.compile(r"^\s*import\s+([\w.]+(?:\s*,\s*[\w.]+)*)\s*(?:#.*)?$")
FAILS_MARK = re.compile(r"<!--\s*python-name-fails:\s*(\S+)\s*-->")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]+$")  # NAMESPACE, NAME: the reader fills it in
SNIPPET = re.compile(r'^\s*-{1,}8<-{1,}\s+"')


def code_in_chapter(text):
    """[(line number, code)]: the inline code spans of the prose and the lines of ```python blocks."""
    out = []
    lines = text.splitlines()
    fence, fence_lang, in_transcript = None, None, False
    for no, line in enumerate(lines, 1):
        if fence is not None:
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
            elif fence_lang in ("python", "py", "pycon") and not SNIPPET.match(line) and not in_transcript:
                out.append((no, line))
            continue
        m = FENCE.match(line)
        if m:
            fence, fence_lang = m.group(2), m.group(3).lower()
            continue
        if '<div class="grader-output"' in line:
            in_transcript = True
        if in_transcript:
            if "</div>" in line:
                in_transcript = False
            continue
        for code in INLINE_CODE.finditer(line):
            out.append((no, code.group(2).strip()))
    return out


def names_in(code):
    """[(kind, what)] in one piece of code: ("name", dotted) or ("from", (module, [names])) or ("import", module)."""
    found = []
    m = FROM_IMPORT.match(code)
    if m:
        found.append(("from", (m.group(1), [n.strip() for n in m.group(2).split(",") if n.strip()])))
        return found
    m = IMPORT.match(code)
    if m:
        found += [("import", mod.strip()) for mod in m.group(1).split(",")]
        return found
    for name in NAME.findall(code):
        parts = name.split(".")
        placeholder = next((i for i, p in enumerate(parts) if PLACEHOLDER.match(p)), None)
        if placeholder is not None:  # `torch.ops.NAMESPACE`: a placeholder for the reader's name; check what precedes
            name = ".".join(parts[:placeholder])
            if "." not in name:
                continue
        if not course_operator(name):
            found.append(("name", name))
    return found


def course_namespaces():
    """The operator namespaces the course's own libraries declare (TORCH_LIBRARY(NS, m) in its C++ sources)."""
    found = set()
    for folder in ("exercises", "solutions", "site_tools/examples", "autograder/planted"):
        for dirpath, _, names in os.walk(os.path.join(COURSE_ROOT, folder)):
            for n in names:
                if n.endswith((".cpp", ".cu")):
                    with open(os.path.join(dirpath, n), errors="replace") as f:
                        found.update(re.findall(r"TORCH_LIBRARY(?:_FRAGMENT)?\(\s*(\w+)", f.read()))
    return found


COURSE_NAMESPACES = course_namespaces()


def course_packages():
    """The Python packages the course's stable-ABI exercises ship (exercise.json "library" with "abi": "stable"):
    `import mm16_stable` works once their wheel is installed, which build/stable_wheel does and checks."""
    found = set()
    for meta in glob.glob(os.path.join(COURSE_ROOT, "exercises", "*", "exercise.json")):
        with open(meta) as f:
            data = json.load(f)
        if data.get("abi") == "stable":
            found.add(data["library"])
    return found


COURSE_PACKAGES = course_packages()


def course_operator(dotted):
    """True for torch.ops.NS.... where NS is a namespace the course's libraries declare: those operators exist only
    once a chapter's library is loaded (the example scripts do that). Any other torch.ops.X is checked: X must be
    PyTorch's own namespace (aten, ...) or an attribute of torch.ops itself (load_library)."""
    parts = dotted.split(".")
    return parts[:2] == ["torch", "ops"] and len(parts) > 2 and parts[2] in COURSE_NAMESPACES


def resolve_name(dotted):
    """None if `dotted` evaluates, else why not. Imports each importable module prefix first (as `import a.b` would),
    then evaluates the name attribute by attribute from its root, as the expression would be."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            continue
        except Exception as e:  # noqa: BLE001 - importing it failed for another reason: say so
            return f"importing {'.'.join(parts[:i])} raised {type(e).__name__}: {e}"
    try:
        obj = importlib.import_module(parts[0])
    except Exception as e:  # noqa: BLE001
        return f"import {parts[0]} raised {type(e).__name__}: {e}"
    if (
        parts[:2] == ["torch", "ops"]
        and len(parts) > 2
        and parts[2] not in BUILTIN_OP_NAMESPACES
        and not hasattr(type(obj.ops), parts[2])
    ):
        # torch.ops makes a namespace object for any name it is asked for, so getattr cannot fail here
        return (
            f"torch.ops.{parts[2]} is neither an attribute of torch.ops nor an operator namespace of PyTorch "
            f"({', '.join(BUILTIN_OP_NAMESPACES)}) or of the course ({', '.join(sorted(COURSE_NAMESPACES))})"
        )
    for i, attr in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, attr)
        except AttributeError as e:
            return f"{'.'.join(parts[:i])} is {describe(obj)}: AttributeError: {e}"
        except Exception as e:  # noqa: BLE001
            return f"{'.'.join(parts[: i + 1])} raised {type(e).__name__}: {e}"
    return None


def describe(obj):
    kind = type(obj).__name__
    return f"a {kind}" if not kind.startswith(("a", "e", "i", "o", "u")) else f"an {kind}"


def resolve_from(module, names):
    try:
        mod = importlib.import_module(module)
    except Exception as e:  # noqa: BLE001
        return f"import {module} raised {type(e).__name__}: {e}"
    for n in names:
        if hasattr(mod, n):
            continue
        try:
            importlib.import_module(f"{module}.{n}")
        except Exception:  # noqa: BLE001
            return f"ImportError: cannot import name {n!r} from {module!r}"
    return None


def resolve_import(module):
    try:
        importlib.import_module(module)
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"
    return None


# the ids of the grader's rows (autograder/metadata/checks.json): a chapter names them in code spans
with open(os.path.join(COURSE_ROOT, "autograder", "metadata", "checks.json")) as f:
    CHECK_IDS = set(json.load(f)["checks"])


def check_chapter(path):
    """(problems, number of names checked) of one chapter."""
    with open(path) as f:
        text = f.read()
    rel = os.path.relpath(path, COURSE_ROOT) if path.startswith(COURSE_ROOT) else path
    declared_failing = set(FAILS_MARK.findall(text))
    problems, checked, seen = [], 0, {}
    for no, code in code_in_chapter(text):
        for kind, what in names_in(code):
            key = (kind, str(what))
            if key in seen:
                continue
            seen[key] = no
            if kind == "name" and what in CHECK_IDS:
                continue  # a grader row (`triton.masked_edges`), named in prose as its id, not a Python name
            if kind == "name":
                why = resolve_name(what)
                shown = what
            elif kind == "from":
                why = resolve_from(*what)
                shown = f"from {what[0]} import {', '.join(what[1])}"
            elif what.split(".")[0] in COURSE_PACKAGES:
                continue  # a course wheel's package: imported by build/stable_wheel, not installed here
            else:
                why = resolve_import(what)
                shown = f"import {what}"
            checked += 1
            if kind == "name" and what in declared_failing:
                if why is None:
                    problems.append(
                        f"{rel}:{no}: `{shown}` is declared to fail (python-name-fails), but it "
                        f"resolves under torch {torch_version()}"
                    )
                continue
            if why is not None:
                problems.append(f"{rel}:{no}: `{shown}` does not resolve under torch {torch_version()}: {why}")
    for name in sorted(declared_failing):
        if ("name", name) not in seen:
            problems.append(f"{rel}: python-name-fails declares `{name}`, which the chapter never writes as code")
    return problems, checked


def torch_version():
    import torch

    return torch.__version__


# The test catches what it exists for: each of these, written in a chapter, must be reported (and name what it found).
CATCHES = [
    # chapter 6 once wrote this: torch.autograd.gradcheck is the function, so the attribute lookup fails
    (
        "Catch `torch.autograd.gradcheck.GradcheckError` when the check fails.\n",
        "`torch.autograd.gradcheck.GradcheckError` does not resolve",
    ),
    (
        "```python\nfrom torch.autograd import GradcheckError\n```\n",
        "`from torch.autograd import GradcheckError` does not resolve",
    ),
    ("| `torch.library.register_fakes` | a typo in a table |\n", "`torch.library.register_fakes` does not resolve"),
    ("Read the tags with `torch.ops.aten.mm.out.tag`.\n", "`torch.ops.aten.mm.out.tag` does not resolve"),
    ("Load it with `torch.ops.load_libary(path)`.\n", "`torch.ops.load_libary` does not resolve"),
    # a name declared to fail must really fail
    (
        "<!-- python-name-fails: torch.autograd.gradcheck -->\n`torch.autograd.gradcheck`\n",
        "`torch.autograd.gradcheck` is declared to fail",
    ),
]


def catches(scratch_dir):
    """0 if every planted wrong name fails the check of a scratch chapter and the right forms pass, else 1."""
    import tempfile

    missed = []
    with tempfile.TemporaryDirectory(dir=scratch_dir) as tmp:

        def run(text):
            path = os.path.join(tmp, "chapter.md")
            with open(path, "w") as f:
                f.write("# A chapter\n\n" + text)
            return check_chapter(path)[0]

        for text, expected in CATCHES:
            found = run(text)
            if not any(expected in p for p in found):
                missed.append(f"not caught: {text.strip()!r} (expected a problem containing {expected!r}, got {found})")
            else:
                print(f"caught: {text.strip()!r}")
        # and the right forms, in prose, a ```python block and a declared failure, pass
        right = (
            "`from torch.autograd.gradcheck import GradcheckError`, `torch.Tag.out`, "
            "`torch.ops.aten.mm.out.tags`, `torch.ops.course.mm16` (a course operator: not checked)\n"
            "```python\nimport torch.utils.cpp_extension\nx = torch.library.opcheck\n```\n"
            "<!-- python-name-fails: torch.autograd.gradcheck.GradcheckError -->\n"
            "`except torch.autograd.gradcheck.GradcheckError` fails.\n"
            '<div class="grader-output" markdown>\n`torch.not_a_name` in a transcript\n</div>\n'
            "```text\nAttributeError: torch.printed.output\n```\n"
        )
        found = run(right)
        if found:
            missed.append(f"the right forms were reported: {found}")
    for m in missed:
        print("FAIL:", m)
    print(f"site/python_names_catches: {len(CATCHES)} planted wrong names, {len(missed)} problem(s)")
    return 1 if missed else 0


def main(argv):
    if argv[:1] == ["--catches"]:
        return catches(argv[1] if len(argv) > 1 else None)
    paths = [os.path.abspath(p) for p in argv] or chapter_files()
    problems, checked = [], 0
    for path in paths:
        found, n = check_chapter(path)
        problems += found
        checked += n
    for p in problems:
        print("FAIL:", p)
    print(
        f"site/python_names: {checked} Python names in {len(paths)} chapter(s) checked against torch "
        f"{torch_version()}, {len(problems)} problem(s)"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
