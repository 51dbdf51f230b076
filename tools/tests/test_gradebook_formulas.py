"""CSV injection: a student folder named like a spreadsheet formula ('=HYPERLINK(...)', '+1', '-1', '@SUM(A1)', a
leading tab or carriage return) is an inert text cell in gradebook.csv, and the name is intact in the student's
results.json and feedback.md. The students submit nothing, so no judge runs: the gradebook is what is tested."""

import csv
import json
import os
import sys
from pathlib import Path

from clitest import expect, run, temp_dir

from opcourse.cli import spreadsheet

NAMES = ['=HYPERLINK("x.example","click")', "=1+2", "+1+2", "-2+3", "@SUM(A1:A2)", "\tcmd", "\rcmd", "plain"]

# the rule itself, one leading character at a time (and what must stay as it is)
for name in NAMES[:-1]:
    expect(spreadsheet.inert(name) == "'" + name, f"{name!r} is made inert")
for cell in ("plain", "11", "0", "4.5", "", "a=b", "04_cuda: 12 needs a CUDA device"):
    expect(spreadsheet.inert(cell) == cell, f"{cell!r} is written unchanged")

build = Path(sys.argv[1])
tmp = temp_dir("gradebook_formulas")
subs = tmp / "class"
for name in NAMES:
    (subs / name).mkdir(parents=True)
out = tmp / "grades"
rc, log = run(
    ["batch", str(subs), "--jobs", "1", "--out", str(out), "--exercises", "02_schema"],
    env=dict(os.environ, COURSE_BUILD_DIR=str(build)),
)
expect(rc == 0, "batch succeeds")
raw = open(out / "gradebook.csv", newline="").read()
book = list(csv.DictReader(open(out / "gradebook.csv", newline="")))
cells = [r["student"] for r in book]
expect(sorted(cells) == sorted(spreadsheet.inert(n) for n in NAMES), f"every name has its row, made inert: {cells!r}")
for cell in cells:
    expect(not cell.startswith(spreadsheet.FORMULA_LEADS), f"no cell of gradebook.csv starts a formula: {cell!r}")
for line in raw.splitlines()[1:]:
    expect(not line.lstrip('"').startswith(spreadsheet.FORMULA_LEADS[:4]), f"the raw line starts no formula: {line!r}")
for name in NAMES:
    res = json.loads((out / "students" / name / "results.json").read_text())
    text = json.dumps(res)
    feedback = open(out / "students" / name / "feedback.md", newline="").read()
    expect(f"# Feedback for {name}" in feedback, f"{name!r}: the feedback names the student as they are")
    expect("'" + name not in feedback and "'" + name not in text, f"{name!r}: no quote mark added outside the CSV")
print("gradebook_formulas: every check passed")
