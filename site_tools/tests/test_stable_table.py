"""Chapter 10's table of what the LibTorch stable ABI lacks against chapters 3 to 6 is true of the headers of the torch
the course runs with, so it cannot drift from them.

The table follows a mark `<!-- stable-surface-table: torch X.Y.Z -->` in chapters/10_stable_abi.md; its columns are
"Chapters 3 to 6" | "Stable ABI" | "Declared in" | "Oldest target" | "Instead". Every name written as inline code is
read by its last identifier (`torch::stable::accelerator::DeviceGuard` is `DeviceGuard`, `a.options()` is `options`),
and the headers' declarations are those autograder/portability/stable_surface.py finds under torch/csrc/stable/ and
torch/headeronly/ (each with the TORCH_FEATURE_VERSION gate around it), or, for a header elsewhere (the AOTI shim),
the `#if`/`#ifdef` blocks around the first declaration of the name there.

- The mark names the torch of the headers (torch/headeronly/version.h): a new pin makes this test ask for a re-check.
- A row whose "Stable ABI" cell says "nothing" claims the stable surface lacks what chapters 3 to 6 wrote: each name
  of its first cell must be declared in no stable or header-only header.
- Any other row names stable equivalents: each must be declared in one of the headers of its "Declared in" cell, and
  its "Oldest target" cell must be what those declarations need: `any` (no gate), the highest `2.NN` gate among them,
  or the macro a declaration outside the stable headers sits under (`-DUSE_CUDA`).

usage: test_stable_table.py [check | catches]
  check:   the table against the installed torch's headers
  catches: each breakage of PLANTED, made in the chapter's text, is reported by name"""

import importlib.util
import os
import re
import sys

from sitelib import COURSE_ROOT

CHAPTER = os.path.join("chapters", "10_stable_abi.md")
MARK = re.compile(r"^<!-- stable-surface-table: torch (\S+) -->\s*$", re.M)
COLUMNS = ["Chapters 3 to 6", "Stable ABI", "Declared in", "Oldest target", "Instead"]
CODE = re.compile(r"`([^`]+)`")
VERSION = re.compile(r"^\s*(\d+\.\d+)\s*$")
SCANNED = ("torch/csrc/stable/", "torch/headeronly/")
_GATE = re.compile(r"#\s*if\s+TORCH_FEATURE_VERSION\s*>=\s*TORCH_VERSION_(\d+)_(\d+)_\d+")
_IFDEF = re.compile(r"#\s*(?:ifdef\s+(\w+)|if\s+defined\s*\(?\s*(\w+))")


def torch_include():
    """The include folder of the torch this Python would import (found without importing torch)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        raise SystemExit("site/stable_table: this Python has no torch: the table is checked against torch's headers")
    return os.path.join(os.path.dirname(spec.origin), "include")


def stable_surface():
    """autograder/portability/stable_surface.py, the course's one reader of the stable headers."""
    path = os.path.join(COURSE_ROOT, "autograder", "portability", "stable_surface.py")
    spec = importlib.util.spec_from_file_location("stable_surface", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def headers_torch(include):
    with open(os.path.join(include, "torch", "headeronly", "version.h"), encoding="utf-8") as f:
        m = re.search(r'#define TORCH_VERSION\s*\\?\s*"([^"]+)"', f.read())
    return m.group(1) if m else None


def identifier(code):
    """The name a code span stands for: its last identifier before any call or template arguments."""
    head = re.split(r"[(<{]", code, maxsplit=1)[0]
    names = re.findall(r"[A-Za-z_]\w*", head)
    return names[-1] if names else None


def cells(line):
    inner = line.strip()
    if inner.startswith("|"):
        inner = inner[1:]
    if inner.endswith("|"):
        inner = inner[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def table(text):
    """(torch named by the mark, [header cells], [(line number, [cells])]) of the table after the mark; None if the
    chapter has no mark."""
    m = MARK.search(text)
    if not m:
        return None
    lines = text[m.end() :].split("\n")
    offset = text[: m.end()].count("\n") + 1
    start = next((i for i, l in enumerate(lines) if l.strip()), None)
    rows = []
    if start is not None and lines[start].lstrip().startswith("|"):
        for i in range(start, len(lines)):
            if not lines[i].lstrip().startswith("|"):
                break
            rows.append((offset + i, cells(lines[i])))
    if len(rows) < 2:
        return m.group(1), [], []
    return m.group(1), rows[0][1], [r for r in rows[2:]]


def declared_outside(include, header, name):
    """For a header outside the scanned folders: (found, [gates], [macros]) of the first declaration of `name`: the
    TORCH_FEATURE_VERSION gates and the #ifdef macros of the blocks it sits in."""
    path = os.path.join(include, header)
    if not os.path.isfile(path):
        return False, [], []
    stack = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if s.startswith("#if"):
                gate, ifdef = _GATE.match(s), _IFDEF.match(s)
                if gate:
                    stack.append(("gate", f"{gate.group(1)}.{gate.group(2)}"))
                elif ifdef and (ifdef.group(1) or ifdef.group(2)) != "__cplusplus":
                    stack.append(("macro", ifdef.group(1) or ifdef.group(2)))
                else:
                    stack.append(None)
            elif s.startswith("#endif") and stack:
                stack.pop()
            elif s.startswith("#else") and stack:
                stack[-1] = None
            elif not s.startswith(("//", "*", "/*")) and re.search(r"\b%s\s*\(" % re.escape(name), s):
                return (
                    True,
                    [v for k, v in filter(None, stack) if k == "gate"],
                    [v for k, v in filter(None, stack) if k == "macro"],
                )
    return False, [], []


def _key(version):
    return tuple(int(p) for p in version.split("."))


def row_problems(no, row, surface, include):
    where = f"{CHAPTER}:{no}"
    classic, stable, headers, target = row[0], row[1], row[2], row[3]
    problems = []
    if stable.lower().startswith("nothing"):
        for code in CODE.findall(classic):
            name = identifier(code)
            for place in surface.get(name, []):
                problems.append(
                    f"{where}: the row says the stable ABI has nothing for `{code}`, but {place['header']} declares "
                    f"{name}" + (f" (target {place['since']})" if place["since"] else "")
                )
        return problems
    names = [identifier(c) for c in CODE.findall(stable)]
    places = CODE.findall(headers)
    if not names or not places:
        return [f"{where}: a row with a stable equivalent names it and its header as code (`...`), or says 'nothing'"]
    gates, macros = [], []
    for name in names:
        found = [p for p in surface.get(name, []) if p["header"] in places]
        if found:
            lowest = [p["since"] for p in found]
            gates.append(None if None in lowest else min(lowest, key=_key))
            continue
        outside = [(h, declared_outside(include, h, name)) for h in places if not h.startswith(SCANNED)]
        hit = next(((h, r) for h, r in outside if r[0]), None)
        if hit is None:
            elsewhere = ", ".join(p["header"] for p in surface.get(name, [])) or "no stable or header-only header"
            problems.append(f"{where}: {name} is not declared in {', '.join(places)} (declared in: {elsewhere})")
            continue
        _, (_, its_gates, its_macros) = hit
        gates.append(max(its_gates, key=_key) if its_gates else None)
        macros += its_macros
    if problems:
        return problems
    need = max((g for g in gates if g), key=_key, default=None)
    verb = ("needs", "is") if len(names) == 1 else ("need", "are")
    said = VERSION.match(target)
    said_macros = set(re.findall(r"-D(\w+)", target))
    if need is None and not macros:
        if target.strip().lower() != "any":
            problems.append(
                f"{where}: {', '.join(names)} {verb[0]} no target version (no gate), but the row says {target!r}"
            )
    elif need is not None and (not said or said.group(1) != need):
        problems.append(
            f"{where}: {', '.join(names)} {verb[0]} target {need} (the TORCH_FEATURE_VERSION gate in "
            f"{', '.join(places)}), but the row says {target!r}"
        )
    if set(macros) != said_macros:
        under = (
            f"{verb[1]} declared only under {', '.join(f'-D{m}' for m in macros)}" if macros else f"{verb[0]} no macro"
        )
        problems.append(f"{where}: {', '.join(names)} {under}, but the row says {target!r}")
    return problems


def check(text, include, surface):
    """[problem], number of rows checked."""
    found = table(text)
    if found is None:
        return [f"{CHAPTER} has no <!-- stable-surface-table: torch X.Y.Z --> mark before its table"], 0
    said, head, rows = found
    problems = []
    torch = headers_torch(include)
    if said != torch:
        problems.append(
            f"{CHAPTER}: the table says it was read from torch {said}'s headers, but the headers here are torch "
            f"{torch}: re-check each row against them, then change the mark"
        )
    if head != COLUMNS:
        return problems + [f"{CHAPTER}: no table of the columns {COLUMNS} right after the mark (found {head})"], 0
    for no, row in rows:
        if len(row) != len(COLUMNS):
            problems.append(f"{CHAPTER}:{no}: {len(row)} cells, not {len(COLUMNS)}")
            continue
        problems += row_problems(no, row, surface, include)
    return problems, len(rows)


# (what is planted, old text of the chapter, new text, what the report must contain)
PLANTED = [
    (
        "a wrong oldest target for a gated wrapper",
        "| `torch/csrc/stable/accelerator.h` | 2.13 |",
        "| `torch/csrc/stable/accelerator.h` | 2.12 |",
        ["nativeHandle", "need target 2.13", "'2.12'"],
    ),
    (
        "a name said to be absent that the headers declare",
        "| `TORCH_SYM_CHECK`,",
        "| `THO_DISPATCH_V2`, `TORCH_SYM_CHECK`,",
        ["has nothing for `THO_DISPATCH_V2`", "torch/headeronly/core/Dispatch_v2.h"],
    ),
    (
        "a stable name in the wrong header",
        "| `STD_TORCH_CHECK` | `torch/headeronly/util/Exception.h` |",
        "| `STD_TORCH_CHECK` | `torch/csrc/stable/ops.h` |",
        ["STD_TORCH_CHECK is not declared in torch/csrc/stable/ops.h", "torch/headeronly/util/Exception.h"],
    ),
    (
        "a gated wrapper said to need no target",
        "| `torch/csrc/stable/ops.h` | 2.10 |",
        "| `torch/csrc/stable/ops.h` | any |",
        ["need target 2.10", "'any'"],
    ),
    (
        "the shim's CUDA entry point without its macro",
        "| `-DUSE_CUDA` |",
        "| any |",
        ["aoti_torch_get_current_cuda_stream", "declared only under -DUSE_CUDA"],
    ),
    (
        "the table said to be read from another torch",
        "<!-- stable-surface-table: torch 2.15.0 -->",
        "<!-- stable-surface-table: torch 2.14.0 -->",
        ["torch 2.14.0's headers", "re-check each row"],
    ),
]


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    include = torch_include()
    surface = stable_surface().scan(include)
    with open(os.path.join(COURSE_ROOT, CHAPTER), encoding="utf-8") as f:
        text = f.read()
    if mode == "check":
        problems, n = check(text, include, surface)
        for p in problems:
            print("FAIL:", p)
        print(
            f"site/stable_table: {n} rows of {CHAPTER} checked against the headers of torch {headers_torch(include)} "
            f"({include}), {len(problems)} problem(s)"
        )
        return 1 if problems or not n else 0
    if mode != "catches":
        print(__doc__)
        return 2
    missed = []
    base, _ = check(text, include, surface)
    if base:
        missed.append(f"the chapter as it is already fails the check: {base}")
    for what, old, new, expected in PLANTED:
        if old not in text:
            missed.append(f"the planted case '{what}' expects {old!r} in {CHAPTER}: the page changed, update PLANTED")
            continue
        found, _ = check(text.replace(old, new, 1), include, surface)
        hit = [p for p in found if all(e in p for e in expected)]
        if hit:
            print(f"caught: {what}: {hit[0]}")
        else:
            missed.append(f"not caught: {what} (expected a problem containing {expected}, got {found})")
    for m in missed:
        print("FAIL:", m)
    print(f"site/stable_table_catches: {len(PLANTED)} planted breakages, {len(missed)} problem(s)")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
