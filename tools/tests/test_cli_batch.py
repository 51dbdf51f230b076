"""./course batch: a class folder graded in parallel; gradebook, merged results.json, feedback; re-runs reuse."""
import csv
import json
import os
import shutil
import sys
import time
from pathlib import Path

import jsonschema
from clitest import SOURCE, expect, run, temp_dir

GRADESCOPE = jsonschema.Draft202012Validator(
    json.loads((SOURCE / "autograder" / "schemas" / "gradescope_results.schema.json").read_text()))

build = Path(sys.argv[1])
tmp = temp_dir("batch")
try:
    subs = tmp / "class"
    shutil.copytree(SOURCE / "solutions" / "02_schema", subs / "alice" / "02_schema")
    shutil.copytree(SOURCE / "exercises" / "02_schema", subs / "bob" / "02_schema")
    (subs / "carol").mkdir(parents=True)  # submitted nothing
    # links are refused, never followed: a student folder that is a link to the solutions, an exercise folder that is
    # one, and an exercises/ folder that is one (the judge alone would follow a link above the folder it opens)
    os.symlink(SOURCE / "solutions", subs / "mallory")
    (subs / "trudy").mkdir()
    os.symlink(SOURCE / "solutions" / "02_schema", subs / "trudy" / "02_schema")
    (subs / "victor").mkdir()
    os.symlink(SOURCE / "solutions", subs / "victor" / "exercises")
    out = tmp / "grades"
    env = dict(os.environ, COURSE_BUILD_DIR=str(build))
    args = ["batch", str(subs), "--jobs", "2", "--out", str(out), "--exercises", "02_schema"]
    rc, log = run(args, env=env)
    expect(rc == 0, "batch succeeds")
    expect("6/6" in log and "[" in log, "a progress bar counts the grades")
    book = list(csv.DictReader(open(out / "gradebook.csv")))
    expect([r["student"] for r in book] == ["alice", "bob", "carol", "mallory", "trudy", "victor"],
           "one gradebook row per student")
    by = {r["student"]: r for r in book}
    for st in ("mallory", "trudy", "victor"):
        expect(by[st]["02_schema"] == "0", f"{st}: a link to the solutions scores 0")
        fb = (out / "students" / st / "feedback.md").read_text()
        expect("symbolic link" in fb, f"{st}: the feedback says the folder is a link")
    expect(by["alice"]["02_schema"] == "8" and by["alice"]["total"] == "8" and by["alice"]["max"] == "8",
           "the reference solution gets full marks")
    expect(float(by["bob"]["02_schema"]) < 8, "the stub does not")
    expect(by["carol"]["02_schema"] == "0", "no submission scores 0")
    for st in ("alice", "bob", "carol", "mallory", "trudy", "victor"):
        res = json.loads((out / "students" / st / "results.json").read_text())
        expect({"score", "tests"} <= res.keys() and res["extra_data"]["max_score"] == 8, f"{st}: Gradescope results")
        errors = list(GRADESCOPE.iter_errors(res))
        expect(not errors, f"{st}: results.json in Gradescope's format ({errors[0].message if errors else 'valid'})")
        expect(all({"name", "score", "max_score", "status"} <= t.keys() for t in res["tests"]) and res["tests"],
               f"{st}: tests[] rows")
        expect(abs(sum(t["score"] for t in res["tests"]) - res["score"]) < 1e-9, f"{st}: score = sum of its tests")
        fb = (out / "students" / st / "feedback.md").read_text()
        expect(f"# Feedback for {st}" in fb and "02_schema" in fb, f"{st}: feedback report")
    expect("FAIL" in (out / "students" / "bob" / "feedback.md").read_text(), "bob's feedback shows his failures")
    expect("not submitted" in (out / "students" / "carol" / "feedback.md").read_text(), "carol's says why 0")

    t0 = time.monotonic()
    rc, log = run(args, env=env)
    expect(rc == 0 and "(6 unchanged)" in log and time.monotonic() - t0 < 20, "a re-run reuses every grade")
    with open(subs / "bob" / "02_schema" / "mm16_schema.cpp", "a") as fh:
        fh.write("// bob edits\n")
    rc, log = run(args, env=env)
    expect(rc == 0 and "(5 unchanged)" in log, "a re-run regrades only what changed")
    print("ok: batch")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
