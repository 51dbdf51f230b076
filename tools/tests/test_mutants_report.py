"""ctest mutants/report: how ./course mutants settles and reports a run, without grading anything.

- A GPU-only mutant whose only SKIPPED rows are the ones the reference's grade SKIPPED too (guard.cuda on a one-GPU
  machine) survived there; without a GPU, or with another row SKIPPED, it stays 'not judged'.
- --budget: a run whose time is spent before a mutant starts marks it 'not run' and still writes every report.

usage: test_mutants_report.py BUILD_DIR"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from opcourse.mutation import mutants
from opcourse.reports import Report, Row

SOURCE = Path(__file__).resolve().parents[2]

failures: list[str] = []


def expect(cond, msg):
    if not cond:
        failures.append(msg)


rows = Report("04_cuda", rows=[Row("forward.cuda", "PASS"), Row("guard.cuda", "SKIPPED")])
status, _, _ = mutants.classify(rows, gpu_only=True)
expect(status == "not judged", f"a GPU-only mutant with a SKIPPED row is first 'not judged', got {status}")
graded = {"status": status, "rows": {r.id: r.status for r in rows.rows}, "detail": ""}
on_gpu = mutants.judged_beside_reference(graded, {"guard.cuda"})
expect(
    on_gpu["status"] == "survived" and "guard.cuda" in on_gpu["detail"],
    f"on one GPU, guard.cuda SKIPPED for the reference too: survived, naming it; got {on_gpu}",
)
expect(
    mutants.judged_beside_reference(graded, set())["status"] == "not judged",
    "without a GPU (no reference rows to compare with) it must stay 'not judged'",
)
other = {**graded, "rows": {**graded["rows"], "forward.cuda": "SKIPPED"}}
expect(
    mutants.judged_beside_reference(other, {"guard.cuda"})["status"] == "not judged",
    "a row SKIPPED for the mutant but run for the reference must keep it 'not judged'",
)

# --budget: spent before the first mutant (02 has three, judged on CPU), every one 'not run', the reports written
with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, COURSE_BUILD_DIR=sys.argv[1])
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "opcourse.cli",
            "mutants",
            "02",
            "--no-baseline",
            "--budget",
            "0.000001",
            "--out",
            tmp,
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    out = r.stdout + r.stderr
    expect(r.returncode == 0, f"mutants --budget exited {r.returncode}:\n{out[-2000:]}")
    try:
        report = json.loads((Path(tmp) / "02_schema.json").read_text())
        statuses = {m["status"] for m in report["mutants"]}
        expect(statuses == {"not run"}, f"every mutant 'not run' once the budget is spent, got {statuses}")
        summary = (Path(tmp) / "summary.md").read_text()
        expect("not run: --budget" in summary, f"summary.md does not say how many were not run:\n{summary}")
        expect("not run" in (Path(tmp) / "02_schema.md").read_text(), "02_schema.md does not list the mutants not run")
    except (OSError, ValueError, KeyError) as e:
        failures.append(f"the reports of a budget-stopped run are missing or unreadable ({e}):\n{out[-2000:]}")

for f in failures:
    print("FAIL:", f)
print("mutants/report: " + ("ok" if not failures else f"{len(failures)} problem(s)"))
sys.exit(1 if failures else 0)
