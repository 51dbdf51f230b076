"""mutants: mutation analysis of the reference solutions (opcourse/mutation/README.md).

Each mutant (mutate.py: one small edit of one file of solutions/EX, a planted-case patch) is materialised by
opcourse/planted.py like any planted bug and graded by the judge, with one seed for the whole run. Its
verdict comes from the judge's rows.json:

  killed       a row that ran failed (the grade went down)
  timed out    the only failures are worker runs the judge stopped at its timeout (the grade went down too), or the
               judge itself ran past --timeout
  stillborn    the build row failed (it does not compile; a Python mutant that does not parse is not graded)
  survived     every row that ran passed: a missing check, unless it cannot change a grade, in which case
               opcourse/mutation/equivalent.json lists it with the reason (then its verdict is `equivalent`)
  not judged   the edit is in code only a CUDA device runs (mutate.gpu_only_lines) and this machine has none: the
               rows that could see it are SKIPPED here, so it is neither killed nor survived (on a machine with a
               GPU, rows the reference's grade SKIPPED too, guard.cuda on one GPU, leave a survivor survived)
  not run      --budget ran out before it was started (a rerun takes it from the cache's next mutant)

score = (killed + timed out) / (killed + timed out + survived): stillborn, equivalent, not judged and not run are
left out.
opcourse/mutation/missing_checks.json lists the survivors already reported as missing checks: they still count as
survived, but `--check` (the CI sample) fails only on a survivor listed nowhere, or on a listed entry the grader now
kills (the list is then out of date).

Results are cached under build/mutants/cache by the mutant's text, the judge (its binary, worker, metadata and the
toolchain it compiles with), the exercise, the seed and the worker timeout: a rerun grades only what changed."""

from __future__ import annotations

import concurrent.futures as futures
import difflib
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from .. import planted as planted_cases  # the one module that turns a patch over a reference into a submission
from ..cli.common import BUILD, ROOT, die, say
from ..cli.exercises import exercise_ids, load_exercise, resolve_exercise
from ..cli.judge import judge_path, load_toolchain, run_judge
from . import mutate, mutate_universal
from ..reports import Report, ReportError, read_rows

LISTS = Path("opcourse") / "mutation"  # the lists of this folder (equivalent, missing checks, GPU-only), from a root
MUTANTS_DIR = ROOT / LISTS

STATUSES = ("killed", "timed out", "survived", "equivalent", "stillborn", "not judged", "not run", "error")
TIMEOUT_MARKS = ("was stopped after", "an earlier run on the GPU was stopped")


# ------------------------------------------------------------------------------------------------ mutants and lists
def own_files(ex: str, meta: dict | None = None) -> list[str]:
    """The files exercise EX teaches: its sources and headers, less those carried forward from an earlier exercise
    (exercise.json "given"), whose mutants are that exercise's. A given file that is neither (exercise 10's
    setup.py, which the judge never reads; build/stable_wheel builds with it) has no mutant the grade could see."""
    meta = meta or load_exercise(ex)
    given = meta.get("given", {})
    headers = (".h", ".hpp", ".cuh")
    names = set(meta.get("sources", [])) | {n for n, origin in given.items() if origin == ex and n.endswith(headers)}
    return sorted(n for n in names if given.get(n, ex) == ex and (ROOT / "solutions" / ex / n).is_file())


def read_json(name: str) -> dict:
    path = MUTANTS_DIR / name
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except ValueError as e:
        die(f"{path}: {e}", 1)


def gpu_names(ex: str, file: str) -> tuple[str, ...]:
    return tuple(read_json("gpu_only.json").get("exercises", {}).get(ex, {}).get(file, []))


# Who makes the mutants (`--generator`; an equivalents entry's "generator"): name -> mutants_of_text
GENERATORS = {"course": mutate.mutants_of_text, "universalmutator": mutate_universal.mutants_of_text}


def mutants_of(ex: str, files: list[str], generator: str = "course") -> list[mutate.Mutant]:
    out = []
    for f in files:
        out += GENERATORS[generator](ex, f, (ROOT / "solutions" / ex / f).read_text(), gpu_names(ex, f))
    return out


def entry_id(entry: dict, root: Path = ROOT) -> str:
    """The id of the mutant an equivalent.json / missing_checks.json entry describes; PlantedError when its patch no
    longer applies to the reference (planted_cases' rule: each OLD occurs exactly once)."""
    ex = entry["exercise"]
    ((name, edits),) = entry["patch"].items()
    expected = {"submission": f"solutions/{ex}", "patch": entry["patch"]}
    files = planted_cases.patched_files(root, Path("mutants") / ex, expected)
    return mutate.mutant_id(ex, name, files[name])


def listed(root: Path = ROOT) -> tuple[dict[str, dict], dict[str, dict], list[str]]:
    """{id: entry} of equivalent.json and of missing_checks.json, and the problems found reading them."""
    problems: list[str] = []
    lists = []
    for name, key in (("equivalent.json", "equivalent"), ("missing_checks.json", "missing_checks")):
        path = root / LISTS / name
        data = json.loads(path.read_text()) if path.is_file() else {}
        out: dict[str, dict] = {}
        for i, entry in enumerate(data.get(key, [])):
            where = f"opcourse/mutation/{name}: entry {i + 1} ({entry.get('label', '?')})"
            try:
                mid = entry_id(entry, root)
            except (planted_cases.PlantedError, KeyError, ValueError, TypeError) as e:
                problems.append(f"{where}: {e}")
                continue
            if mid in out:
                problems.append(f"{where}: the same mutant as an earlier entry")
            out[mid] = entry
        lists.append(out)
    return lists[0], lists[1], problems


# ------------------------------------------------------------------------------------------------------- grading
def has_gpu(mode: str) -> bool:
    if mode != "auto":
        return mode == "yes"
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and "GPU " in r.stdout and os.environ.get("CUDA_VISIBLE_DEVICES", None) != ""


def machine(gpu: bool) -> str:
    """The cores, and the GPU that graded the GPU rows (nvidia-smi's name of device 0)."""
    name = ""
    if gpu:
        try:
            r = subprocess.run(
                ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            name = r.stdout.strip() if r.returncode == 0 else ""
        except (OSError, subprocess.TimeoutExpired):
            pass
    return f"{os.cpu_count()} cores" + (f", {name}" if name else "")


def _hash_files(h, paths) -> None:
    for p in sorted(set(paths)):
        p = Path(p)
        if p.is_file():
            h.update(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p).encode() + b"\0")
            h.update(p.read_bytes())


def judge_fingerprint(ex: str) -> str:
    """What a mutant's verdict depends on besides its own text: the judge, the worker, the checks' metadata, the
    toolchain it compiles with, the exercise's reference folder, and the course operators an exercise runs."""
    h = hashlib.sha256()
    tc_path = BUILD / "toolchain.json"
    tc = load_toolchain(tc_path)
    files = [judge_path(), tc_path]
    for folder in ("autograder/worker", "autograder/metadata", f"solutions/{ex}", "autograder/portability"):
        files += [p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    files.append(ROOT / "exercises" / ex / "exercise.json")
    if load_exercise(ex).get("tests_course_operator"):
        files.append(Path(tc.get("course_operator", "")))
        files += [Path(t["library"]) for t in tc.get("harness_targets", [])]
    _hash_files(h, files)
    return h.hexdigest()[:16]


def classify(rows: Report, gpu_only: bool) -> tuple[str, list[str], str]:
    """(status, failed row ids, a one-line reason) from the judge's rows.json."""
    failed = rows.failing()
    ran = [r for r in rows.rows if r.status in ("PASS", "FAIL")]
    skipped = [r for r in rows.rows if r.status == "SKIPPED"]
    build = next((r for r in failed if r.id == "build"), None)
    if build is not None:
        return "stillborn", ["build"], build.detail
    if not ran:
        return "error", [], "no row ran"
    if failed:
        ids = [r.id for r in failed]

        def text(r):
            return " ".join((r.detail, r.seen))

        if all(any(m in text(r) for m in TIMEOUT_MARKS) for r in failed):
            return "timed out", ids, failed[0].detail
        first = next(r for r in failed if not any(m in text(r) for m in TIMEOUT_MARKS))
        return "killed", ids, f"{first.id}: {first.detail}"
    if gpu_only and skipped:
        return "not judged", [], f"every row that ran passed; {len(skipped)} GPU row(s) SKIPPED here"
    return "survived", [], f"{len(ran)} row(s) passed" + (f", {len(skipped)} SKIPPED" if skipped else "")


def skipped_rows(result: dict | None) -> set[str]:
    return {k for k, v in (result or {}).get("rows", {}).items() if v == "SKIPPED"}


def judged_beside_reference(result: dict, reference_skipped: set[str]) -> dict:
    """A GPU-only mutant is 'not judged' when GPU rows were SKIPPED. On a machine with a GPU, rows the reference's
    grade SKIPPED as well (guard.cuda needs two GPUs) do not make it so: every row this machine can run, ran, and a
    mutant that passed them survived (reference_skipped: the reference's SKIPPED rows there, empty without a GPU)."""
    skipped = skipped_rows(result)
    if result["status"] == "not judged" and skipped and skipped <= reference_skipped:
        result = {
            **result,
            "status": "survived",
            "detail": f"every row that ran passed; SKIPPED as for the reference: {', '.join(sorted(skipped))}",
        }
    return result


class Grader:
    def __init__(self, args, ex: str, fingerprint: str):
        self.args, self.ex, self.fingerprint = args, ex, fingerprint
        self.cache = BUILD / "mutants" / "cache" / ex
        self.work = BUILD / "mutants" / "work" / ex
        self.cache.mkdir(parents=True, exist_ok=True)

    def key(self, mid: str) -> str:
        a = self.args
        return hashlib.sha256(f"{mid}|{self.fingerprint}|{a.seed}|{a.worker_timeout}".encode()).hexdigest()[:24]

    def grade(self, m: mutate.Mutant | None) -> dict:
        """Grades one mutant (None: the reference itself, the baseline); cached by key()."""
        mid = m.id if m else "reference"
        cache = self.cache / f"{self.key(mid)}.json"
        if cache.is_file() and not self.args.no_cache:
            result = json.loads(cache.read_text())
            result["cached"] = True
            return result
        t0 = time.monotonic()
        result = self._grade(m)
        result["seconds"] = round(time.monotonic() - t0, 1)
        if result["status"] != "error":
            cache.write_text(json.dumps(result, indent=1))
        result["cached"] = False
        return result

    def _grade(self, m: mutate.Mutant | None) -> dict:
        ex = self.ex
        if m is not None and m.file.endswith(".py"):
            text = (ROOT / "solutions" / ex / m.file).read_text().replace(m.old, m.new, 1)
            try:
                compile(text, m.file, "exec")
            except SyntaxError as e:
                return {"status": "stillborn", "rows_failed": [], "detail": f"does not parse: {e}"}
        work = self.work / (m.id if m else "reference")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        try:
            case = work / "case"
            case.mkdir()
            expected = {"submission": f"solutions/{ex}"}
            if m is not None:
                expected["patch"] = m.patch
            (case / "expected.json").write_text(json.dumps(expected))
            submission = planted_cases.materialize(ROOT, case, work / "prepared") if m else ROOT / "solutions" / ex
            out = work / "grade"
            run = run_judge(
                ex,
                submission,
                out,
                show="capture",
                timeout=self.args.timeout,
                seed=self.args.seed,
                worker_timeout=self.args.worker_timeout,
                color=False,
            )
            if run.timed_out:
                return {
                    "status": "timed out",
                    "rows_failed": [],
                    "detail": f"the judge ran past --timeout {self.args.timeout:g} s and was stopped",
                }
            try:
                rows = read_rows(out)
            except (OSError, ReportError) as e:
                tail = (run.stdout + run.stderr).strip().splitlines()[-3:]
                return {
                    "status": "error",
                    "rows_failed": [],
                    "detail": f"the judge ({run.returncode}) wrote no readable rows.json ({e}): {' | '.join(tail)}",
                }
            status, failed, detail = classify(rows, bool(m and m.gpu_only))
            return {
                "status": status,
                "rows_failed": failed,
                "detail": detail[:300],
                "rows": {r.id: r.status for r in rows.rows},
            }
        finally:
            if not self.args.keep_work:
                shutil.rmtree(work, ignore_errors=True)


# ------------------------------------------------------------------------------------------------------- reports
def diff_of(m: mutate.Mutant) -> str:
    text = (ROOT / "solutions" / m.exercise / m.file).read_text()
    mutated = text.replace(m.old, m.new, 1)
    lines = difflib.unified_diff(
        text.splitlines(keepends=True),
        mutated.splitlines(keepends=True),
        f"solutions/{m.exercise}/{m.file}",
        f"mutant {m.id}",
        n=1,
    )
    return "".join(lines).rstrip("\n")


def score_of(counts: dict) -> tuple[int, int, float | None]:
    detected = counts.get("killed", 0) + counts.get("timed out", 0)
    total = detected + counts.get("survived", 0)
    return detected, total, (detected / total if total else None)


def pct(score: float | None) -> str:
    return "n/a" if score is None else f"{100 * score:.0f} %"


def _report_lists(results: list[dict]) -> list[str]:
    """The report's lists by verdict: survivors (with diffs), listed entries killed, equivalents, the rest."""
    md: list[str] = []
    survivors = [r for r in results if r["status"] == "survived"]
    if survivors:
        md += [
            "",
            "## Survivors",
            "",
            "Each is a missing check until it is killed or listed, with the reason, in "
            "`opcourse/mutation/equivalent.json`.",
        ]
        for r in survivors:
            known = r.get("missing_check")
            md += ["", f"### {r['id']} {r['label']}", ""]
            md += (
                [f"Known missing check (opcourse/mutation/missing_checks.json): {known}", ""]
                if known
                else ["**New**: listed neither as equivalent nor as a known missing check.", ""]
            )
            md += ["```diff", r["diff"], "```"]
    listed_killed = [r for r in results if r.get("listed_problem")]
    if listed_killed:
        md += ["", "## Listed entries the grader kills", ""]
        md += [f"- {r['id']} {r['label']}: {r['listed_problem']}" for r in listed_killed]
    eq = [r for r in results if r["status"] == "equivalent"]
    if eq:
        md += ["", "## Equivalent (opcourse/mutation/equivalent.json)", ""]
        md += [f"- {r['id']} {r['label']}: {r['reason']}" for r in eq]
    rest = [r for r in results if r["status"] in ("timed out", "not judged", "not run", "error")]
    if rest:
        md += ["", "## Timed out, not judged here, not run, errors", ""]
        md += [f"- {r['status']}: {r['id']} {r['label']}: {r['detail']}" for r in rest]
    return md


def write_reports(out: Path, ex: str, run: dict, results: list[dict]) -> dict:
    run = dict(run)
    not_graded = run.pop("not_graded", [])
    counts = {s: sum(r["status"] == s for r in results) for s in STATUSES}
    detected, total, score = score_of(counts)
    by_row: dict[str, int] = {}
    for r in results:
        if r["status"] in ("killed", "timed out"):
            for row in r["rows_failed"]:
                by_row[row] = by_row.get(row, 0) + 1
    summary = {
        "exercise": ex,
        **run,
        "counts": counts,
        "detected": detected,
        "scored": total,
        "score": score,
        "killed_by_row": dict(sorted(by_row.items(), key=lambda kv: -kv[1])),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{ex}.json").write_text(
        json.dumps({**summary, "mutants": results, "not_graded": not_graded}, indent=1) + "\n"
    )
    md = [
        f"# Mutants of {ex}",
        "",
        f"Command: `{run['command']}`  ",
        f"Commit {run['commit']}, judge fingerprint {run['fingerprint']}, seed {run['seed']}, "
        f"{'a CUDA device' if run['gpu'] else 'no CUDA device'} ({run['machine']}).  ",
        f"Files mutated: {', '.join(run['files'])}; {run['generated']} mutants generated"
        + (" by universalmutator " + mutate_universal.VERSION if run.get("generator") == "universalmutator" else "")
        + (
            f", {run['selected']} graded (a sample: {run['sample_note']})"
            if run["selected"] != run["generated"]
            else ", all graded"
        )
        + ".",
        "",
        f"**Score: {detected} / {total} = {pct(score)}** (killed and timed out, of the mutants that could change a "
        "grade: stillborn, equivalent, not judged and not run are left out)",
        "",
        "| verdict | mutants |",
        "| --- | --- |",
    ]
    md += [f"| {s} | {counts[s]} |" for s in STATUSES if counts[s]]
    if by_row:
        md += ["", "Rows that killed (a mutant may fail several):", "", "| row | mutants killed |", "| --- | --- |"]
        md += [f"| `{row}` | {n} |" for row, n in summary["killed_by_row"].items()]
    md += _report_lists(results)
    md += ["", "## Every mutant", "", "| id | verdict | mutant | rows failed |", "| --- | --- | --- | --- |"]
    for r in results:
        rows = ", ".join(r["rows_failed"][:4]) + (" ..." if len(r["rows_failed"]) > 4 else "")
        md += [f"| {r['id']} | {r['status']} | {r['label'].replace('|', '&#124;')} | {rows} |"]
    (out / f"{ex}.md").write_text("\n".join(md) + "\n")
    return summary


def write_summary(out: Path, summaries: list[dict]) -> None:
    old = {}
    path = out / "summary.json"
    if path.is_file():
        try:
            old = {s["exercise"]: s for s in json.loads(path.read_text()).get("exercises", [])}
        except (ValueError, KeyError, TypeError):
            old = {}
    for s in summaries:
        old[s["exercise"]] = s
    allsum = [old[k] for k in sorted(old)]
    path.write_text(json.dumps({"exercises": allsum}, indent=1) + "\n")
    generators = {s.get("generator", "course") for s in allsum}
    by = "" if generators == {"course"} else " (mutants made by " + ", ".join(sorted(generators)) + ")"
    md = [
        f"# Mutation analysis: the score per exercise{by}",
        "",
        "Each mutant is one small edit of a reference solution, graded by the judge "
        "(`./course mutants --help`; opcourse/mutation/README.md). "
        "score = (killed + timed out) / (killed + timed out + survived).",
        "",
        "| exercise | files | mutants | in the run | killed | timed out | survived | equivalent | stillborn "
        "| not judged | score | seed | machine |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in allsum:
        c = s["counts"]
        not_run = c.get("not run", 0)
        graded = f"{s['selected'] - not_run}" + (f" (+{not_run} not run: --budget)" if not_run else "")
        md.append(
            f"| [{s['exercise']}]({s['exercise']}.md) | {', '.join(s['files'])} | {s['generated']} | "
            f"{graded} | {c['killed']} | {c['timed out']} | {c['survived']} | {c['equivalent']} | "
            f"{c['stillborn']} | {c['not judged']} | {s['detected']}/{s['scored']} = {pct(s['score'])} | "
            f"{s['seed']} | {s['machine'] if s['gpu'] else 'CPU only'} |"
        )
    md += [
        "",
        "The command that regenerated each (the seed fixes the judge's inputs and the sample; cached verdicts are "
        "reused, so a rerun grades only what changed):",
        "",
    ]
    md += [
        f"- {s['exercise']}: `{s['command']}` (commit {s['commit']}; {s.get('grading_seconds', 0) / 60:.0f} min of "
        f"grading, {s.get('jobs', 1)} at once)"
        for s in allsum
    ]
    (out / "summary.md").write_text("\n".join(md) + "\n")


# ------------------------------------------------------------------------------------------------------- command
def git_commit() -> str:
    if os.environ.get("COURSE_COMMIT"):  # a copy of the tree without its .git (the GPU run): the caller names it
        return os.environ["COURSE_COMMIT"]
    try:
        r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        return r.stdout.strip() if r.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def resolve_seed(text: str) -> int:
    """An integer, or `commit`: derived from the checked-out commit's hash (1 when there is no git)."""
    if text == "commit":
        c = git_commit()
        return int(c[:8], 16) if c else 1
    try:
        value = int(text)
    except ValueError:
        die(f"--seed: expected a non-negative integer or 'commit', got {text!r}")
    if value < 0:
        die(f"--seed: expected a non-negative integer or 'commit', got {text!r}")
    return value


def evidence_verdicts(ex: str) -> dict[str, str]:
    """{mutant id: verdict} of the committed report evidence/mutants/EX.json; "not graded" for the ids its run
    generated and left out of its sample."""
    path = ROOT / "evidence" / "mutants" / f"{ex}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    known = {i: "not graded" for i in data.get("not_graded", [])}
    known.update({m["id"]: m["status"] for m in data.get("mutants", []) if "id" in m and "status" in m})
    return known


def select(ex: str, mutants: list[mutate.Mutant], args, gpu: bool, eq: dict, missing: dict) -> tuple[list, str]:
    """The mutants to grade and, for a sample, how it was drawn."""
    chosen = mutants
    if args.operators:
        chosen = [m for m in chosen if m.operator in args.operators]
    if args.sample is None:
        return chosen, ""
    pool = [m for m in chosen if gpu or not m.gpu_only]
    what = f"{'' if gpu else 'CPU-judgeable '}mutants"
    if args.check:
        # CI looks for new survivors: the listed ones are the full run's to grade, and so are those the committed
        # evidence has not graded yet (its sample left them out), lest every commit draw a survivor nobody has
        # classified. What it draws: those the evidence saw killed (a weakened check shows up as a survivor) and
        # those it has never seen (the reference changed).
        pool = [m for m in pool if m.id not in eq and m.id not in missing]
        known = evidence_verdicts(ex)
        if known:
            pool = [m for m in pool if known.get(m.id, "new") in ("killed", "timed out", "new")]
            what += " that evidence/mutants/ saw killed or has never seen"
        what += ", not listed in opcourse/mutation/"
    rng = random.Random(f"{args.seed}:{ex}")
    picked = rng.sample(pool, min(args.sample, len(pool)))
    order = {m.id: i for i, m in enumerate(mutants)}
    note = f"{len(picked)} drawn with seed {args.seed} from the {len(pool)} {what}"
    return sorted(picked, key=lambda m: order[m.id]), note


def _parse_operators(args) -> None:
    """--operators, checked and split into the course generator's operator names."""
    if args.operators and args.generator != "course":
        die("--operators: the course generator's operators (universalmutator's rules are not selectable here)")
    if args.operators:
        args.operators = [o.strip() for o in args.operators.split(",") if o.strip()]
        unknown = [o for o in args.operators if o not in mutate.OPERATORS]
        if unknown:
            die(f"--operators: unknown {', '.join(unknown)} (known: {', '.join(mutate.OPERATORS)})")


def _listed_or_die() -> tuple[dict, dict]:
    """The equivalent and missing-check entries; a stale entry stops the run before anything is graded."""
    eq, missing, problems = listed()
    if problems:
        for p in problems:
            print(f"course: {p}", file=sys.stderr)
        die("opcourse/mutation/ lists entries that no longer apply (fix or remove them)", 1)
    return eq, missing


def _files_to_mutate(ex: str, args) -> list[str]:
    """The solution files of EX whose mutants are generated: its own by default, --files or --all-files otherwise."""
    meta = load_exercise(ex)
    files = own_files(ex, meta)
    if args.files:
        wanted = [f.strip() for f in args.files.split(",") if f.strip()]
        files = [f for f in wanted if (ROOT / "solutions" / ex / f).is_file()]
    elif args.all_files:
        files = sorted(
            p.name
            for p in (ROOT / "solutions" / ex).iterdir()
            if p.name.endswith(mutate.CPP_SUFFIXES + mutate.PY_SUFFIXES)
        )
    return files


def _plan(ex: str, args, gpu: bool, eq: dict, missing: dict) -> tuple:
    """One exercise's plan: (ex, files, every mutant, those chosen, how the sample was drawn)."""
    files = _files_to_mutate(ex, args)
    mutants = mutants_of(ex, files, args.generator)
    chosen, note = select(ex, mutants, args, gpu, eq, missing)
    return ex, files, mutants, chosen, note


def _print_plans(args, plans: list, eq: dict, missing: dict) -> None:
    """--list and --show: the chosen mutants (and their diffs), nothing graded."""
    for ex, files, mutants, chosen, note in plans:
        for m in chosen:
            if args.show and m.id not in args.show:
                continue
            tag = (
                "equivalent" if m.id in eq else "missing-check" if m.id in missing else "gpu-only" if m.gpu_only else ""
            )
            say(f"{ex} {m.id} {m.label}" + (f"  [{tag}]" if tag else ""))
            if args.show:
                say(diff_of(m))
        if args.list and not args.show:
            say(
                f"{ex}: {len(chosen)} of {len(mutants)} mutants of {', '.join(files) or 'no file'}"
                + (f" ({note})" if note else "")
            )


def _reports_dir(args) -> Path:
    out = Path(args.out) if args.out else (ROOT / "evidence" / "mutants" if args.evidence else BUILD / "mutants")
    if args.generator != "course" and not args.out:
        out = out / args.generator  # its reports beside, never over, the course generator's
    return out


def _not_judged(chosen: list, to_grade: list) -> dict[str, dict]:
    """The results of the GPU-only mutants this machine cannot judge."""
    results: dict[str, dict] = {}
    for m in chosen:
        if m not in to_grade:
            results[m.id] = {
                "status": "not judged",
                "rows_failed": [],
                "cached": False,
                "seconds": 0.0,
                "detail": "GPU-only code and no CUDA device here (--grade-gpu-only grades it "
                "anyway: stillborn and CPU-row kills)",
            }
    return results


def _grade_all(args, grader, to_grade: list, results: dict, started: float) -> None:
    """Grades TO_GRADE, --jobs at once, into RESULTS, printing each verdict as it comes."""
    lock = threading.Lock()
    done = [0]

    def one(m: mutate.Mutant) -> None:
        if args.budget and time.monotonic() - started > args.budget:
            r = {
                "status": "not run",
                "rows_failed": [],
                "cached": False,
                "seconds": 0.0,
                "detail": f"not graded: the run's time budget (--budget {args.budget:g} s) ran out first",
            }
        else:
            r = grader.grade(m)
        with lock:
            results[m.id] = r
            done[0] += 1
            rows = f" ({', '.join(r['rows_failed'][:3])})" if r["rows_failed"] and r["status"] != "stillborn" else ""
            say(
                f"  [{done[0]}/{len(to_grade)}] {r['status']:<10} {m.id} {m.label}{rows}"
                f"  {'cached' if r['cached'] else str(r['seconds']) + ' s'}"
            )

    with futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, to_grade))


def _final_result(
    ex: str, m: mutate.Mutant, result: dict, base_skipped: set, eq: dict, missing: dict, failures: list
) -> dict:
    """One mutant's reported result: its verdict against the listed entries, each problem added to FAILURES."""
    r = judged_beside_reference(dict(result), base_skipped)
    r.update(m.to_json())
    r["label"] = m.label
    if m.id in eq:
        if r["status"] == "survived":
            r["status"] = "equivalent"
            r["reason"] = eq[m.id]["reason"]
        elif r["status"] in ("killed", "timed out"):
            r["listed_problem"] = (
                "listed as equivalent in opcourse/mutation/equivalent.json, but the "
                f"grader kills it ({r['detail']}): remove the entry"
            )
            failures.append(f"{ex} {m.id} {m.label}: {r['listed_problem']}")
    elif m.id in missing:
        r["missing_check"] = missing[m.id].get("missing", "")
        if r["status"] in ("killed", "timed out"):
            r["listed_problem"] = (
                "listed in opcourse/mutation/missing_checks.json, but the grader now kills it: remove the entry"
            )
            failures.append(f"{ex} {m.id} {m.label}: {r['listed_problem']}")
    if r["status"] == "survived":
        r["diff"] = diff_of(m)
        if m.id not in missing:
            failures.append(
                f"{ex} {m.id} {m.label}: survived, listed neither in equivalent.json nor in "
                f"missing_checks.json\n{r['diff']}"
            )
    if r["status"] == "error":
        failures.append(f"{ex} {m.id} {m.label}: {r['detail']}")
    for k in ("cached",):
        r.pop(k, None)
    return r


def _grade_exercise(args, plan: tuple, ctx: dict, failures: list) -> dict | None:
    """Grades one exercise's plan and writes its reports; its summary, or None when its reference fails."""
    ex, files, mutants, chosen, note = plan
    gpu, eq, missing, out = ctx["gpu"], ctx["eq"], ctx["missing"], ctx["out"]
    fp = judge_fingerprint(ex)
    grader = Grader(args, ex, fp)
    say(
        f"{ex}: {len(chosen)} of {len(mutants)} mutants of {', '.join(files) or 'no file'}"
        + (f" ({note})" if note else "")
        + f"; seed {args.seed}, {args.jobs} at once"
    )
    to_grade = [m for m in chosen if gpu or not m.gpu_only or args.grade_gpu_only]
    results = _not_judged(chosen, to_grade)
    base = None
    if to_grade and not args.no_baseline:
        base = grader.grade(None)
        if base["status"] != "survived":
            failures.append(
                f"{ex}: the reference itself does not pass every row with seed {args.seed} "
                f"({base['status']}: {base['detail']}); its mutants are not graded"
            )
            say(f"  {failures[-1]}")
            return None
    t0 = time.monotonic()
    _grade_all(args, grader, to_grade, results, ctx["started"])
    base_skipped = skipped_rows(base) if gpu else set()
    final = [_final_result(ex, m, results[m.id], base_skipped, eq, missing, failures) for m in chosen]
    run = {
        "command": ctx["command"],
        "commit": ctx["commit"],
        "fingerprint": fp,
        "seed": args.seed,
        "gpu": gpu,
        "generator": args.generator,
        "machine": machine(gpu),
        "files": files,
        "generated": len(mutants),
        "selected": len(chosen),
        "sample_note": note,
        "worker_timeout": args.worker_timeout,
        "seconds": round(time.monotonic() - t0, 1),
        "jobs": args.jobs,
        "grading_seconds": round(sum(r.get("seconds", 0.0) for r in results.values()), 1),
    }
    run["not_graded"] = [m.id for m in mutants if m not in chosen]
    summary = write_reports(out, ex, run, final)
    c = summary["counts"]
    say(
        f"{ex}: "
        + ", ".join(f"{c[s]} {s}" for s in STATUSES if c[s])
        + f"; score {summary['detected']}/{summary['scored']} = {pct(summary['score'])}  ({out / (ex + '.md')})"
    )
    return summary


def cmd_mutants(args) -> int:
    args.seed = resolve_seed(args.seed)
    _parse_operators(args)
    exercises = [resolve_exercise(e) for e in args.exercises if e != "all"] or exercise_ids()
    eq, missing = _listed_or_die()
    gpu = has_gpu(args.gpu)
    plans = [_plan(ex, args, gpu, eq, missing) for ex in exercises]
    if args.list or args.show:
        _print_plans(args, plans, eq, missing)
        return 0

    judge_path()  # dies with the fix when the judge is not built
    out = _reports_dir(args)
    ctx = {
        "gpu": gpu,
        "eq": eq,
        "missing": missing,
        "out": out,
        "command": "./course mutants " + " ".join(sys.argv[2:] if sys.argv[1:2] == ["mutants"] else sys.argv[1:]),
        "commit": git_commit()[:12] or "unknown",
        "started": time.monotonic(),  # --budget counts from here: every exercise, baselines included
    }
    summaries, failures = [], []
    for plan in plans:
        summary = _grade_exercise(args, plan, ctx, failures)
        if summary is not None:
            summaries.append(summary)
    if summaries:
        write_summary(out, summaries)
        say(f"reports: {out}/summary.md and one EX.md + EX.json per exercise")
    if failures and args.check:
        print("\nmutants --check failed:", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    return 0
