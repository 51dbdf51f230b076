"""./course class-bench: a synthetic class (references, stubs and planted bugs, one exercise per student) graded by
batch: every score equals the one its case says, the throughput is reported; and the comparison itself catches a
score that differs."""

import shutil

from clitest import expect, run, temp_dir

from opcourse.cli.synthetic import verdict_problems

# the checker is not blind: a reference graded with one row failed, or with the wrong total, is reported
ok = {"student": "s", "exercise": "02_schema", "submission": "reference of 02_schema", "fail": []}
expect(verdict_problems(ok, {"build": "PASS"}, 0.0), "missing rows and a wrong score are reported")
expect(verdict_problems(dict(ok, fail=["build"]), {"build": "PASS"}, 1.0), "a row that should fail but passed")

tmp = temp_dir("class-bench")
# four students (exercises 01-04: a reference, a stub, a planted bug, a reference) are enough to show the batch and its
# checker; the later exercises' grades cost minutes each and their verdicts are the planted cases' to show
try:
    rc, out = run(["class-bench", "--students", "4", "--seed", "3", "--jobs", "2", "--out", str(tmp)], timeout=1500)
    expect(rc == 0 and "every score as expected" in out, "every synthetic student's score is the expected one")
    expect(
        "reference" in out and "stub" in out and "planted" in out, "the class mixes references, stubs and planted bugs"
    )
    expect("per hour" in out and "(median)" in out, "the batch's throughput is reported")
    print("ok: class-bench")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
