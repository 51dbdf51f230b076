"""ctest mutants/entries: opcourse/mutation/ is kept like code. Every entry of equivalent.json and
missing_checks.json is a patch in the planted-case format that still applies to its reference solution
(planted_cases.patched_files, the rule every planted patch follows: each OLD occurs exactly once), is one of the
mutants `./course mutants` generates today with the entry's "generator" (course, the default, or universalmutator,
installed on first use) (an entry the generator no longer makes is stale), names its reason,
and sits in one list only; every name in gpu_only.json is still a def or class of its file. It also shows that a
broken entry is caught.

usage: test_mutant_entries.py COURSE_ROOT"""

import ast
import json
import os
import sys
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve()
os.environ["COURSE_ROOT"] = str(ROOT)
from opcourse import planted as planted_cases  # noqa: E402  (after COURSE_ROOT: the commands' root is ROOT)
from opcourse.mutation import mutants, mutate  # noqa: E402

problems: list[str] = []
eq, missing, read_problems = mutants.listed(ROOT)
problems += read_problems

generated: dict[tuple[str, str], dict[str, mutate.Mutant]] = {}


def generated_ids(ex: str, generator: str) -> dict[str, mutate.Mutant]:
    if (ex, generator) not in generated:
        base = ROOT / "solutions" / ex
        files = sorted(  # a stable-ABI package's LIBRARY/NAME.py included
            str(p.relative_to(base))
            for p in base.rglob("*")
            if p.is_file()
            and p.name.endswith(mutate.CPP_SUFFIXES + mutate.PY_SUFFIXES)
            and "__pycache__" not in p.parts
        )
        generated[ex, generator] = {m.id: m for m in mutants.mutants_of(ex, files, generator)}
    return generated[ex, generator]


for name, entries, reason_key in (("equivalent.json", eq, "reason"), ("missing_checks.json", missing, "missing")):
    for mid, entry in entries.items():
        where = f"opcourse/mutation/{name}: {entry.get('label', mid)}"
        if len(entry["patch"]) != 1 or len(next(iter(entry["patch"].values()))) != 1:
            problems.append(f"{where}: a mutant is one edit of one file ({{FILE: [[OLD, NEW]]}})")
        if not str(entry.get(reason_key, "")).strip():
            problems.append(f'{where}: no "{reason_key}"')
        generator = entry.get("generator", "course")  # who made it: `./course mutants --generator`
        if generator not in mutants.GENERATORS:
            problems.append(f"{where}: unknown generator {generator!r} ({', '.join(mutants.GENERATORS)})")
        elif mid not in generated_ids(entry["exercise"], generator):
            problems.append(
                f"{where}: not a mutant the {generator} generator makes from solutions/{entry['exercise']} "
                "any more (the reference or the generator changed): regrade and list it again, or remove "
                "it"
            )
for mid in set(eq) & set(missing):
    problems.append(f"{eq[mid].get('label', mid)}: listed both as equivalent and as a missing check")

gpu = json.loads((ROOT / mutants.LISTS / "gpu_only.json").read_text())
for ex, files in gpu.get("exercises", {}).items():
    for fname, names in files.items():
        path = ROOT / "solutions" / ex / fname
        if not path.is_file():
            problems.append(f"opcourse/mutation/gpu_only.json: solutions/{ex}/{fname} does not exist")
            continue
        defined = {
            n.name
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        }
        for n in names:
            if n not in defined:
                problems.append(f"opcourse/mutation/gpu_only.json: solutions/{ex}/{fname} defines no {n}")

# ...and a broken entry is caught: an OLD that is not in the reference, and one that occurs twice
for old, what in (("this text is in no reference solution", "absent"), ("at::Tensor", "not unique")):
    entry = {"exercise": "03_cpu", "patch": {"mm16_cpu.cpp": [[old, "x"]]}, "reason": "test"}
    try:
        mutants.entry_id(entry, ROOT)
        problems.append(f"an entry whose OLD is {what} was accepted: entry_id must raise")
    except planted_cases.PlantedError:
        pass

print(
    f"{len(eq)} equivalent, {len(missing)} known missing checks, "
    f"{sum(len(v) for f in gpu.get('exercises', {}).values() for v in f.values())} GPU-only names"
)
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
