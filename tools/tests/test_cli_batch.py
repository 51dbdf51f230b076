"""./course batch: a class folder graded in parallel; gradebook, merged results.json, feedback; re-runs reuse. The
gradebook shows the points a grade could not grade here and the protections that were off; --require-cuda fails a
grade that could not run its CUDA rows."""

import csv
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
from clitest import SOURCE, expect, max_points, metadata, run, temp_dir

# 04_cuda's points, from its metadata: those of the rows that need a CUDA device, and the rest
CUDA_TOTAL = max_points("04_cuda")
NEEDS_GPU = int(sum(c["points"] for c in metadata("04_cuda")["checks"] if c["cuda"]))
HERE = CUDA_TOTAL - NEEDS_GPU

GRADESCOPE = jsonschema.Draft202012Validator(
    json.loads((SOURCE / "autograder" / "schemas" / "gradescope_results.schema.json").read_text())
)

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
    expect(
        [r["student"] for r in book] == ["alice", "bob", "carol", "mallory", "trudy", "victor"],
        "one gradebook row per student",
    )
    by = {r["student"]: r for r in book}
    for st in ("mallory", "trudy", "victor"):
        expect(by[st]["02_schema"] == "0", f"{st}: a link to the solutions scores 0")
        fb = (out / "students" / st / "feedback.md").read_text()
        expect("symbolic link" in fb, f"{st}: the feedback says the folder is a link")
    FULL = str(max_points("02_schema"))
    expect(
        by["alice"]["02_schema"] == FULL and by["alice"]["total"] == FULL and by["alice"]["max"] == FULL,
        "the reference solution gets full marks",
    )
    expect(float(by["bob"]["02_schema"]) < float(FULL), "the stub does not")
    expect(by["carol"]["02_schema"] == "0", "no submission scores 0")
    for st in ("alice", "bob", "carol", "mallory", "trudy", "victor"):
        res = json.loads((out / "students" / st / "results.json").read_text())
        expect(
            {"score", "tests"} <= res.keys() and res["extra_data"]["max_score"] == max_points("02_schema"),
            f"{st}: Gradescope results",
        )
        errors = list(GRADESCOPE.iter_errors(res))
        expect(not errors, f"{st}: results.json in Gradescope's format ({errors[0].message if errors else 'valid'})")
        expect(
            all({"name", "score", "max_score", "status"} <= t.keys() for t in res["tests"]) and res["tests"],
            f"{st}: tests[] rows",
        )
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
    expect(
        all(by[st]["not_graded"] == "0" and by[st]["not_graded_why"] == "" for st in by),
        "02_schema has no CUDA rows: every point graded",
    )
    off_here = sorted(
        p["id"]
        for p in json.loads(
            subprocess.run([str(build / "judge"), "--protections"], capture_output=True, text=True, check=True).stdout
        )
        if not p["on"]
    )
    expect(
        by["alice"]["protections_off"] == " ".join(off_here),
        f"the gradebook lists the protections off here ({off_here})",
    )

    # protections off: the gradebook says which, for each student graded so, and batch warns
    out_off = tmp / "grades-sandbox-off"
    rc, log = run(
        ["batch", str(subs), "--out", str(out_off), "--exercises", "02_schema"], env=dict(env, COURSE_SANDBOX="off")
    )
    book = {r["student"]: r for r in csv.DictReader(open(out_off / "gradebook.csv"))}
    expect(
        rc == 0 and {"sandbox", "no_network", "solutions_hidden"} <= set(book["alice"]["protections_off"].split()),
        "graded with the sandbox off: the gradebook's protections_off column says so",
    )
    expect("WARNING: graded with sandbox protections off: " in log, "batch warns when protections were off")

    # a CUDA exercise: the points of the CUDA rows a machine without a GPU cannot grade are in the gradebook
    cuda_subs = tmp / "cuda-class"
    shutil.copytree(SOURCE / "solutions" / "04_cuda", cuda_subs / "dave" / "04_cuda")
    out_cuda = tmp / "grades-cuda"
    cuda_args = ["batch", str(cuda_subs), "--out", str(out_cuda), "--exercises", "04_cuda"]
    rc, log = run(cuda_args, env=env)
    rows = json.loads((out_cuda / "students" / "dave" / "04_cuda" / "rows.json").read_text())
    missed = rows["not_graded"]["points"]  # NEEDS_GPU without a GPU, 0 with one
    dave = next(csv.DictReader(open(out_cuda / "gradebook.csv")))
    expect(rc == 0 and float(dave["not_graded"]) == missed, f"the gradebook's not_graded is rows.json's ({missed})")
    res = json.loads((out_cuda / "students" / "dave" / "results.json").read_text())
    expect(res["extra_data"]["not_graded"]["points"] == missed, "the merged results.json counts them too")
    expect(not list(GRADESCOPE.iter_errors(res)), "and stays in Gradescope's format")
    if missed:
        expect(
            missed == NEEDS_GPU
            and dave["not_graded_why"] == f"04_cuda: {NEEDS_GPU} needs a CUDA device"
            and dave["04_cuda"] == str(HERE)
            and dave["max"] == str(HERE),
            f"without a GPU: {HERE}/{HERE}, and {NEEDS_GPU} points not graded",
        )
        fb = (out_cuda / "students" / "dave" / "feedback.md").read_text()
        expect(
            f"{NEEDS_GPU} more points not graded here: {NEEDS_GPU} needs a CUDA device" in fb
            and f"{HERE} of {CUDA_TOTAL} points graded" in fb,
            "the feedback says which points were not graded",
        )
        rc, log = run(cuda_args + ["--require-cuda"], env=env)
        dave = next(csv.DictReader(open(out_cuda / "gradebook.csv")))
        expect(rc == 1 and "--require-cuda makes them fail" in log, "--require-cuda: the batch fails without a GPU")
        expect(
            dave["04_cuda"] == str(HERE) and dave["max"] == str(CUDA_TOTAL) and dave["not_graded"] == str(NEEDS_GPU),
            f"--require-cuda: the CUDA rows fail as not graded ({HERE}/{CUDA_TOTAL})",
        )
        rc, log = run(cuda_args + ["--require-cuda"], env=env)
        expect(rc == 1 and "(0 unchanged)" in log, "an incomplete grade is not reused: the next run grades it again")
    else:
        rc, log = run(cuda_args + ["--require-cuda"], env=env)
        expect(rc == 0, "--require-cuda with a GPU: every row graded, the batch succeeds")
    print("ok: batch")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
