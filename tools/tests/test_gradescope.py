"""The Gradescope zip of every exercise, unpacked into Gradescope's layout under a temporary root (GRADESCOPE_ROOT):
setup.sh builds the grader from the zip alone (reusing this machine's torch through COURSE_PYTHON: no downloads; the
operators chapters 7 and 8 test come built, in operators/), run_autograder grades a submission and writes
results/results.json: every exercise's reference full marks (on the rows this machine grades), two stubs failing
and naming their TODO; a zip built for another torch refuses to grade, saying so in results.json."""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from clitest import SOURCE, expect, max_points, metadata, run

from opcourse.cli.gradescope import unpack_zip

EXERCISES = sorted(p.name for p in (SOURCE / "exercises").iterdir() if (p / "exercise.json").is_file())

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
    rc, out = run(["gradescope-zip", "--out", str(zpath)], env=env)
    expect(rc == 0 and zpath.is_file(), "the zip is written")
    names = zipfile.ZipFile(zpath).namelist()
    expect("setup.sh" in names and "run_autograder" in names, "setup.sh and run_autograder at the zip's root")
    expect("autograder/judge/main.cpp" in names and "exercises/02_schema/exercise.json" in names, "grader sources")
    expect(not any(n.startswith("solutions/") for n in names), "no reference solution in the zip")
    expect(not any("/planted/" in n for n in names), "no planted submissions in the zip")
    gs_cfg = json.loads(zipfile.ZipFile(zpath).read("gradescope.json"))
    expect(gs_cfg["exercises"] == EXERCISES, f"every exercise: {gs_cfg['exercises']}")
    expect(gs_cfg["built_for"]["torch_version"] == toolchain["torch_version"], "the zip names the torch it is for")
    # chapters 7 and 8's operators under test: built binaries (never their sources), listed in operators.json
    ops = json.loads(zipfile.ZipFile(zpath).read("operators/operators.json"))
    expect(
        ops["course_operator"] and len(ops["harness_targets"]) == len(toolchain["harness_targets"]),
        f"the course's operator and every harness target: {len(ops['harness_targets'])}",
    )
    expect(
        all(n.endswith(".so") or n.endswith("operators.json") for n in names if n.startswith("operators/")),
        "operators/ holds libraries only",
    )

    root = tmp / "autograder"  # Gradescope's /autograder
    src = root / "source"
    unpack_zip(zpath, src)  # as Gradescope unpacks it, modes included
    gs_env = dict(env, GRADESCOPE_ROOT=str(root), CCACHE_BASEDIR=str(root))
    gs_env.pop("COURSE_BUILD_DIR")
    r = subprocess.run([str(src / "setup.sh")], cwd=src, env=gs_env, capture_output=True, text=True, timeout=1200)
    print(r.stdout + r.stderr)
    expect(r.returncode == 0 and (src / "build" / "judge").is_file(), "setup.sh builds the judge from the zip")

    def run_autograder() -> dict:
        shutil.rmtree(root / "results", ignore_errors=True)
        r = subprocess.run(
            [str(src / "run_autograder")], cwd=src, env=gs_env, capture_output=True, text=True, timeout=1800
        )
        print(r.stdout[-6000:] + r.stderr[-3000:])
        expect(r.returncode == 0, "run_autograder exits 0 (the score is in results.json)")
        res = json.loads((root / "results" / "results.json").read_text())
        for t in res["tests"]:
            expect({"name", "score", "max_score", "output", "visibility"} <= t.keys(), f"test fields: {t}")
        expect(abs(sum(t["score"] for t in res["tests"]) - res["score"]) < 1e-9, "score = sum of the tests")
        return res

    def upload(folders: dict[str, Path], layout: str = "nested"):
        sub = root / "submission"
        shutil.rmtree(sub, ignore_errors=True)
        sub.mkdir(parents=True)
        for ex, folder in folders.items():
            if layout == "flat":
                shutil.copytree(folder, sub, dirs_exist_ok=True)
            elif layout == "linked":  # an upload whose exercise folder is a symbolic link (zip and tar carry links)
                os.symlink(folder, sub / ex)
            else:  # uploaded as folders
                shutil.copytree(folder, sub / "my-work" / ex)

    def tests_of(res: dict, ex: str) -> list[dict]:
        return [t for t in res["tests"] if t["name"].startswith(ex + " / ")]

    # every exercise's reference: each graded row passes (SKIPPED ones, without a GPU, count for nothing)
    upload({ex: SOURCE / "solutions" / ex for ex in EXERCISES})
    res = run_autograder()
    for ex in EXERCISES:
        tests = tests_of(res, ex)
        graded = [t for t in tests if t.get("status")]
        expect(
            len(tests) == len(metadata(ex)["checks"]) and graded and all(t["status"] == "passed" for t in graded),
            f"{ex}'s reference: every graded row passes ({[t['name'] for t in graded if t['status'] != 'passed']})",
        )
    expect(
        res["score"] == res["extra_data"]["max_score"],
        f"the references: full marks on every row graded here ({res['score']:g} of {res['extra_data']['max_score']:g}"
        f"; {res['extra_data']['not_graded']['points']:g} more not graded here)",
    )
    # stubs: fail, naming their TODO. Two suffice here (the first exercise with a C++ build and the newest one): a stub
    # goes through the zip's build exactly as its reference just did, and every stub's verdict is its planted/EX/stub
    # case's to show (each of those costs a grade; through the zip they would cost the suite minutes more)
    stubs = [EXERCISES[1], EXERCISES[-1]]
    upload({ex: SOURCE / "exercises" / ex for ex in stubs})
    res = run_autograder()
    for ex in stubs:
        failed = [t for t in tests_of(res, ex) if t.get("status") == "failed"]
        expect(
            failed and any("TODO(student)" in t["output"] for t in failed),
            f"{ex}'s stub fails, a failed row naming its TODO ({len(failed)} failed)",
        )

    # one exercise, three ways to upload it
    for layout, want in (("flat", SCHEMA_MAX), ("nested", SCHEMA_MAX), ("linked", 0)):
        upload({"02_schema": SOURCE / "solutions" / "02_schema"}, layout)
        res = run_autograder()
        tests = tests_of(res, "02_schema")
        expect(
            len(tests) == SCHEMA_TESTS and sum(t["score"] for t in tests) == want,
            f"02_schema uploaded {layout}: {sum(t['score'] for t in tests):g} of {SCHEMA_MAX} "
            f"(expected {want}{': a link to the solution scores 0' if layout == 'linked' else ''})",
        )
    expect(tests[0]["name"].split(" / ", 1)[1].startswith("build"), "test names are the judge's check names")

    # a zip built for another torch grades nothing, and says why in results.json
    cfg_file = src / "gradescope.json"
    cfg = json.loads(cfg_file.read_text())
    cfg_file.write_text(json.dumps(dict(cfg, built_for={"torch_version": "0.0.1", "torch_cuda": "9.9"})))
    res = run_autograder()
    expect(
        res["score"] == 0
        and not res["tests"]
        and "built for torch 0.0.1" in res["output"]
        and "nothing was graded" in res["output"],
        f"another torch: refused with the reason ({res['output'][:200]})",
    )
    cfg_file.write_text(json.dumps(cfg))
    print("ok: gradescope layout")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
