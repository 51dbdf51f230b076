"""The machine-readable summary of a GPU run's evidence folder (evidence/gpu/DATE-NAME/summary.json), and what the
site renders from it.

A GPU run (tools/gpu/run_on_gpu.sh) leaves its logs in one folder: summary.txt (the machine: GPU, driver, torch, CUDA),
main.log (`./course main`: every reference solution's table, with the GPU), verdicts-STEP.md and
verdicts-STEP-no-gpu.md (the planted cases' rows that failed and were skipped, with and without the GPU, one table per
step of the run that graded planted cases), and chapter-figures/ (the `chapter-figures` step: figures.json, the
measured values chapters 8 and 9 quote, beside the profiler's and the JIT probe's text output).
`summarize(folder)` reads them into one dict; `python -m opcourse.site.gpu_evidence evidence/gpu/FOLDER...` writes it
to FOLDER/summary.json (the run writes it too). The site's pages quote GPU figures only through it (course_markdown.py): a
```gpu-rows block or a <!-- gpu-row: FOLDER EXERCISE ROW --> mark is rendered from summary.json, a
<!-- gpu-figure: FOLDER KEY.PATH --> mark from its "figures", a ```gpu-text FOLDER FILE block from the file itself, each
with the machine, the date and the file; a name the summary lacks stops the build. Nothing here is retyped by hand.

A reference solution's row is shown from the newest run that logged it (`newest_reference_row`): a page names the
folder `newest` and gets it, and a page that names an older run for a row a newer run has logged stops the build, so
two pages cannot show two runs' figures for the same row. A run logs reference tables in main.log (`./course main`)
and in hang-reference.txt (tools/gpu/time_hang.sh grades 04's reference solution with the judge's default settings).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "evidence" / "gpu"

_TABLE_HEAD = re.compile(r"^(\d\d_[a-z_]+) - (.+)$")
_ROW = re.compile(r"^\s+\d+\s+(\S+)\s+(PASS|FAIL|SKIPPED)\s+(\S+)\s+(.*)$")


class EvidenceError(Exception):
    """A folder, file, exercise or row the evidence does not hold."""


def _machine(folder: Path) -> dict:
    text = (folder / "summary.txt").read_text() if (folder / "summary.txt").is_file() else ""
    m = re.search(r"^machine: (.+?), ([0-9.]+)$", text, re.M)
    t = re.search(r"torch (\S+) cuda (\S+)", text)
    if not (m and t):
        raise EvidenceError(f"{folder.relative_to(ROOT)}/summary.txt does not name the machine (GPU, driver, torch)")
    return {"gpu": m.group(1), "driver": m.group(2), "torch": t.group(1), "cuda": t.group(2)}


def _started(folder: Path) -> str:
    """When the run's first step began (HH:MM:SS UTC, from summary.txt): with the date, what orders the runs."""
    text = (folder / "summary.txt").read_text() if (folder / "summary.txt").is_file() else ""
    m = re.search(r"^=== .*\((\d\d:\d\d:\d\d)\)$", text, re.M)
    return m.group(1) if m else ""


def _tables(log: Path) -> dict:
    """{exercise: {row: {"status", "points", "detail"}}} from a log of judge tables (details as the table prints
    them, cut at its width)."""
    tables, current = {}, None
    for line in log.read_text(errors="replace").splitlines():
        head = _TABLE_HEAD.match(line)
        if head:
            current = tables.setdefault(head.group(1), {})
            continue
        row = _ROW.match(line)
        if row and current is not None:
            current[row.group(1)] = {"status": row.group(2), "points": row.group(3), "detail": row.group(4).strip()}
        elif line.startswith("score "):  # the table's end
            current = None
    return tables


def _verdicts(md: Path) -> dict:
    """{"EXERCISE/CASE": {"cuda_ran", "failed": [...], "skipped": [...], "as_expected"}} from a verdicts table."""
    out = {}
    for line in md.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not re.match(r"\d\d_", cells[0]):
            continue
        rows = lambda c: [] if c == "-" else [r.strip() for r in c.split(",")]  # noqa: E731
        out[f"{cells[0]}/{cells[1]}"] = {
            "cuda_ran": cells[2] == "yes",
            "failed": rows(cells[3]),
            "skipped": rows(cells[4]),
            "as_expected": cells[5].startswith("yes"),
        }
    return out


FIGURES = "chapter-figures/figures.json"  # tools/gpu/chapter_figures.py writes it
# the files of a run that hold judge tables of the reference solutions (solutions/EXERCISE), in the order they are read
# (a later file's table of an exercise replaces an earlier one's): `./course main`'s log, and time_hang.sh's grade of
# 04's reference
REFERENCE_LOGS = ("main.log", "hang-reference.txt")
NEWEST = "newest"  # the folder a page names to get a row from the newest run that logged it


def summarize(folder: Path) -> dict:
    folder = Path(folder)
    if not folder.is_dir():
        raise EvidenceError(f"no evidence folder {folder}")
    # the run writes its logs outside the clone (run_on_gpu.sh LOGS); the site reads the copy under evidence/gpu/
    shown = folder.resolve().relative_to(ROOT) if folder.resolve().is_relative_to(ROOT) else folder
    summary = {
        "folder": str(shown),
        "date": folder.name[:10],
        "started": _started(folder),
        "machine": _machine(folder),
        "references": {},
        "reference_logs": {},
        "cases": {},
        "cases_without_gpu": {},
    }
    if (folder / FIGURES).is_file():
        figures = json.loads((folder / FIGURES).read_text())
        if figures.get("machine") != summary["machine"]:  # one run, one machine: a figure copied in from elsewhere
            raise EvidenceError(
                f"{summary['folder']}/{FIGURES} names the machine {figures.get('machine')}, "
                f"summary.txt {summary['machine']}"
            )
        summary["figures"] = figures
    for log in REFERENCE_LOGS:
        if (folder / log).is_file():
            for exercise, rows in _tables(folder / log).items():
                summary["references"][exercise] = rows
                summary["reference_logs"][exercise] = log
    for md in sorted(folder.glob("verdicts-*.md")):  # one table per step of the run (gpu-cases, cuda-cases, ...)
        summary["cases_without_gpu" if md.stem.endswith("-no-gpu") else "cases"].update(_verdicts(md))
    return summary


def load(name: str) -> dict:
    """The committed summary.json of evidence/gpu/NAME, checked against the logs it was made from."""
    folder = EVIDENCE / name
    path = folder / "summary.json"
    if not path.is_file():
        raise EvidenceError(
            f"evidence/gpu/{name}/summary.json does not exist (python -m opcourse.site.gpu_evidence "
            f"evidence/gpu/{name} writes it from the run's logs)"
        )
    stored = json.loads(path.read_text())
    if stored != summarize(folder):
        raise EvidenceError(
            f"evidence/gpu/{name}/summary.json differs from the logs beside it: regenerate it "
            f"(python -m opcourse.site.gpu_evidence evidence/gpu/{name})"
        )
    return stored


def newest_case_verdicts() -> dict:
    """{"EXERCISE/CASE": (summary, verdict)}: each planted case's verdict in the newest GPU run that graded it with its
    CUDA rows run (runs ordered by date and start time). An older run that got it right does not hide a newer one
    that did not."""
    runs = [load(p.parent.name) for p in EVIDENCE.glob("*/summary.json")]
    newest = {}
    for summary in sorted(runs, key=lambda s: (s["date"], s["started"])):
        for case, verdict in summary["cases"].items():
            if verdict["cuda_ran"]:
                newest[case] = (summary, verdict)
    return newest


def reference_row(summary: dict, exercise: str, row: str) -> dict:
    try:
        return summary["references"][exercise][row]
    except KeyError:
        logs = "/".join(REFERENCE_LOGS)
        raise EvidenceError(
            f"{summary['folder']}/{summary['reference_logs'].get(exercise, logs)} has no row {row} of {exercise}"
        ) from None


def _order(summary: dict) -> tuple:
    return summary["date"], summary["started"], summary["folder"]


@functools.lru_cache(maxsize=None)
def _runs() -> tuple:
    """Every committed run's summary, oldest first (by date and start time)."""
    return tuple(sorted((load(p.parent.name) for p in EVIDENCE.glob("*/summary.json")), key=_order))


def newest_reference_row(exercise: str, row: str) -> tuple:
    """(summary, row) of the newest run whose reference tables hold ROW of EXERCISE."""
    found = [s for s in _runs() if row in s["references"].get(exercise, {})]
    if not found:
        raise EvidenceError(f"no run under evidence/gpu/ logged row {row} of {exercise}'s reference solution")
    return found[-1], found[-1]["references"][exercise][row]


def newer_reference_row(summary: dict, exercise: str, row: str):
    """The newest run that logged ROW of EXERCISE after SUMMARY's run did, or None."""
    newest, _ = newest_reference_row(exercise, row)
    return newest if _order(newest) > _order(summary) else None


def newest_without_gpu(exercise: str):
    """(summary, verdict, file) of the newest run that graded EXERCISE's reference without the GPU, the verdicts table
    it is in; (None, None, None) if none did."""
    case = f"{exercise}/reference"
    found = [s for s in _runs() if case in s["cases_without_gpu"]]
    if not found:
        return None, None, None
    s = found[-1]
    tables = sorted((ROOT / s["folder"]).glob("verdicts-*-no-gpu.md"))
    file = next((t.name for t in tables if case in _verdicts(t)), "")
    return s, s["cases_without_gpu"][case], file


def figure(summary: dict, path: str):
    """The value at KEY.PATH of the run's figures (a list index is a number: jit.timings.1.ms.0)."""
    value = summary.get("figures")
    if value is None:
        raise EvidenceError(f"{summary['folder']} has no {FIGURES}")
    for key in path.split("."):
        try:
            value = value[int(key)] if isinstance(value, list) else value[key]
        except (KeyError, IndexError, ValueError, TypeError):
            raise EvidenceError(f"{summary['folder']}/{FIGURES} has no {path}") from None
    if isinstance(value, (dict, list)):
        raise EvidenceError(f"{summary['folder']}/{FIGURES}: {path} is not one figure but {type(value).__name__}")
    return value


def text_file(summary: dict, file: str) -> str:
    """A text file the run wrote into its folder, as it wrote it."""
    folder = (ROOT / summary["folder"]).resolve()
    path = (folder / file).resolve()
    if folder not in path.parents or not path.is_file():
        raise EvidenceError(f"{summary['folder']} has no file {file}")
    return path.read_text(errors="replace")


def machine_line(summary: dict, file: str | None = None) -> str:
    """The machine, the date and the file the figures come from (main.log, else the run's folder)."""
    m = summary["machine"]
    if file is None:
        file = "main.log" if "main.log" in summary["reference_logs"].values() else ""
    return (
        f"{m['gpu']}, driver {m['driver']}, CUDA {m['cuda']}, torch {m['torch']}; {summary['date']}; "
        f"`{summary['folder']}{'/' + file if file else ''}`"
    )


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for name in argv:
        folder = Path(name).resolve()
        (folder / "summary.json").write_text(json.dumps(summarize(folder), indent=2) + "\n")
        print(f"wrote {folder / 'summary.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
