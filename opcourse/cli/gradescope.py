"""Gradescope: gradescope-zip builds the autograder zip (the grader's sources, the exercises' stubs, never the
solutions); gradescope-run is what the zip's run_autograder runs for each submission. merge_results writes
Gradescope's results.json of several exercises (batch writes one per student with it too)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

from .common import BUILD, ROOT, say
from .exercises import exercise_ids, load_exercise, resolve_exercise, total_points
from .judge import judge_path, load_toolchain, run_judge
from ..reports import Report, ReportError, read_results, write_results
from .submissions import find_sources

# what the zip carries (folders whole, but for __pycache__ and planted submissions), besides the exercises
GRADESCOPE_FILES = [
    "CMakeLists.txt",
    "course",
    "cmake",
    "autograder/CMakeLists.txt",
    "autograder/judge",
    "autograder/checks",
    "autograder/metadata",
    "autograder/worker",
    "autograder/tests",
    "autograder/portability",
    "requirements",
    "tools/setup.sh",
    "tools/venv_path.sh",
    "tools/clone_env.sh",
    "tools/gradescope",
    "pyproject.toml",
    # the commands' package, less the site (set-up installs it in the folder's own environment)
    "opcourse/__init__.py",
    "opcourse/metadata.py",
    "opcourse/planted.py",
    "opcourse/cli",
    "opcourse/mutation",
    "opcourse/reports.py",
    "autograder/schemas",
]


def merge_results(student: str, per_ex: dict[str, Path], rows: dict[str, Report]) -> dict:
    tests, score, max_score, seconds, lines = [], 0.0, 0.0, 0.0, []
    not_graded, why = 0.0, {}
    for ex, out in per_ex.items():
        try:
            res = read_results(out)
        except (OSError, ReportError) as e:
            if isinstance(e, ReportError):  # the judge's results.json is not in Gradescope's format: said, not merged
                say(str(e))
            r = rows[ex]
            res = {
                "score": 0.0,
                "extra_data": {"max_score": r.max_score},
                "tests": [],
                "execution_time": 0,
                "output": f"{ex}: {'not submitted' if r.missing else 'not graded: ' + (r.refused or r.error)}",
            }
            res["tests"].append(
                {
                    "name": f"{ex}: submitted and graded",
                    "score": 0.0,
                    "max_score": r.max_score,
                    "status": "failed",
                    "output": res["output"],
                    "visibility": "visible",
                }
            )
        for t in res.get("tests", []):
            t = dict(t)
            t["name"] = f"{ex} / {t.get('name', '')}"
            t["number"] = f"{ex}.{t.get('number', len(tests) + 1)}"
            tests.append(t)
        score += float(res.get("score", 0))
        max_score += float(
            res.get("extra_data", {}).get("max_score", sum(float(t.get("max_score", 0)) for t in res.get("tests", [])))
        )
        seconds += float(res.get("execution_time", 0))
        lines.append(res.get("output", ex))
        ng = res.get("extra_data", {}).get("not_graded", {})  # the points this machine could not grade, and why
        if isinstance(ng, dict) and ng.get("points"):
            not_graded += float(ng["points"])
            for reason, p in (ng.get("why") or {}).items():
                why[reason] = why.get(reason, 0.0) + float(p)
    return {
        "score": score,
        "execution_time": round(seconds),
        "output": "\n".join(lines),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"max_score": max_score, "not_graded": {"points": not_graded, "why": why}},
    }


def operator_files(toolchain: dict) -> tuple[dict, list[tuple[Path, str]]]:
    """The operators under test this build made (chapter 7's harness targets, chapter 8's course operator), as the
    zip carries them: operators.json (paths relative to its folder) and the (file, name in the zip) pairs."""
    files, manifest = [], {"course_operator": "", "harness_targets": []}
    op = toolchain.get("course_operator", "")
    if op:
        files.append((Path(op), "operators/course_operator/" + Path(op).name))
        manifest["course_operator"] = "course_operator/" + Path(op).name
    for t in toolchain.get("harness_targets", []):
        rel = f"harness_targets/{t['name']}/{Path(t['library']).name}"
        files.append((Path(t["library"]), "operators/" + rel))
        manifest["harness_targets"].append(dict(t, library=rel))
    return manifest, files


def cmd_gradescope_zip(args) -> int:
    exercises = [resolve_exercise(e) for e in args.exercises.split(",")] if args.exercises else exercise_ids()
    toolchain = load_toolchain()
    manifest, operators = [], []
    # Chapters 7 and 8 test the course's own operator (exercise 06's solution and planted-bug variants of it): the zip
    # carries them built, never their sources.
    if any(load_exercise(e).get("tests_course_operator") for e in exercises):
        manifest, operators = operator_files(toolchain)
        missing = [str(f) for f, _ in operators if not f.is_file()] or ([] if operators else ["(none configured)"])
        if missing:
            say(
                "gradescope-zip: the operators under test of chapters 7 and 8 are not built here: "
                + ", ".join(missing[:3])
                + " (build them with ./course build, on a machine with nvcc)"
            )
            return 2
    out = Path(args.out) if args.out else BUILD / "gradescope" / "autograder.zip"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".zip.tmp")
    count = 0
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:

        def add(path: Path, arc: str, mode: int | None = None):
            nonlocal count
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            st_mode = path.stat().st_mode if mode is None else mode
            info.external_attr = (0o100000 | (st_mode & 0o777)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, path.read_bytes())
            count += 1

        for rel in GRADESCOPE_FILES:
            p = ROOT / rel
            if not p.exists():
                continue
            files = (
                [p]
                if p.is_file()
                else sorted(
                    q for q in p.rglob("*") if q.is_file() and "__pycache__" not in q.parts and "planted" not in q.parts
                )
            )
            for f in files:
                add(f, str(f.relative_to(ROOT)))
        for ex in exercises:  # the exercises' metadata and stubs; never the solutions
            for f in sorted((ROOT / "exercises" / ex).iterdir()):
                if f.is_file():
                    add(f, f"exercises/{ex}/{f.name}")
        for f, arc in operators:
            add(f, arc)
        if operators:
            info = zipfile.ZipInfo("operators/operators.json", date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o100644 << 16
            z.writestr(info, json.dumps(manifest, indent=2))
            count += 1
        add(ROOT / "tools" / "gradescope" / "setup.sh", "setup.sh", 0o755)
        add(ROOT / "tools" / "gradescope" / "run_autograder", "run_autograder", 0o755)
        # the torch and CUDA the judge's flags and the operators under test were built for: checked at every grade
        built_for = {"torch_version": toolchain.get("torch_version", ""), "torch_cuda": toolchain.get("torch_cuda", "")}
        cfg = json.dumps({"exercises": exercises, "built_for": built_for}, indent=2).encode()
        info = zipfile.ZipInfo("gradescope.json", date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100644 << 16
        z.writestr(info, cfg)
        count += 1
    tmp.replace(out)
    say(
        f"wrote {out} ({count} files, exercises: {', '.join(exercises)}; built for torch "
        f"{built_for['torch_version']}, CUDA {built_for['torch_cuda'] or 'none'}); upload it as the Gradescope autograder"
    )
    return 0


def unpack_zip(zpath: Path, dest: Path) -> None:
    """Unpacks the zip as Gradescope does (into /autograder/source), with the files' modes (zipfile drops them)."""
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zpath) as z:
        for info in z.infolist():
            path = Path(z.extract(info, dest))
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                path.chmod(mode)


def cmd_gradescope_run(args) -> int:
    gs = Path(os.environ.get("GRADESCOPE_ROOT", "/autograder"))
    sub, results = gs / "submission", gs / "results"
    results.mkdir(parents=True, exist_ok=True)
    try:
        cfg = json.loads((ROOT / "gradescope.json").read_text())
        exercises = cfg["exercises"]
    except (OSError, ValueError, KeyError):
        cfg, exercises = {}, exercise_ids()
    judge_path()  # no judge: say so before grading anything
    built_for = cfg.get("built_for") or {}
    here = load_toolchain()
    here = {"torch_version": here.get("torch_version", ""), "torch_cuda": here.get("torch_cuda", "")}
    if built_for and built_for != here:
        message = (
            f"This autograder was built for torch {built_for.get('torch_version')} (CUDA "
            f"{built_for.get('torch_cuda') or 'none'}), but this image has torch {here['torch_version']} (CUDA "
            f"{here['torch_cuda'] or 'none'}): its compile flags and the course's operators under test would "
            "not match, so nothing was graded. Instructor: build the zip with ./course gradescope-zip where the "
            "course's torch is the image's (requirements/course.txt), and upload it again."
        )
        say(message)
        max_score = sum(total_points(load_exercise(e)) for e in exercises)
        write_results(
            results / "results.json",
            {
                "score": 0.0,
                "output": message,
                "visibility": "visible",
                "tests": [],
                "extra_data": {
                    "max_score": max_score,
                    "refused": "torch or CUDA mismatch",
                    "built_for": built_for,
                    "image": here,
                },
            },
        )
        return 0
    per_ex, rows = {}, {}
    for ex in exercises:
        meta = load_exercise(ex)
        meta.setdefault("id", ex)
        folder = find_sources(sub, meta)
        out = results / "work" / ex
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        per_ex[ex] = out
        if folder is None:
            rows[ex] = Report(ex, max_score=total_points(meta), missing=True)
            say(f"{ex}: not submitted (none of the uploaded folders holds {', '.join(meta['sources'])})")
            continue
        r = run_judge(
            ex,
            folder,
            out,
            show="capture",
            timeout=args.timeout,
            color=False,
            course_root=ROOT,
            toolchain=BUILD / "toolchain.json",
        )
        sys.stdout.write(r.stdout[-20000:])
        rows[ex] = Report(ex, max_score=total_points(meta), error=f"judge exit {r.returncode}")
    merged = merge_results("submission", per_ex, rows)
    if len(exercises) == 1:  # one assignment, one exercise: keep the judge's own test names
        for t in merged["tests"]:
            t["name"] = t["name"].split(" / ", 1)[-1]
            t["number"] = t["number"].split(".", 1)[-1]
    write_results(results / "results.json", merged)
    say(f"score {merged['score']:g}/{merged['extra_data']['max_score']:g}; wrote {results / 'results.json'}")
    return 0
