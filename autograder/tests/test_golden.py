"""The golden comparison of planted cases (golden.py) catches what it exists for, and only that: every committed golden
file is the view of a table made from it, a changed line number, message, caret, row or missing block fails, and what
varies between runs (paths of the machine, seconds, the linker's section offsets) does not.

usage: test_golden.py COURSE_ROOT"""

import os
import sys
import tempfile
from pathlib import Path

import golden  # beside this script

root = Path(sys.argv[1])
problems = []


def expect(cond, what):
    if not cond:
        problems.append(what)


TABLE = """
03_cpu - mm16 on the CPU, and the operator contract
  #   check          result   points   detail
  1   build          FAIL     0/1      mm16_cpu.cpp:51:50: 'k' was not declared in this scope
  2   load           FAIL     0/1      not run: the submission did not build (compiling mm16_cpu.cpp faile...

score 0/10: 0 passed, 6 failed, 0 skipped
sandbox: all 11 protections on (bubblewrap: no network, solutions not mounted; unprivileged uid; limits)

What to fix:

FAIL build: the library compiles and links
  mm16_cpu.cpp:51:50: 'k' was not declared in this scope
  expected: the exercise's sources compile and link
  seen:     compiling mm16_cpu.cpp failed (the compiler exited with status 1):
    | mm16_cpu.cpp:51:50: error: 'k' was not declared in this scope
    |    51 |           sum += static_cast<acc_t>(pa[i * sa0 + k * sa1]) * static_cast<acc_t>(pb[k * sb0 + j * sb1]);
    |       |                                                  ^
    | mm16_cuda.cpp:(.text+0x137d): undefined reference in /home/grader/course/build/x.o after 12.5 s
  hint:     Read the first compiler error: it names the file and line.

FAIL load: torch.ops.load_library loads the library
  not run: the submission did not build (compiling mm16_cpu.cpp failed (the compiler exited with status 1))
(seed 123; results in /home/grader/course/build/grades/03_cpu)
"""
PATHS = {"/home/grader/course": "@COURSE_ROOT@"}

with tempfile.TemporaryDirectory() as tmp:
    gold = os.path.join(tmp, "golden.txt")
    view = golden.normalise(golden.build_view(TABLE), PATHS)
    expect(view.splitlines()[1].endswith("'k' was not declared in this scope"), f"the view has the build row: {view}")
    expect(
        "FAIL load" not in view and "seed" not in view and "score" not in view,
        f"the view is the build row and the build's block only: {view}",
    )
    expect(
        "(.text+0x@OFFSET@)" in view and "@COURSE_ROOT@/build/x.o" in view and "@SECONDS@ s" in view,
        f"paths, seconds and section offsets are normalised: {view}",
    )
    golden.compare(view, gold, update=True)
    expect(golden.compare(view, gold, update=False) == [], "the view it wrote compares equal")

    # what varies between runs does not fail it
    other = TABLE.replace("/home/grader/course", "/srv/c2").replace("0x137d", "0x2a0").replace("12.5 s", "3 s")
    other = other.replace("seed 123", "seed 987")
    expect(
        golden.compare(golden.normalise(golden.build_view(other), {"/srv/c2": "@COURSE_ROOT@"}), gold, update=False)
        == [],
        "another machine's paths, another seed, time and offset: still equal",
    )

    # what matters does
    changes = {
        "another line": ("mm16_cpu.cpp:51:50: error", "mm16_cpu.cpp:52:50: error"),
        "another message in the row": ("0/1      mm16_cpu.cpp:51:50: 'k'", "0/1      mm16_cpu.cpp:51:50: 'j'"),
        "the caret moved": (
            "|                                                  ^",
            "|                                                 ^",
        ),
        "an include chain back": (
            "    | mm16_cpu.cpp:51:50: error",
            "    | In file included from /venv/torch/include/torch/library.h:62,\n    | mm16_cpu.cpp:51:50: error",
        ),
        "the old detail": (
            "  mm16_cpu.cpp:51:50: 'k' was not declared in this scope\n  expected",
            "  compiling mm16_cpu.cpp failed (the compiler exited with status 1)\n  expected",
        ),
        "the build passing": (
            "  1   build          FAIL     0/1      mm16_cpu.cpp:51:50: 'k' was not declared in this scope",
            "  1   build          PASS     1/1      built libmm16_cpu.so from 1 source(s) in 2.0 s",
        ),
    }
    for what, (old, new) in changes.items():
        assert old in TABLE, old
        changed = golden.normalise(golden.build_view(TABLE.replace(old, new)), PATHS)
        expect(golden.compare(changed, gold, update=False) != [], f"{what}: the comparison must fail")
    no_block = TABLE.replace("FAIL build: the library", "FAIL other: the library")
    expect(
        golden.compare(golden.normalise(golden.build_view(no_block), PATHS), gold, update=False) != [],
        "no build block under What to fix: the comparison must fail",
    )
    expect(golden.compare(view, os.path.join(tmp, "missing.txt"), update=False) != [], "no golden file: it fails")

# every committed golden file belongs to a case that asks for it, and every case that asks has one
planted = root / "autograder" / "planted"
asked = set()
for exp in planted.glob("*/*/expected.json"):
    import json

    g = json.loads(exp.read_text()).get("golden")
    if g:
        asked.add(exp.parent / g)
        expect((exp.parent / g).is_file(), f"{exp.parent.relative_to(root)} asks for {g}, which is missing")
for g in planted.glob("*/*/golden.txt"):
    expect(g in asked, f'{g.relative_to(root)} is compared by no case (expected.json has no "golden")')

for p in problems:
    print("FAIL:", p)
print(f"golden comparison: {len(problems)} problem(s); {len(asked)} planted case(s) with golden output")
sys.exit(1 if problems else 0)
