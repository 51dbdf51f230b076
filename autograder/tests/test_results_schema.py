"""The Gradescope schema has teeth: documents that break Gradescope's format are rejected, the documented example
and a real grade's results.json are accepted. (run_planted.py validates every planted case's results.json with it.)

    test_results_schema.py COURSE_ROOT JUDGE
"""

import copy
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    if os.environ.get("COURSE_OFFLINE"):  # an installed torch without the course's tool-chain (the lent GPU)
        print("SKIPPED: jsonschema is not installed here")
        sys.exit(77)
    raise

root, judge = sys.argv[1], sys.argv[2]
with open(os.path.join(root, "autograder", "schemas", "gradescope_results.schema.json")) as f:
    validator = jsonschema.Draft202012Validator(json.load(f))

documented = {  # the shape of the example in Gradescope's "Output format" section
    "score": 44.0,
    "execution_time": 136,
    "output": "Text relevant to the entire submission",
    "output_format": "simple_format",
    "test_output_format": "text",
    "test_name_format": "text",
    "visibility": "after_due_date",
    "stdout_visibility": "visible",
    "extra_data": {},
    "tests": [
        {
            "score": 2.0,
            "max_score": 2.0,
            "status": "passed",
            "name": "Your name here",
            "name_format": "text",
            "number": "1.1",
            "output": "Giant multiline string",
            "output_format": "text",
            "tags": ["tag1"],
            "visibility": "visible",
            "extra_data": {},
        }
    ],
    "leaderboard": [{"name": "Accuracy", "value": 0.926}, {"name": "Time", "value": 15.1, "order": "asc"}],
}


def broken(path, value=None, delete=False):
    doc = copy.deepcopy(documented)
    *parents, last = path
    target = doc
    for p in parents:
        target = target[p]
    if delete:
        del target[last]
    else:
        target[last] = value
    return doc


must_fail = {
    "status 'pass' instead of 'passed'": broken(["tests", 0, "status"], "pass"),
    "test number as an integer": broken(["tests", 0, "number"], 1),
    "score as a string": broken(["score"], "44"),
    "unknown visibility": broken(["visibility"], "public"),
    "misspelt key max_points": broken(["tests", 0, "max_points"], 2),
    "no score anywhere": broken(["tests", 0, "score"], delete=True) | {"score": None},
}
del must_fail["no score anywhere"]["score"]
problems = []
if list(validator.iter_errors(documented)):
    problems.append("the documented example is rejected: " + next(validator.iter_errors(documented)).message)
for what, doc in must_fail.items():
    if not list(validator.iter_errors(doc)):
        problems.append(f"accepted a document with {what}")
with tempfile.TemporaryDirectory() as out:  # a real grade: the reference of exercise 02 (a few seconds)
    subprocess.run(
        [
            judge,
            "--exercise",
            "02_schema",
            "--submission",
            os.path.join(root, "solutions", "02_schema"),
            "--out",
            out,
            "--course-root",
            root,
            "--no-color",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(out, "results.json")) as f:
        for e in validator.iter_errors(json.load(f)):
            problems.append(f"the judge's results.json is rejected at {list(e.path)}: {e.message}")
for p in problems:
    print("FAIL:", p)
print(
    f"schema: documented example accepted, {len(must_fail)} broken documents rejected, the judge's results.json "
    f"accepted"
    if not problems
    else f"{len(problems)} problem(s)"
)
sys.exit(1 if problems else 0)
