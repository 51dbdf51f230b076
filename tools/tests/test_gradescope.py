"""The Gradescope zip, unpacked into Gradescope's layout under a temporary root (GRADESCOPE_ROOT): setup.sh builds
the judge from the zip alone (reusing this machine's torch through COURSE_PYTHON: no downloads), run_autograder grades
a submission and writes results/results.json."""
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from clitest import SOURCE, expect, max_points, metadata, run, temp_dir

# 02_schema's figures, from its metadata: every check is one Gradescope test
SCHEMA_MAX = max_points("02_schema")
SCHEMA_TESTS = len(metadata("02_schema")["checks"])

build = Path(sys.argv[1])
# a fixed folder, so the judge's compile lines (which name it) are the same each run and ccache hits
tmp = build / "gradescope-test"
shutil.rmtree(tmp, ignore_errors=True)
tmp.mkdir(parents=True)
try:
    toolchain = json.loads((build / "toolchain.json").read_text())
    env = dict(os.environ, COURSE_BUILD_DIR=str(build), COURSE_PYTHON=toolchain["python"], COURSE_OFFLINE="1")
    zpath = tmp / "autograder.zip"
    rc, out = run(["gradescope-zip", "--out", str(zpath), "--exercises", "02_schema"], env=env)
    expect(rc == 0 and zpath.is_file(), "the zip is written")
    names = zipfile.ZipFile(zpath).namelist()
    expect("setup.sh" in names and "run_autograder" in names, "setup.sh and run_autograder at the zip's root")
    expect("autograder/judge/main.cpp" in names and "exercises/02_schema/exercise.json" in names, "grader sources")
    expect(not any(n.startswith("solutions/") for n in names), "no reference solution in the zip")
    expect(not any("/planted/" in n for n in names), "no planted submissions in the zip")
    # chapters 7 and 8 grade against the course's own operator, built from solutions/: never in a zip
    rc, out = run(["gradescope-zip", "--out", str(tmp / "refused.zip"), "--exercises", "07_testing"], env=env)
    expect(rc == 2 and "never carries solutions" in out and not (tmp / "refused.zip").exists(),
           "a zip for 07_testing is refused, with the reason")

    root = tmp / "autograder"  # Gradescope's /autograder
    src = root / "source"
    src.mkdir(parents=True)
    with zipfile.ZipFile(zpath) as z:
        for info in z.infolist():  # zipfile drops the mode bits: restore them as unzip does
            path = Path(z.extract(info, src))
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                path.chmod(mode)
    gs_env = dict(env, GRADESCOPE_ROOT=str(root), CCACHE_BASEDIR=str(root))
    gs_env.pop("COURSE_BUILD_DIR")
    r = subprocess.run([str(src / "setup.sh")], cwd=src, env=gs_env, capture_output=True, text=True, timeout=1200)
    print(r.stdout + r.stderr)
    expect(r.returncode == 0 and (src / "build" / "judge").is_file(), "setup.sh builds the judge from the zip")

    def grade(submission: Path, layout: str):
        sub = root / "submission"
        shutil.rmtree(sub, ignore_errors=True)
        shutil.rmtree(root / "results", ignore_errors=True)
        if layout == "flat":
            shutil.copytree(submission, sub)
        elif layout == "linked":  # an upload whose exercise folder is a symbolic link (zip and tar carry links)
            sub.mkdir(parents=True)
            os.symlink(submission, sub / "02_schema")
        else:  # uploaded as a folder
            shutil.copytree(submission, sub / "my-work" / "02_schema")
        r = subprocess.run([str(src / "run_autograder")], cwd=src, env=gs_env, capture_output=True, text=True,
                           timeout=1200)
        print(r.stdout + r.stderr)
        expect(r.returncode == 0, "run_autograder exits 0 (the score is in results.json)")
        res = json.loads((root / "results" / "results.json").read_text())
        expect(res["extra_data"]["max_score"] == SCHEMA_MAX and len(res["tests"]) == SCHEMA_TESTS,
               f"results.json: max_score {SCHEMA_MAX:g} (in extra_data) and one test per check ({SCHEMA_TESTS})")
        for t in res["tests"]:
            expect({"name", "score", "max_score", "status", "output", "visibility"} <= t.keys(), f"test fields: {t}")
        expect(abs(sum(t["score"] for t in res["tests"]) - res["score"]) < 1e-9, "score = sum of the tests")
        return res

    res = grade(SOURCE / "solutions" / "02_schema", "flat")
    expect(res["score"] == SCHEMA_MAX and all(t["status"] == "passed" for t in res["tests"]), "the solution: full marks")
    expect(res["tests"][0]["name"].startswith("build"), "test names are the judge's check names")
    res = grade(SOURCE / "exercises" / "02_schema", "nested")
    expect(res["score"] < SCHEMA_MAX and any(t["status"] == "failed" for t in res["tests"]), "the stub: failed tests")
    res = grade(SOURCE / "solutions" / "02_schema", "linked")
    expect(res["score"] == 0, "an upload whose folder is a link to the solution scores 0")
    print("ok: gradescope layout")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
