"""ctest mutants/universalmutator: the second generator (opcourse/mutation/mutate_universal.py).

1. With a stand-in for universalmutator's `mutate` (no network): of the files it writes, an edit of a comment, a string
   literal, a TORCH_CHECK message argument or a preprocessor line is dropped, as are one that gives the reference's
   text back and a duplicate; the code edits become planted-case patches that apply exactly once and make the text
   their id names, with the edit's line and column.
2. With the real tool, installed on first use into its own environment under the course's cache: the mutants of a
   sample of the reference files (one per suffix, drawn with a seed from the commit) keep those properties, and none
   edits a string literal. Without PyPI (the install fails) this part is SKIPPED (exit 77) with the reason, never
   passed."""

import collections
import random
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from opcourse import planted as planted_cases
from opcourse.mutation import mutate, mutate_universal
from opcourse.mutation.mutants import resolve_seed

SOURCE = Path(__file__).resolve().parents[2]

failures: list[str] = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)


def check_patches(name, text, ms):
    """Each mutant a patch that applies once and makes the text its id names; no two alike; no string edited."""
    texts = []
    strings = collections.Counter(t.text for t in mutate.lex_cpp(text) if t.kind == "str")
    for m in ms:
        try:
            patched = planted_cases.apply_patch(text, [[m.old, m.new]], m.label)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name} {m.label}: the patch does not apply: {e}")
            continue
        expect(m.id == mutate.mutant_id(m.exercise, name, patched), f"{name} {m.label}: the id is not the text's")
        expect(not mutate_universal._left_alone(name, text, patched), f"{name} {m.label}: changes nothing it may")
        if not name.endswith(".py"):
            added = collections.Counter(t.text for t in mutate.lex_cpp(patched) if t.kind == "str") - strings
            expect(not added, f"{name} {m.label}: a string literal was edited: {sorted(added)[:2]}")
        texts.append(patched)
    expect(len(set(texts)) == len(texts), f"{name}: two mutants make the same text")


# --- 1. a stand-in for `mutate`: writes the mutant files a real run would, one of each kind ---------------------------
CPP = """#include <vector>  // a < b
static int f(const int* p, int n) {
  TORCH_CHECK(n > 0, "n must be positive, got ", n);
  // add them up
  int s = 0;
  for (int i = 0; i < n; ++i) s += p[i];
  return s;
}
"""
EDITS = {  # mutant file -> (old, new)
    "comment": ("// add them up", "// add them down"),
    "string": ('"n must be positive, got "', '"n must be negative, got "'),
    "message": (', got ", n);', ', got ", n + 1);'),
    "preprocessor": ("#include <vector>  // a < b", "#include <vector>  // a > b"),
    "same": ("int s = 0;", "int s = 0;"),
    "code": ("i < n; ++i", "i <= n; ++i"),
    "duplicate": ("i < n; ++i", "i <= n; ++i"),
    "inserted": ("  return s;\n", "  break;\n  return s;\n"),
}
with tempfile.TemporaryDirectory() as tmp:
    fake = Path(tmp) / "mutate"
    lines = [
        "#!/usr/bin/env python3",
        "import sys, pathlib",
        "src, out = sys.argv[1], pathlib.Path(sys.argv[sys.argv.index('--mutantDir') + 1])",
        "text = pathlib.Path(src).read_text()",
        f"edits = {list(EDITS.values())!r}",
        "for k, (a, b) in enumerate(edits):",
        "    (out / src.replace('.cpp', f'.mutant.{k}.cpp')).write_text(text.replace(a, b, 1))",
    ]
    fake.write_text("\n".join(lines) + "\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    mutate_universal.mutate_command = lambda: fake
    ms = mutate_universal.mutants_of_text("ex", "a.cpp", CPP)
    got = sorted((m.line, m.col, m.description) for m in ms)
    print("\n".join(m.label for m in ms))
    expect(
        [(m.line, m.col) for m in sorted(ms, key=lambda m: m.line)] == [(6, 22), (7, 3)],
        f"expected the code edit (6:22) and the inserted statement (7:3) only, got {got}",
    )
    expect(all(m.operator == "universalmutator" for m in ms), "the operator is not `universalmutator`")
    check_patches("a.cpp", CPP, ms)

PY = '''"""Docstring: a + b."""


def f(xs):
    """Sum: a * b."""
    return sum(x * 2 for x in xs)  # doubled
'''
expect(mutate_universal._left_alone("a.py", PY, PY.replace("a * b", "a / b")), "a docstring edit is kept")
expect(mutate_universal._left_alone("a.py", PY, PY.replace("# doubled", "# tripled")), "a comment edit is kept")
expect(
    mutate_universal._left_alone("a.py", PY, PY.replace('"""Sum: a * b."""', "pass")),
    "a docstring that became `pass` is kept",
)
expect(
    not mutate_universal._left_alone("a.py", PY, PY.replace("return sum(x * 2 for x in xs)", "pass")),
    "a statement that became `pass` is dropped",
)
expect(not mutate_universal._left_alone("a.py", PY, PY.replace("x * 2", "x / 2")), "a code edit is dropped")
expect(
    not mutate_universal._left_alone("a.py", PY, PY.replace("return", "retur")),
    "a mutant that does not parse is dropped (it is stillborn, and counted so)",
)
expect(mutate_universal._edit("abcd", "abXd") == (2, 3, "X"), "the edit of a replaced character")
expect(mutate_universal._edit("abcd", "abd") == (2, 3, ""), "the edit of a removed character")
expect(mutate_universal._edit("ab", "abb") == (2, 2, "b"), "the edit of an appended character")

if failures:
    print("FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("stand-in: ok")

# --- 2. the real tool, on a sample of the reference files ------------------------------------------------------------
import importlib  # noqa: E402

importlib.reload(mutate_universal)  # the real mutate_command again
try:
    exe = mutate_universal.tool_dir() / "bin" / "mutate"
    if not exe.is_file():
        r = subprocess.run(
            [sys.executable, "-c", "from opcourse.mutation import mutate_universal as m; m.mutate_command()"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode != 0:
            print(f"SKIPPED: universalmutator could not be installed here: {(r.stderr or r.stdout).strip()[-300:]}")
            sys.exit(77)
except subprocess.TimeoutExpired:
    print("SKIPPED: installing universalmutator took over 600 s")
    sys.exit(77)
files, seen = [], set()
for folder in sorted((SOURCE / "solutions").iterdir()):
    for path in sorted(folder.iterdir()):
        if path.suffix not in mutate_universal.LANGUAGES or path.read_text() in seen:
            continue  # a file given again by a later exercise: once is enough
        seen.add(path.read_text())
        files.append(path)
# The tool takes minutes over all of them: a sample, one file of each suffix (.cpp, .cu, .h, .py) drawn with a seed
# from the checked-out commit, as mutants/sample draws its mutants, so successive commits cover every file in turn
# (`./course mutants --generator universalmutator` runs it on all of them).
rng = random.Random(resolve_seed("commit"))
by_suffix = collections.defaultdict(list)
for path in files:
    by_suffix[path.suffix].append(path)
counts = {}
for suffix in sorted(by_suffix):
    path = rng.choice(by_suffix[suffix])
    folder, text = path.parent, path.read_text()
    ms = mutate_universal.mutants_of_text(folder.name, path.name, text)
    counts[f"{folder.name}/{path.name}"] = len(ms)
    check_patches(path.name, text, ms)
print("\n".join(f"{k}: {v} mutants" for k, v in counts.items()))
expect(all(counts.values()), f"a reference file with no universalmutator mutant: {counts}")
if failures:
    print("FAILED:\n  " + "\n  ".join(failures[:40]))
    sys.exit(1)
print(f"ok: {sum(counts.values())} universalmutator mutants of {len(counts)} reference files")
