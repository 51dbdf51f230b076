"""ctest mutants/generator: the mutant generator (opcourse/mutation/mutate.py) on small sources and on every reference
solution: comments, strings, docstrings, preprocessor lines and TORCH_CHECK messages are never edited; each mutant is
a planted-case patch that applies exactly once and makes the text its id names; the operators make what they say."""

import collections
import io
import re
import sys
import tokenize
from pathlib import Path
from opcourse import planted as planted_cases
from opcourse.mutation import mutate

SOURCE = Path(__file__).resolve().parents[2]

failures: list[str] = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)


def mutated_texts(name, text):
    ms = mutate.mutants_of_text("ex", name, text)
    out = []
    for m in ms:
        patched = planted_cases.apply_patch(text, [[m.old, m.new]], m.label)  # raises unless OLD occurs once
        expect(m.id == mutate.mutant_id("ex", name, patched), f"{m.label}: the id is not the mutated text's")
        out.append(patched)
    expect(len(set(out)) == len(out), f"{name}: two mutants make the same text")
    return ms, out


def literals(name, text):
    """The string literals and comments of a source, counted: a mutant may remove whole ones (a deleted
    statement), never edit one."""
    if name.endswith(".py"):
        toks = tokenize.generate_tokens(io.StringIO(text).readline)
        return collections.Counter(t.string for t in toks if t.type in (tokenize.STRING, tokenize.COMMENT))
    found = [t.text for t in mutate.lex_cpp(text) if t.kind in ("str", "chr")]
    found += re.findall(r"//[^\n]*|/\*.*?\*/|^[ \t]*#[^\n]*", text, re.M | re.S)
    return collections.Counter(found)


def untouched_literals(name, text, texts):
    before = literals(name, text)
    for t in texts:
        extra = literals(name, t) - before
        expect(not extra, f"{name}: a string, comment or preprocessor line was edited: {sorted(extra)[:3]}")


CPP = r"""// a * b in a comment
#include <vector>  // a < b
#define TWICE(x) ((x) + (x))
static float f(const float* p, int n) {
  TORCH_CHECK(n > 0, "n must be > 0 and < ", n + 1, " here");
  STD_TORCH_CHECK(n < 9, "stable: n is ", n - 1, " over");
  float s = 0;
  for (int i = 0; i < n; ++i) s += p[i] * 2;
  if (s == 0 && n != 1) return static_cast<float>(s);
  const char* t = "x - y";
  g(p, n);
  return s;
}
"""
ms, texts = mutated_texts("a.cpp", CPP)
labels = [m.label for m in ms]
print("\n".join(labels))
untouched_literals("a.cpp", CPP, texts)
for t in texts:
    expect(', n + 1, " here");' in t or "TORCH_CHECK(n >" not in t, "a TORCH_CHECK message argument was edited")
    expect(', n - 1, " over");' in t or "STD_TORCH_CHECK" not in t, "a STD_TORCH_CHECK message argument was edited")
expect(any("`<` -> `<=`" in l for l in labels), "no boundary mutant of i < n")
expect(any("`<` -> `>=`" in l for l in labels), "no relational mutant of i < n")
expect(any("`*` -> `/`" in l for l in labels), "no arithmetic mutant of p[i] * 2")
expect(not any(":4:" in l and "arith" in l for l in labels), "the pointer in `const float* p` was taken for a product")
expect(not any("static_cast" in l and "relational" in l for l in labels), "a template bracket taken for a comparison")
expect(any("`++` -> `--`" in l for l in labels), "no increment mutant")
expect(any("`+=` -> `=`" in l for l in labels), "no compound-assignment mutant")
expect(
    any("negate `n > 0` negated" in l for l in labels) is False,
    "a single comparison is negated twice (relational already does)",
)
expect(any("`s == 0 && n != 1` negated" in l for l in labels), "the if's condition is not negated")
expect(any("`&& n != 1` dropped" in l for l in labels), "no dropped operand of &&")
expect(any("delete `g(p, n);` removed" in l for l in labels), "the call statement is not removed")
expect(
    not any("delete `float s = 0;`" in l or "delete `const char*" in l for l in labels),
    "a declaration was removed (it would not compile)",
)
expect(not any("delete `return" in l for l in labels), "a return was removed (undefined behaviour, not a bug)")
expect(any("delete `TORCH_CHECK(n > 0" in l for l in labels), "the TORCH_CHECK is not removed")
expect(any("swap-args `p` <-> `n`" in l for l in labels), "g(p, n) is not swapped")
expect(not any("parameters" in l for l in labels), "parameters of different types were swapped")

PY = '''"""Docstring: a + b."""
import re


def f(xs, y=2):
    """a < b"""
    total = 0
    for x in sorted(xs):
        if x > y and x != 3:
            total += x * 2  # c - d
    return f"{total + 1}" if total else "none"
'''
ms, texts = mutated_texts("a.py", PY)
labels = [m.label for m in ms]
print("\n".join(labels))
untouched_literals("a.py", PY, texts)
for t in texts:
    expect('"""Docstring: a + b."""' in t and '"""a < b"""' in t, "a docstring was edited")
    compile(t, "a.py", "exec")  # every mutant parses
expect(any("`>` -> `>=`" in l for l in labels), "no boundary mutant of x > y")
expect(any("`and` -> `or`" in l for l in labels), "no and -> or")
expect(any("`*` -> `/`" in l for l in labels), "no arithmetic mutant")
expect(any("`+=` -> `-=`" in l for l in labels), "no augmented-assignment mutant")
expect(any("`sorted(...)` removed" in l for l in labels), "sorted(xs) is not dropped")
expect(any("`2` -> `3`" in l for l in labels), "the default 2 is not changed")
expect(any("delete `total += x * 2` removed" in l for l in labels), "the statement is not replaced by pass")
expect(not any("import re" in l for l in labels), "an import was removed")
expect(any("`total` negated" in l for l in labels), "the conditional expression's test is not negated")

# every reference solution: each mutant applies as a planted patch, and none touches a comment line
total = 0
for path in sorted((SOURCE / "solutions").glob("*/*")):
    if not path.name.endswith(mutate.CPP_SUFFIXES + mutate.PY_SUFFIXES):
        continue
    text = path.read_text()
    ms, texts = mutated_texts(path.name, text)
    untouched_literals(path.name, text, texts)
    total += len(ms)
    for m in ms:
        line = text.splitlines()[m.line - 1].lstrip()
        expect(not line.startswith(("//", "#")), f"{path}: {m.label} edits a comment or preprocessor line")
print(f"{total} mutants of the reference solutions, every one a patch that applies")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
