"""The degraded path (as on the lent GPU machine, which has no bubblewrap), forced here with COURSE_SANDBOX=off:
the reference solution still gets full marks, and the console, rows.json, results.json and junit.xml all say which
protections are off. Nothing is degraded silently."""

import json
import os
import subprocess
import sys
import tempfile

judge, root = sys.argv[1], sys.argv[2]
env = dict(os.environ, COURSE_SANDBOX="off")
problems = []
with tempfile.TemporaryDirectory() as out:
    p = subprocess.run(
        [
            judge,
            "--exercise",
            "02_schema",
            "--submission",
            os.path.join(root, "solutions", "02_schema"),
            "--out",
            out,
            "--no-color",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    print(p.stdout, p.stderr)
    if p.returncode != 0:
        problems.append(f"the reference did not pass with the sandbox off (exit {p.returncode})")
    for text in (
        "WARNING: graded with protections OFF",
        "OFF  sandbox:",
        "OFF  no_network:",
        "OFF  solutions_hidden:",
        "switched off by COURSE_SANDBOX=off",
    ):
        if text not in p.stdout:
            problems.append(f"console output lacks {text!r}")
    rows = json.load(open(os.path.join(out, "rows.json")))
    state = {x["id"]: x["on"] for x in rows.get("protections", [])}
    for pid in ("sandbox", "no_network", "solutions_hidden", "read_only_system"):
        if state.get(pid) is not False:
            problems.append(f"rows.json protections: {pid} is {state.get(pid)}, expected off (false)")
    if not all(state.get(pid) for pid in ("wall_clock_timeout", "output_cap")):
        problems.append("rows.json: the protections that need no sandbox should still be on")
    results = json.load(open(os.path.join(out, "results.json")))
    if "WARNING: protections off: sandbox" not in results.get("output", ""):
        problems.append("results.json output does not warn")
    if not any(x["id"] == "sandbox" and not x["on"] for x in results.get("extra_data", {}).get("protections", [])):
        problems.append("results.json extra_data.protections does not list the sandbox as off")
    junit = open(os.path.join(out, "junit.xml")).read()
    if 'name="protection.sandbox" value="off' not in junit:
        problems.append("junit.xml has no protection.sandbox=off property")
if problems:
    sys.exit("degraded grading is not loud enough:\n  - " + "\n  - ".join(problems))
print("with the sandbox off, every report says which protections are off, and the reference still passes")
