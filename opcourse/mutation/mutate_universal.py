"""A second mutant generator for `./course mutants --generator universalmutator`: the regular-expression rules of
universalmutator (PyPI; Groce et al.), whose operators are not the course's own (mutate.py), so a grader tuned to one
generator's edits is measured against another's.

universalmutator runs from an environment of its own under the course's cache (created on first use, pinned below):
it is a maintainer's tool, and its dependencies (an old `typing` backport among them) stay out of the course's
environment. Each of its mutant files becomes a mutate.Mutant, a planted-case patch like the course's own, under the
same rule of what is left alone: an edit that changes only comments, preprocessor lines or the message arguments of
TORCH_CHECK and its kin (C++), or only docstrings (Python), or that edits a string literal, is dropped; so is one that
gives the reference's text back or another mutant's."""

from __future__ import annotations

import ast
import collections
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..cli.common import ROOT, die, say
from . import mutate

VERSION = "1.14.1"
LANGUAGES = {".py": "python", ".cpp": "cpp", ".cc": "cpp", ".cu": "cpp", ".cuh": "cpp", ".h": "cpp", ".hpp": "cpp"}


def tool_dir() -> Path:
    """Beside the course's environments: tools/venv_path.sh names one of them, so it says where the cache is."""
    venv = subprocess.run([str(ROOT / "tools" / "venv_path.sh")], capture_output=True, text=True, check=True)
    return Path(venv.stdout.strip()).parent / f"universalmutator-{VERSION}"


def mutate_command() -> Path:
    """universalmutator's `mutate`, installed into its own environment on first use."""
    venv = tool_dir()
    exe = venv / "bin" / "mutate"
    if exe.is_file():
        return exe
    if os.environ.get("COURSE_OFFLINE"):
        die(f"--generator universalmutator: not installed ({venv}) and COURSE_OFFLINE is set")
    say(f"installing universalmutator=={VERSION} into {venv} (once) ...")
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"universalmutator=={VERSION}"], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        shutil.rmtree(venv, ignore_errors=True)
        die(f"--generator universalmutator: could not install it ({e}); it needs PyPI")
    return exe


def _python_shape(text: str) -> str | None:
    """The module's AST without docstrings and `pass` statements (None when it does not parse): a docstring that
    became `pass` changes nothing."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:]
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                setattr(node, field, [b for b in body if not isinstance(b, ast.Pass)])
    return ast.dump(tree)


def _cpp_shape(text: str) -> list[tuple[str, str]]:
    """The tokens that can change what the code does: comments and preprocessor lines are not tokens, a string
    literal counts by its kind only, and the message arguments of a TORCH_CHECK (or its kin) not at all."""
    m = mutate.CppMutator(text)
    m.scan_calls()  # a mutant need not be well-formed
    return [(t.kind, "" if t.kind in ("str", "chr") else t.text) for t in m.toks if not m.in_quiet(t.start, t.end)]


def _strings(name: str, text: str) -> collections.Counter:
    """The string literals of a source (Python: its str constants, docstrings and f-string parts included)."""
    if name.endswith(mutate.PY_SUFFIXES):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return collections.Counter()
        return collections.Counter(
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        )
    return collections.Counter(t.text for t in mutate.lex_cpp(text) if t.kind in ("str", "chr"))


def _left_alone(name: str, text: str, mutated: str) -> bool:
    """True when the edit is one the course's generator never makes: it changes only comments, docstrings,
    preprocessor lines or message arguments, or it edits a string literal (one may be removed with its statement, not
    changed: an edit across a quote mostly garbles a message or a schema, and does not build)."""
    if _strings(name, mutated) - _strings(name, text):
        return True
    if name.endswith(mutate.PY_SUFFIXES):
        shape = _python_shape(mutated)
        return shape is not None and shape == _python_shape(text)
    return _cpp_shape(mutated) == _cpp_shape(text)


def _edit(text: str, mutated: str) -> tuple[int, int, str]:
    """The one edit text[start:end] -> replacement that gives `mutated` (common prefix and suffix removed)."""
    start = 0
    while start < min(len(text), len(mutated)) and text[start] == mutated[start]:
        start += 1
    end_t, end_m = len(text), len(mutated)
    while end_t > start and end_m > start and text[end_t - 1] == mutated[end_m - 1]:
        end_t -= 1
        end_m -= 1
    return start, end_t, mutated[start:end_m]


def _describe(text: str, start: int, end: int, replacement: str, context: int = 12) -> str:
    """The edit with a few characters of its line either side, e.g. `(x.sizes() == y.sizes()` -> `(x.sizes() =...`."""
    lo = max(text.rfind("\n", 0, start) + 1, start - context)
    hi = text.find("\n", end)
    hi = min(len(text) if hi < 0 else hi, end + context)
    was, now = text[lo:hi], text[lo:start] + replacement + text[end:hi]
    return f"`{mutate._short(was, 50)}` -> `{mutate._short(now, 50)}`"


def mutants_of_text(exercise: str, name: str, text: str, gpu_names: tuple[str, ...] = ()) -> list[mutate.Mutant]:
    """universalmutator's mutants of one file, in file order, as course mutants (operator `universalmutator`)."""
    suffix = Path(name).suffix
    if suffix not in LANGUAGES:
        return []
    exe = mutate_command()
    gpu = mutate.gpu_only_lines(name, text, gpu_names)
    with tempfile.TemporaryDirectory(prefix="course-um-") as tmp:
        src, out = Path(tmp) / name, Path(tmp) / "mutants"
        src.write_text(text)
        out.mkdir()
        run = subprocess.run(
            [str(exe), name, LANGUAGES[suffix], "--noCheck", "--mutantDir", str(out)],
            cwd=tmp,
            capture_output=True,
            text=True,
        )
        files = sorted(
            out.iterdir(), key=lambda p: int(p.name.split(".mutant.")[1].split(".")[0]) if ".mutant." in p.name else 0
        )
        if run.returncode != 0 and not files:
            die(f"universalmutator failed on {name}: {(run.stderr or run.stdout).strip()[-500:]}", 1)
        seen: set[str] = set()
        found = []
        for path in files:
            mutated = path.read_text(errors="replace")
            mid = mutate.mutant_id(exercise, name, mutated)
            if mutated == text or mid in seen or _left_alone(name, text, mutated):
                continue
            seen.add(mid)
            start, end, replacement = _edit(text, mutated)
            edit = mutate.Edit(start, end, replacement, "universalmutator", _describe(text, start, end, replacement))
            found.append((start, mutate.mutant_of_edit(exercise, name, text, edit, mid, gpu)))
    return [m for _, m in sorted(found, key=lambda x: x[0])]
