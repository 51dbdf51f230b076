"""Grades one planted submission with the judge and asserts it gets exactly its expected verdict.

A planted case is a folder autograder/planted/EXERCISE/CASE/ with the submission's sources (or, in expected.json,
"submission": a folder of the course, such as the exercise stub or the reference solution) and expected.json:
  fail             check ids that must FAIL; every other check must PASS (or be SKIPPED, see below)
  output_contains  strings the judge's console output must contain (what a student reads)
Checks marked "cuda" in the exercise are expected SKIPPED on a machine without a CUDA device, and otherwise
PASS or FAIL as listed: the GPU run of the same case is the stronger test.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def record_verdict(exercise, case, expected, rows, problems):
    """With COURSE_VERDICTS_DIR set, keep each case's rows and outcome (tools/verdicts_table.py tabulates them)."""
    target = os.environ.get("COURSE_VERDICTS_DIR")
    if not target:
        return
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, f"{exercise}__{case}.json"), "w") as f:
        json.dump({"exercise": exercise, "case": case, "why": expected.get("why", ""),
                   "expected_fail": sorted(expected.get("fail", [])), "problems": problems,
                   "rows": [{"id": r["id"], "status": r["status"], "detail": r["detail"]} for r in rows.values()]},
                  f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--judge", required=True)
    ap.add_argument("--course-root", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--cuda", choices=["yes", "no", "auto"], default="auto")
    args = ap.parse_args()

    case = os.path.abspath(args.case)
    exercise = os.path.basename(os.path.dirname(case))
    with open(os.path.join(case, "expected.json")) as f:
        expected = json.load(f)
    submission = os.path.join(args.course_root, expected["submission"]) if "submission" in expected else case
    with open(os.path.join(args.course_root, "exercises", exercise, "exercise.json")) as f:
        checks = json.load(f)["checks"]
    unknown = set(expected.get("fail", [])) - {c["id"] for c in checks}
    if unknown:
        sys.exit(f"expected.json names checks the exercise does not have: {sorted(unknown)}")

    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([args.judge, "--exercise", exercise, "--submission", submission, "--out", out,
                               "--no-color"], capture_output=True, text=True, timeout=1800)
        print(proc.stdout)
        print(proc.stderr, file=sys.stderr)
        with open(os.path.join(out, "rows.json")) as f:
            rows = {r["id"]: r for r in json.load(f)["rows"]}

    cuda = rows and any(r["status"] != "SKIPPED" for r in rows.values()
                        if any(c["id"] == r["id"] and c.get("cuda") for c in checks))
    problems = []
    for c in checks:
        cid = c["id"]
        seen = rows.get(cid, {}).get("status", "MISSING")
        if c.get("cuda") and not cuda:
            want = "SKIPPED"
        else:
            want = "FAIL" if cid in expected.get("fail", []) else "PASS"
        if seen != want:
            problems.append(f"{cid}: expected {want}, got {seen} ({rows.get(cid, {}).get('detail', '')})")
    want_rc = 1 if any(r["status"] == "FAIL" for r in rows.values()) else 0
    if proc.returncode != want_rc:
        problems.append(f"judge exit status {proc.returncode}, expected {want_rc}")
    for text in expected.get("output_contains", []):
        if text not in proc.stdout:
            problems.append(f"the console output does not contain {text!r}")
    record_verdict(exercise, os.path.basename(case), expected, rows, problems)
    if problems:
        print(f"PLANTED CASE {exercise}/{os.path.basename(case)} got the wrong verdict:", file=sys.stderr)
        for p in problems:
            print("  - " + p, file=sys.stderr)
        sys.exit(1)
    print(f"planted case {exercise}/{os.path.basename(case)}: verdict as expected "
          f"({sum(r['status'] == 'FAIL' for r in rows.values())} rows failed, "
          f"{sum(r['status'] == 'SKIPPED' for r in rows.values())} skipped)")


if __name__ == "__main__":
    main()
