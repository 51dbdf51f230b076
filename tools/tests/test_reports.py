"""ctest cli/reports: the judge's reports against their schemas (autograder/schemas/) through the one reader,
opcourse/reports.py, and what the commands do with one that does not match; the progress line from phase.json.

1. Real grades of 02_schema by the judge: the reference solution (and every rows.json it wrote while it ran: the
   progress form), the stub, a build error, a judge that crashed (--test-fault); Gradescope's results.json of each,
   and gradescope-run's merged one. Each validates, and reads back with the judge's totals.
2. Planted mismatches of the reference's rows.json (a field missing, one renamed, a wrong type, an unknown status,
   not JSON): each is refused by name and first mismatch, by the reader, by `list` and by `grade` (a stand-in judge),
   never with a traceback.
3. phase.json: a stand-in judge writes each phase in turn; watch's progress shows each text as it is, "starting" first;
   the reader says "starting" for a missing, half-written or stale file.

usage: test_reports.py BUILD_DIR"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from clitest import CLI, SOURCE, expect, max_points, temp_dir

from opcourse import reports

EX = "02_schema"
build = Path(sys.argv[1])
judge = build / "judge"
env = dict(os.environ, COURSE_BUILD_DIR=str(build))
tmp = temp_dir("reports")


def grade(name, submission, *extra, watch_progress=False):
    """Runs the judge itself into tmp/name; with watch_progress, every distinct rows.json it wrote while running."""
    out = tmp / name
    argv = [str(judge), "--exercise", EX, "--submission", str(submission), "--out", str(out), "--no-color", *extra]
    seen, stop = {}, threading.Event()

    def poll():
        while not stop.is_set():
            try:
                text = (out / "rows.json").read_text()
            except OSError:
                text = ""
            if text:
                seen.setdefault(text, None)
            time.sleep(0.02)

    t = threading.Thread(target=poll)
    if watch_progress:
        t.start()
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    stop.set()
    if watch_progress:
        t.join()
    return out, r, list(seen)


try:
    # 1. the judge's real outputs validate, and read back
    ref, r, snapshots = grade("reference", SOURCE / "solutions" / EX, watch_progress=True)
    expect(r.returncode == 0, f"the reference passes ({r.returncode}): {r.stdout[-500:]}{r.stderr[-500:]}")
    full = max_points(EX)
    report = reports.read_rows(ref)
    expect(
        report.final and report.score == full and report.failed == 0 and report.row("build").status == "PASS",
        f"the reference's rows.json reads back: {report.score}/{report.max_score}, final {report.final}",
    )
    progress = [json.loads(s) for s in snapshots]
    progress = [d for d in progress if d.get("final") is False]
    expect(progress, "the judge's rows.json was seen in its progress form while the grade ran")
    for doc in progress:
        mismatch = reports.first_mismatch(doc, reports.ROWS_SCHEMA)
        expect(not mismatch, f"a progress rows.json validates: {mismatch}")
        p = reports.Report.from_json(doc)
        expect(not p.final and (p.undecided or p.deciding is None), "a progress form lists what is undecided")
        expect(all(r.id not in p.undecided and r.id != p.deciding for r in p.decided()), "decided rows only")
    print(f"ok: the reference's rows.json and {len(progress)} progress form(s) validate")

    stub, r, _ = grade("stub", SOURCE / "exercises" / EX)
    report = reports.read_rows(stub)
    expect(
        r.returncode == 1 and report.failed > 0 and report.row("build").status == "PASS",
        f"the stub fails its checks: {report.failed} failed",
    )
    broken = tmp / "broken"
    shutil.copytree(SOURCE / "solutions" / EX, broken)
    with open(broken / "mm16_schema.cpp", "a") as fh:
        fh.write("int broken = undeclared_name;\n")
    builderr, r, _ = grade("build_error", broken)
    report = reports.read_rows(builderr)
    expect(
        report.row("build").status == "FAIL" and "undeclared_name" in report.build_error(),
        f"a build error is the build row: {report.build_error()!r}",
    )
    crashed, r, _ = grade("crash", SOURCE / "solutions" / EX, "--test-fault", "schema.mm16_scaled:segv")
    report = reports.read_rows(crashed)
    expect(
        report.final
        and isinstance(report.data.get("grader_crash"), dict)
        and report.row("schema.mm16_scaled").status == "FAIL",
        "a crashed judge's rows.json validates",
    )
    for out in (ref, stub, builderr, crashed):
        results = reports.read_results(out)
        expect(results["score"] == reports.read_rows(out).score, f"{out.name}: results.json validates, same score")
    print("ok: the stub's, the build error's and the crashed judge's rows.json and results.json validate")

    # gradescope-run in Gradescope's layout (the 02 reference uploaded; the other exercises are not submitted)
    gs = tmp / "gradescope"
    shutil.copytree(SOURCE / "solutions" / EX, gs / "submission")
    r = subprocess.run(
        [sys.executable, *CLI, "gradescope-run"],
        env=dict(env, GRADESCOPE_ROOT=str(gs)),
        capture_output=True,
        text=True,
        timeout=900,
    )
    print(r.stdout[-2000:] + r.stderr[-2000:])
    merged = reports.read_results(gs / "results" / "results.json")
    expect(
        r.returncode == 0 and merged["score"] == full and "Traceback" not in r.stderr,
        f"gradescope-run's results.json validates, the reference's score {full}: {merged['score']}",
    )
    print("ok: gradescope-run's results.json validates")

    # 2. planted mismatches: refused by name and first mismatch
    good = json.loads((ref / "rows.json").read_text())

    def planted(name, edit):
        doc = json.loads(json.dumps(good))
        edit(doc)
        folder = tmp / "planted" / name
        folder.mkdir(parents=True)
        (folder / "rows.json").write_text(json.dumps(doc))
        return folder

    def rename(doc):
        doc["not_graded_points"] = doc.pop("not_graded")

    cases = {
        "row_detail_missing": (lambda d: d["rows"][0].pop("detail"), "at rows/0: 'detail' is a required property"),
        "renamed_field": (rename, "('not_graded_points' was unexpected)"),
        "score_a_string": (lambda d: d.update(score="9"), "at score: '9' is not of type 'number'"),
        "status_unknown": (lambda d: d["rows"][1].update(status="PASSED"), "at rows/1/status: 'PASSED' is not one of"),
    }
    folders = {}
    for name, (edit, message) in cases.items():
        folders[name] = planted(name, edit)
        try:
            reports.read_rows(folders[name])
            expect(False, f"{name}: a rows.json that does not match was read")
        except reports.ReportError as e:
            said = str(e)
            expect(
                said.startswith(str(folders[name] / "rows.json") + ": not a rows.json as the judge writes it")
                and message in said,
                f"{name}: the error names the file and the first mismatch: {said}",
            )
    folder = tmp / "planted" / "not_json"
    folder.mkdir(parents=True)
    (folder / "rows.json").write_text('{"exercise": "02_schema", "rows": [')
    try:
        reports.read_rows(folder)
        expect(False, "a rows.json that is not JSON was read")
    except reports.ReportError as e:
        expect(str(e).startswith(str(folder / "rows.json") + ": not JSON"), f"not JSON, said: {e}")
    print("ok: every planted mismatch is refused by the reader, naming the file and the mismatch")

    # ... by `list` (the student's grades, in a state folder of its own; the stub counts as edited)
    state = tmp / "state"
    (state / "pristine" / EX).mkdir(parents=True)
    for f in (SOURCE / "exercises" / EX).iterdir():
        if f.is_file():
            (state / "pristine" / EX / f.name).write_text("// the stub as it was\n")
    (state / "grades" / EX).mkdir(parents=True)
    for name, (_, message) in cases.items():
        shutil.copy(folders[name] / "rows.json", state / "grades" / EX / "rows.json")
        r = subprocess.run(
            [sys.executable, *CLI, "list"],
            env=dict(env, COURSE_STATE_DIR=str(state)),
            capture_output=True,
            text=True,
            timeout=300,
        )
        line = next((ln for ln in r.stdout.splitlines() if f" {EX} " in ln), "")
        expect(
            r.returncode == 0
            and "Traceback" not in r.stderr
            and "not graded" in line
            and message in line
            and str(state / "grades" / EX / "rows.json") in line,
            f"list, {name}: the file and its mismatch on {EX}'s line, no traceback: {line!r} {r.stderr[-500:]}",
        )
    print("ok: list names the file and the mismatch")

    # ... by `grade`: a stand-in judge that passes but leaves a rows.json with a row's detail missing
    fake = tmp / "fake_judge"
    fake.write_text(
        textwrap.dedent(f"""\
        #!{sys.executable}
        import shutil, sys
        out = sys.argv[sys.argv.index("--out") + 1]
        shutil.copy({str(folders["row_detail_missing"] / "rows.json")!r}, out + "/rows.json")
        print("score 9/9")
        """)
    )
    fake.chmod(0o755)
    out = tmp / "fake_grade"
    out.mkdir()
    r = subprocess.run(
        [sys.executable, *CLI, "grade", EX, "--out", str(out)],
        env=dict(env, COURSE_JUDGE=str(fake)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    expect(
        r.returncode == 1
        and "Traceback" not in r.stderr
        and f"course: {out / 'rows.json'}: not a rows.json as the judge writes it" in r.stderr
        and cases["row_detail_missing"][1] in r.stderr,
        f"grade: the file and its mismatch, exit 1, no traceback: {r.returncode} {r.stderr[-800:]}",
    )
    print("ok: grade names the file and the mismatch")

    # 3. phase.json: shown as it is, "starting" first
    texts = [
        "compiling mm16_schema.cpp (1/1)",
        "linking libmm16_schema.so",
        "running checks (schema.mm16)",
        "graded; writing the reports",
    ]
    fake.write_text(
        textwrap.dedent(f"""\
        #!{sys.executable}
        import json, os, shutil, sys, time
        out = sys.argv[sys.argv.index("--out") + 1]
        os.makedirs(out, exist_ok=True)
        time.sleep(1.0)
        for phase, text in zip(("compiling", "linking", "checks", "done"), {texts!r}):
            with open(out + "/phase.json.tmp", "w") as fh:
                json.dump({{"phase": phase, "text": text}}, fh)
            os.replace(out + "/phase.json.tmp", out + "/phase.json")
            time.sleep(1.0)
        shutil.copy({str(ref / "rows.json")!r}, out + "/rows.json")
        print("score 9/9")
        """)
    )
    out = tmp / "phase_grade"
    out.mkdir()
    (out / "phase.json").write_text(json.dumps({"phase": "done", "text": "an earlier grade's last phase"}))
    sub = tmp / "phase_sub"
    shutil.copytree(SOURCE / "solutions" / EX, sub)
    r = subprocess.run(
        [sys.executable, *CLI, "watch", EX, "--dir", str(sub), "--out", str(out), "--max-iterations", "1"],
        env=dict(env, COURSE_JUDGE=str(fake)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(r.stdout + r.stderr)
    shown = [ln.split(" ... ")[0].strip() for ln in r.stdout.splitlines() if " ... " in ln]
    expect(r.returncode == 0 and shown[:1] == ["starting"], f"watch's progress starts at 'starting': {shown}")
    expect([t for t in shown if t in texts] == texts, f"then each phase's text as it is, in order: {shown}")
    expect("an earlier grade's last phase" not in r.stdout, "an earlier grade's phase.json is not shown")

    state_dir = tmp / "phase_read"
    state_dir.mkdir()
    expect(reports.read_phase(state_dir) == reports.Phase("starting", "starting"), "no phase.json: starting")
    (state_dir / "phase.json").write_text('{"phase": "comp')
    expect(reports.read_phase(state_dir).text == "starting", "a half-written phase.json: starting")
    (state_dir / "phase.json").write_text(json.dumps({"phase": "linking", "text": "linking libx.so"}))
    expect(reports.read_phase(state_dir) == reports.Phase("linking", "linking libx.so"), "a phase.json read")
    expect(reports.read_phase(state_dir, since=time.time() + 60).text == "starting", "a stale phase.json: starting")
    (state_dir / "phase.json").write_text(json.dumps({"phase": "sleeping", "text": "zzz"}))
    expect(reports.read_phase(state_dir).text == "starting", "a phase outside the contract: starting")
    print("ok: phase.json read and shown")
    print("ok: reports")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
