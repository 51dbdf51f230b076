"""The integrity check catches what it exists for: on a scratch copy of the course, each kind of breakage is planted
in turn and course/integrity must fail, naming the file; the untouched copy must pass.

usage: test_integrity_catches.py COURSE_ROOT JUDGE"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT, JUDGE = Path(sys.argv[1]).resolve(), sys.argv[2]
CHECKER = Path(__file__).resolve().parent / "test_course_integrity.py"
COPIED = [
    "exercises",
    "solutions",
    "chapters",
    "mkdocs.yml",
    "autograder/metadata",
    "autograder/planted",
    "autograder/judge",
    "autograder/checks",
    "autograder/worker",
]


def check_id(entry):
    """An exercise.json check entry's id: the entry itself, or {"id": ..., "hint": ...}'s."""
    return entry if isinstance(entry, str) else entry["id"]


def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


def append(path, text):
    path.write_text(path.read_text() + text)


def replace(path, old, new):
    text = path.read_text()
    assert old in text, f"{path}: {old!r} not found (update this test)"
    path.write_text(text.replace(old, new, 1))


def break_a_patch(tree):
    """Edits the reference line that the first patch of 03_cpu/ignores_strides replaces."""
    expected = json.loads((tree / "autograder/planted/03_cpu/ignores_strides/expected.json").read_text())
    fname, edits = next(iter(expected["patch"].items()))
    replace(tree / "solutions/03_cpu" / fname, edits[0][0], edits[0][0].replace("(", " (", 1) + " ")


BREAKAGES = {
    "a planted patch no longer applies": (
        break_a_patch,
        "03_cpu/ignores_strides: mm16_cpu.cpp: the patch no longer applies",
    ),
    "a carried-forward file drifts": (
        lambda t: append(t / "exercises/05_fake/mm16_cuda.cpp", "static int drifted = 1;\n"),
        "exercises/05_fake/mm16_cuda.cpp drifted from solutions/04_cuda/mm16_cuda.cpp",
    ),
    "a solution's copy of a given file drifts": (
        lambda t: replace(t / "solutions/06_autograd/mm16_kernel.h", "#pragma once", "#pragma once\n#define DRIFT 1"),
        "solutions/06_autograd/mm16_kernel.h drifted from solutions/04_cuda/mm16_kernel.h",
    ),
    "a stub's given scaffolding drifts from its solution": (
        lambda t: replace(
            t / "exercises/04_cuda/mm16_kernel.cu", "constexpr int kTile = 16;", "constexpr int kTile = 32;"
        ),
        "exercises/04_cuda/mm16_kernel.cu drifted from solutions/04_cuda/mm16_kernel.cu outside its TODO(student) blocks",
    ),
    "exercise.json breaks its schema": (
        lambda t: edit_json(t / "exercises/03_cpu/exercise.json", lambda d: d.update(hint="a misspelt key")),
        "exercises/03_cpu/exercise.json: breaks exercise.schema.json",
    ),
    "checks.json breaks its schema": (
        lambda t: edit_json(t / "autograder/metadata/checks.json", lambda d: d["checks"]["build"].update(points="1")),
        "autograder/metadata/checks.json: breaks checks.schema.json at checks/build/points",
    ),
    "a check id has no test case": (
        lambda t: (
            edit_json(
                t / "autograder/metadata/checks.json",
                lambda d: d["checks"].update({"forward.magic": {"title": "t", "points": 1, "hint": "h"}}),
            ),
            edit_json(t / "exercises/03_cpu/exercise.json", lambda d: d["checks"].append("forward.magic")),
        ),
        "exercises/03_cpu/exercise.json lists check 'forward.magic', which has no TEST_CASE in the judge",
    ),
    "a test case no exercise lists": (
        lambda t: [
            edit_json(p, lambda d: d.update(checks=[c for c in d["checks"] if check_id(c) != "dtype.cpu"]))
            for p in t.glob("exercises/*/exercise.json")
        ],
        "TEST_CASE 'dtype.cpu' (autograder/checks/) is listed by no exercise.json",
    ),
    "a source that needs the CUDA toolkit is not in cuda_sources": (
        lambda t: edit_json(t / "exercises/05_fake/exercise.json", lambda d: d.update(cuda_sources=["mm16_kernel.cu"])),
        "exercises/05_fake/exercise.json: mm16_cuda.cpp includes CUDA headers but is not in cuda_sources",
    ),
    "a check the catalog does not declare": (
        lambda t: edit_json(t / "exercises/02_schema/exercise.json", lambda d: d["checks"].append("schema.nope")),
        "exercises/02_schema/exercise.json: check 'schema.nope' is not declared in autograder/metadata/checks.json",
    ),
    "a check that compares values itself": (  # issue 24's 01 rows: `abs(out - expected) > tol` is false for NaN
        lambda t: replace(
            t / "autograder/checks/custom_op_checks.cpp",
            "\n",
            "\nstatic bool close_enough(double x, double y, double tol) { return !(std::abs(x - y) > tol); }\n",
        ),
        "autograder/checks/custom_op_checks.cpp:2: a value comparison outside the judge's one comparator",
    ),
    "a worker that compares tensors itself": (
        lambda t: append(
            t / "autograder/worker/groups_mm16.py", "\n\ndef _same(x, y):\n    return torch.allclose(x, y)\n"
        ),
        "a value comparison outside the judge's one comparator (judge/compare.hpp): 'return torch.allclose(x, y)'",
    ),
}


def copy(tmp):
    for rel in COPIED:
        src, dst = ROOT / rel, tmp / rel
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def run(tree):
    r = subprocess.run([sys.executable, str(CHECKER), str(tree), JUDGE], capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout + r.stderr


failures = []
with tempfile.TemporaryDirectory(prefix="integrity-") as base:
    clean = Path(base) / "clean"
    copy(clean)
    rc, out = run(clean)
    if rc != 0:
        failures.append(f"the untouched copy fails the integrity check:\n{out}")
    for name, (plant, message) in BREAKAGES.items():
        tree = Path(base) / name.replace(" ", "_")
        copy(tree)
        plant(tree)
        rc, out = run(tree)
        ok = rc == 1 and message in out
        print(f"{'caught' if ok else 'MISSED'}: {name}")
        if not ok:
            failures.append(f"{name}: expected exit 1 and {message!r}, got exit {rc}:\n{out}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
