"""Grades one planted submission with the judge and asserts it gets exactly its expected verdict.

A planted case is a folder autograder/planted/EXERCISE/CASE/ with the submission's sources (or, in expected.json,
"submission": a folder of the course, such as the exercise stub or the reference solution) and expected.json:
  fail                 check ids that must FAIL; every other check must PASS (or be SKIPPED, see below)
  not_graded           check ids that must be SKIPPED as not graded (the machine's fault, say), whatever the machine
  output_contains      strings the judge's console output must contain (what a student reads)
  output_contains_with_cuda  the same, checked only where a CUDA device is visible (GPU-only verdicts)
  output_contains_without_cuda  the same, checked only where none is (e.g. the line of the points not graded)
  output_not_contains  strings that must appear neither in the console output nor in any report file the judge
                       wrote (table.txt, junit.xml, results.json, rows.json): forged values never reach a report
  needs                sandbox protections (ids of `judge --protections`) the case relies on: where one is off
                       the case is SKIPPED (exit 77), loudly, before it runs
  judge_args           extra judge options (e.g. a shorter --worker-timeout); with --require-cuda, the checks marked
                       "cuda" are expected to FAIL (not graded) on a machine without a CUDA device
  judge_env            {"NAME": "VALUE"} (templated) added to the judge's environment: a variable of the grading
                       host, which no process running submission code may see
  submission, patch, template, links, hardlinks, fifos, submission_link: how the submission is made
                       (opcourse/planted.py, shared with CMake and the integrity check)
  listener             run a TCP listener on 127.0.0.1:@PORT@; the case fails if anything connects to it
  absent_after         paths (templated) that must not exist after the grade
  settle_s             seconds to wait after the judge returns before the checks (for delayed mischief)
  worker_server        true: every CPU worker run of the grade ran on the worker server (rows.json "timeline"),
                       where this machine can run one (a case that tests the server must not pass by falling back
                       to fresh sandboxes)
  max_output_bytes     bound on the judge's console output
  max_out_mb           bound on what the grade's --out folder holds on disk after the grade (its reports, build
                       logs and the runs' small files: what the submission wrote is removed)
  max_judge_rss_mb     bound on the judge's own peak memory (rows.json's judge_peak_rss_mb)
  golden               a file of the case ("golden.txt"): the build row and the build's block under "What to fix",
                       normalised, must be its text word for word (golden.py; COURSE_UPDATE_GOLDEN=1 rewrites it);
                       and results.json's and rows.json's build output must lead with the row's detail
  threat, defence, known_limit: documentation, collected into autograder/THREATS.md
Always checked: exactly one "score" line (the judge's); every report (table.txt, junit.xml, results.json, rows.json)
is written and readable, rows.json is the final one and matches autograder/schemas/rows.schema.json (which the tools
read it with); results.json validates against Gradescope's format
(autograder/schemas/gradescope_results.schema.json) and agrees with rows.json; the points not graded (SKIPPED rows)
are counted in rows.json and results.json, and said in the console and results.json's output; no
process of the grade (the sandbox uid, or anything whose command line or folder names the output folder) is left.
Checks that need a part of the course's own environment (checks.json "needs": the older torch, the audit tools) are
expected SKIPPED where the judge's toolchain.json shows it missing (the GPU machine's own torch), and otherwise as
listed. Checks marked "cuda" in the exercise are expected SKIPPED on a machine without a CUDA device (FAIL with
--require-cuda; and those that need "devices": N SKIPPED on one with fewer), and otherwise PASS or FAIL as listed: the
GPU run of the same case is the stronger test.
The outcome (with every row) is also written to RESULTS_DIR/EXERCISE/CASE.json, read by threats.py (THREATS.md) and
tools/verdicts_table.py (the GPU evidence tables).
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from xml.etree import ElementTree

import golden  # beside this script
from opcourse import metadata as course_metadata
from opcourse import planted as planted_cases

SKIP = 77


def leftover_processes(uids, out):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/status") as f:
                status = f.read()
            puid = int(next(l for l in status.splitlines() if l.startswith("Uid:")).split()[1])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                cwd = ""
        except (OSError, StopIteration):
            continue
        if puid in uids or out in cmd or cwd.startswith(out):
            found.append(f"pid {pid} uid {puid}: {cmd[:120]}")
    return found


def record(results_dir, exercise, case, outcome):
    if not results_dir:
        return
    os.makedirs(os.path.join(results_dir, exercise), exist_ok=True)
    with open(os.path.join(results_dir, exercise, case + ".json"), "w") as f:
        json.dump(outcome, f, indent=2)


def schema_problems(
    results, course_root, schema_file="gradescope_results.schema.json", breaks="results.json breaks Gradescope's format"
):
    """results.json against Gradescope's documented format (rows.json against the judge's own, with its
    schema_file); jsonschema is in the course's pinned tool-chain."""
    try:
        import jsonschema
    except ImportError:
        if os.environ.get("COURSE_OFFLINE"):  # a machine with an installed torch and no venv (the lent GPU)
            print(f"note: jsonschema is not installed here: not validated against {schema_file}")
            return []
        return ["jsonschema is missing: the course's requirements install it (run tools/setup.sh)"]
    with open(os.path.join(course_root, "autograder", "schemas", schema_file)) as f:
        schema = json.load(f)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(results), key=lambda e: list(e.path))
    return [f"{breaks} at {'/'.join(map(str, e.path)) or '(top)'}: {e.message}" for e in errors]


def not_graded_problems(rows_json, results, console):
    """The points this machine did not grade never vanish from the totals: rows.json and results.json count them,
    by reason, and the console and results.json's summary line say so."""
    problems = []
    points, why = 0.0, {}
    for r in rows_json["rows"]:
        if r["status"] == "SKIPPED" and not r.get("not_graded"):
            problems.append(f"{r['id']}: SKIPPED without a reason for the totals (rows.json not_graded)")
        if r["status"] != "PASS" and r.get("not_graded"):
            points += r["max_points"]
            why[r["not_graded"]] = why.get(r["not_graded"], 0.0) + r["max_points"]
    for where, doc in (("rows.json", rows_json), ("results.json extra_data", results.get("extra_data", {}))):
        ng = doc.get("not_graded")
        if not isinstance(ng, dict) or abs(ng.get("points", -1) - points) > 1e-9 or ng.get("why") != why:
            problems.append(f"{where} not_graded is {ng!r}; the rows say {{'points': {points}, 'why': {why}}}")
    if points > 0:
        total = sum(r["max_points"] for r in rows_json["rows"])
        line = f"{total - points:g} of {total:g} points graded: "
        if line not in console:
            problems.append(f"the console does not say {line!r} (the points not graded vanish from the total)")
        if line not in results.get("output", ""):
            problems.append(f"results.json's output does not say {line!r}")
    return problems


def environment_lacks(judge):
    """The parts of the course's own environment (checks.json "needs") that this machine's lacks, read from the
    toolchain.json beside the judge: the older torch's python, the audit tools in the worker's python."""
    toolchain = json.loads((Path(judge).resolve().parent / "toolchain.json").read_text())
    lacks = set()
    if not toolchain.get("older_torch_python"):
        lacks.add("older_torch")
    tools = subprocess.run([toolchain["python"], "-c", "import torch_abi_audit, abi3audit"], capture_output=True)
    if tools.returncode != 0:
        lacks.add("audit_tools")
    return lacks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--judge", required=True)
    ap.add_argument("--course-root", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--results-dir", default="")
    ap.add_argument("--cuda", choices=["yes", "no", "auto"], default="auto")
    ap.add_argument(
        "--work-dir",
        default="",
        help="where the case is prepared and graded (default: a new temporary "
        "folder); a fixed one lets the case's compiler cache carry over to the next run",
    )
    args = ap.parse_args()

    case = os.path.abspath(args.case)
    name = os.path.basename(case)
    exercise = os.path.basename(os.path.dirname(case))
    course_root = os.path.abspath(args.course_root)
    with open(os.path.join(case, "expected.json")) as f:
        expected = json.load(f)
    checks = course_metadata.load(exercise, course_root)["checks"]
    unknown = set(expected.get("fail", [])) - {c["id"] for c in checks}
    if unknown:
        sys.exit(f"expected.json names checks the exercise does not have: {sorted(unknown)}")

    protections = json.loads(
        subprocess.run(
            [args.judge, "--protections", "--course-root", course_root], capture_output=True, text=True, check=True
        ).stdout
    )
    state = {p["id"]: p for p in protections}
    missing = [n for n in expected.get("needs", []) if n not in state]
    if missing:
        sys.exit(f"expected.json needs protections the judge does not know: {missing}")
    off = [n for n in expected.get("needs", []) if not state[n]["on"]]
    if off:
        print(
            f"SKIPPED planted case {exercise}/{name}: it relies on protections that are OFF here: "
            + "; ".join(f"{n} ({state[n]['detail']})" for n in off)
        )
        record(args.results_dir, exercise, name, {"outcome": "skipped", "off": off})
        sys.exit(SKIP)

    if args.work_dir:
        work = os.path.abspath(args.work_dir)
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    else:
        work = tempfile.mkdtemp(prefix="planted-")
    listener = None
    try:
        subs = {}
        if expected.get("listener"):
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)
            listener.setblocking(False)
            subs["@PORT@"] = str(listener.getsockname()[1])
        try:
            submission = str(planted_cases.materialize(course_root, case, work, subs))
        except planted_cases.PlantedError as e:
            sys.exit(f"planted case {exercise}/{name}: {e}")
        subs.update({"@COURSE_ROOT@": course_root, **planted_cases.substitutions(work)})
        out = os.path.join(work, "out")
        started = time.monotonic()
        judge_env = dict(
            os.environ, **{k: planted_cases.substitute(v, subs) for k, v in expected.get("judge_env", {}).items()}
        )
        judge_args = expected.get("judge_args", [])
        proc = subprocess.run(
            [
                args.judge,
                "--exercise",
                exercise,
                "--submission",
                submission,
                "--out",
                out,
                "--course-root",
                course_root,
                "--no-color",
                *judge_args,
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            errors="replace",
            env=judge_env,
        )
        seconds = time.monotonic() - started
        print(proc.stdout)
        print(proc.stderr, file=sys.stderr)
        time.sleep(expected.get("settle_s", 0))
        reports = {}
        problems = []
        for fname in ("table.txt", "junit.xml", "results.json", "rows.json"):
            try:
                with open(os.path.join(out, fname), errors="replace") as f:
                    reports[fname] = f.read()
            except OSError:
                reports[fname] = ""
                problems.append(f"the judge wrote no {fname}")
        try:
            ElementTree.fromstring(reports["junit.xml"])
        except ElementTree.ParseError as e:
            problems.append(f"junit.xml is not well-formed XML: {e}")
        if not any(l.startswith("score ") for l in reports["table.txt"].splitlines()):
            problems.append("table.txt has no score line")
        try:
            rows_json = json.loads(reports["rows.json"])
            rows = {r["id"]: r for r in rows_json["rows"]}
        except (ValueError, KeyError) as e:
            rows_json, rows = {}, {}
            problems.append(f"rows.json unreadable: {e}")

        if rows_json:  # the tools read it through this schema (opcourse/reports.py)
            problems += schema_problems(rows_json, course_root, "rows.schema.json", "rows.json breaks its schema")
        if rows_json.get("final") is not True:
            problems.append('rows.json is not the final one ("final": true): the judge stopped before its reports')
        # a CUDA row graded here (not SKIPPED, and not FAILed as not graded by --require-cuda): a device was visible
        cuda = rows and any(
            r["status"] != "SKIPPED" and not r.get("not_graded")
            for r in rows.values()
            if any(c["id"] == r["id"] and c.get("cuda") for c in checks)
        )
        lacking = environment_lacks(args.judge)
        devices = 0
        if cuda and any(c.get("devices", 1) > 1 for c in checks):  # rows that need several GPUs
            import torch

            devices = torch.cuda.device_count()
        for c in checks:
            cid = c["id"]
            seen = rows.get(cid, {}).get("status", "MISSING")
            if c.get("cuda") and not cuda:
                want = "FAIL" if "--require-cuda" in judge_args else "SKIPPED"
            elif c.get("cuda") and c.get("devices", 1) > devices > 0:
                want = "SKIPPED"  # fewer GPUs here than the check needs: never passed, never failed
            elif cid in expected.get("not_graded", []) or c.get("needs") in lacking:
                want = "SKIPPED"
            else:
                want = "FAIL" if cid in expected.get("fail", []) else "PASS"
            if seen != want:
                problems.append(f"{cid}: expected {want}, got {seen} ({rows.get(cid, {}).get('detail', '')})")
        want_rc = 1 if any(r["status"] == "FAIL" for r in rows.values()) else 0
        if proc.returncode != want_rc:
            problems.append(f"judge exit status {proc.returncode}, expected {want_rc}")
        for text in expected.get("output_contains", []) + expected.get(
            "output_contains_with_cuda" if cuda else "output_contains_without_cuda", []
        ):
            if text not in proc.stdout:
                problems.append(f"the console output does not contain {text!r}")
        for text in [planted_cases.substitute(t, subs) for t in expected.get("output_not_contains", [])]:
            for where, content in [("console output", proc.stdout), *reports.items()]:
                if text in content:
                    problems.append(f"the {where} contains {text!r} (a forged value reached a report)")
        # Always: the judge's own score line, once, agreeing with the machine-readable reports.
        score_lines = [l for l in proc.stdout.splitlines() if l.startswith("score ")]
        if len(score_lines) != 1:
            problems.append(f"expected exactly one 'score' line in the console output, saw {score_lines}")
        results = {}
        try:
            results = json.loads(reports["results.json"])
            problems += schema_problems(results, course_root)
            points = sum(r["points"] for r in rows.values() if r["status"] == "PASS")
            if abs(results["score"] - points) > 1e-9 or abs(rows_json["score"] - points) > 1e-9:
                problems.append(
                    f"results.json score {results['score']} / rows.json score {rows_json['score']} "
                    f"disagree with the passed rows ({points})"
                )
            problems += not_graded_problems(rows_json, results, proc.stdout)
        except (ValueError, KeyError, TypeError) as e:
            problems.append(f"results.json unreadable: {e}")
        if expected.get("golden"):
            view = golden.normalise(
                golden.build_view(proc.stdout),
                {course_root: "@COURSE_ROOT@", work: "@WORK@", sysconfig.get_paths()["purelib"]: "@SITE_PACKAGES@"},
            )
            problems += golden.compare(view, os.path.join(case, expected["golden"]))
            # the same first error where Gradescope (results.json's output) and tools (rows.json) read it
            detail = rows.get("build", {}).get("detail", "")
            outputs = [t.get("output", "") for t in results.get("tests", []) if t.get("name", "").startswith("build:")]
            if not outputs or outputs[0].split("\n")[0] != detail:
                problems.append(f"results.json's build output does not lead with the build row's detail {detail!r}")
        peak = rows_json.get("judge_peak_rss_mb")
        if "max_judge_rss_mb" in expected and not (
            isinstance(peak, (int, float)) and peak <= expected["max_judge_rss_mb"]
        ):
            problems.append(f"the judge's peak memory was {peak} MiB (bound {expected['max_judge_rss_mb']} MiB)")
        if "max_output_bytes" in expected and len(proc.stdout) + len(proc.stderr) > expected["max_output_bytes"]:
            problems.append(
                f"the judge printed {len(proc.stdout) + len(proc.stderr)} bytes (bound {expected['max_output_bytes']})"
            )
        if "max_out_mb" in expected:
            held = sum(os.lstat(os.path.join(d, f)).st_blocks * 512 for d, _, files in os.walk(out) for f in files)
            if held > expected["max_out_mb"] << 20:
                problems.append(
                    f"the grade's folder holds {held >> 20} MiB after the grade "
                    f"(bound {expected['max_out_mb']} MiB): what the submission wrote was kept"
                )
        for path in expected.get("absent_after", []):
            for k, v in subs.items():
                path = path.replace(k, v)
            if os.path.exists(path):
                problems.append(f"{path} exists after the grade (the submission wrote it)")
                os.remove(path)
        if listener is not None:
            try:
                conn, peer = listener.accept()
                problems.append(f"the submission connected to the test's listener on 127.0.0.1 (from {peer})")
                conn.close()
            except BlockingIOError:
                pass
        if (
            expected.get("worker_server")
            and isinstance(rows_json.get("worker_server_uid"), int)
            and rows_json["worker_server_uid"] > 0
        ):
            workers = [t for t in rows_json.get("timeline", []) if "forked" in t]  # the worker runs
            cold = [f"{t['what']} ({t.get('server', 'not served')})" for t in workers if not t.get("forked")]
            if not workers or cold:
                problems.append(
                    "expected every worker run on the worker server; not: " + "; ".join(cold or ["none ran"])
                )
        uids = {
            u
            for u in (rows_json.get("sandbox_uid"), rows_json.get("worker_server_uid"))
            if isinstance(u, int) and u > 0
        }  # run()'s sandboxes and the worker server's
        left = leftover_processes(uids, out)
        for _ in range(20):  # killed processes can take a moment to finish dying
            if not left:
                break
            time.sleep(0.5)
            left = leftover_processes(uids, out)
        if left:
            problems.append("processes left running after the grade: " + "; ".join(left))
            for entry in left:
                try:
                    os.kill(int(entry.split()[1].rstrip(":")), 9)
                except (OSError, ValueError):
                    pass
        failed_rows = sorted(r["id"] for r in rows.values() if r["status"] == "FAIL")
        record(
            args.results_dir,
            exercise,
            name,
            {
                "outcome": "wrong verdict" if problems else "as expected",
                "why": expected.get("why", ""),
                "expected_fail": sorted(expected.get("fail", [])),
                "cuda": bool(cuda),
                "rows": [{"id": r["id"], "status": r["status"], "detail": r["detail"]} for r in rows.values()],
                "failed_rows": failed_rows,
                "problems": problems,
                "seconds": round(seconds, 1),
                "protections_off": [p["id"] for p in rows_json.get("protections", []) if not p.get("on")],
            },
        )
    finally:
        if listener is not None:
            listener.close()
        shutil.rmtree(work, ignore_errors=True)

    if problems:
        print(f"PLANTED CASE {exercise}/{name} got the wrong verdict:", file=sys.stderr)
        for p in problems:
            print("  - " + p, file=sys.stderr)
        sys.exit(1)
    print(
        f"planted case {exercise}/{name}: verdict as expected "
        f"({len(failed_rows)} rows failed, {sum(r['status'] == 'SKIPPED' for r in rows.values())} skipped)"
    )


if __name__ == "__main__":
    main()
