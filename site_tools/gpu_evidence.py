"""The machine-readable summary of a GPU run's evidence folder (evidence/gpu/DATE-NAME/summary.json), and what the
site renders from it.

A GPU run (tools/gpu/run_on_gpu.sh) leaves its logs in one folder: summary.txt (the machine: GPU, driver, torch, CUDA),
main.log (`./course main`: every reference solution's table, with the GPU), verdicts-STEP.md and
verdicts-STEP-no-gpu.md (the planted cases' rows that failed and were skipped, with and without the GPU, one table per
step of the run that graded planted cases), and chapter-figures/ (the `chapter-figures` step: figures.json, the
measured values chapters 8 and 9 quote, beside the profiler's and the JIT probe's text output).
`summarize(folder)` reads them into one dict; `python3 site_tools/gpu_evidence.py evidence/gpu/FOLDER...` writes it
to FOLDER/summary.json (the run writes it too). The site's pages quote GPU figures only through it (course_markdown.py): a
```gpu-rows block or a <!-- gpu-row: FOLDER EXERCISE ROW --> mark is rendered from summary.json, a
<!-- gpu-figure: FOLDER KEY.PATH --> mark from its "figures", a ```gpu-text FOLDER FILE block from the file itself, each
with the machine, the date and the file; a name the summary lacks stops the build. Nothing here is retyped by hand.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
        out[f"{cells[0]}/{cells[1]}"] = {"cuda_ran": cells[2] == "yes", "failed": rows(cells[3]),
                                         "skipped": rows(cells[4]), "as_expected": cells[5].startswith("yes")}
    return out


FIGURES = "chapter-figures/figures.json"  # tools/gpu/chapter_figures.py writes it


def summarize(folder: Path) -> dict:
    folder = Path(folder)
    if not folder.is_dir():
        raise EvidenceError(f"no evidence folder {folder}")
    # the run writes its logs outside the clone (run_on_gpu.sh LOGS); the site reads the copy under evidence/gpu/
    shown = folder.resolve().relative_to(ROOT) if folder.resolve().is_relative_to(ROOT) else folder
    summary = {"folder": str(shown), "date": folder.name[:10], "started": _started(folder), "machine": _machine(folder),
               "references": {}, "cases": {}, "cases_without_gpu": {}}
    if (folder / FIGURES).is_file():
        figures = json.loads((folder / FIGURES).read_text())
        if figures.get("machine") != summary["machine"]:  # one run, one machine: a figure copied in from elsewhere
            raise EvidenceError(f"{summary['folder']}/{FIGURES} names the machine {figures.get('machine')}, "
                                f"summary.txt {summary['machine']}")
        summary["figures"] = figures
    if (folder / "main.log").is_file():
        summary["references"] = _tables(folder / "main.log")
    for md in sorted(folder.glob("verdicts-*.md")):  # one table per step of the run (gpu-cases, cuda-cases, ...)
        summary["cases_without_gpu" if md.stem.endswith("-no-gpu") else "cases"].update(_verdicts(md))
    return summary


def load(name: str) -> dict:
    """The committed summary.json of evidence/gpu/NAME, checked against the logs it was made from."""
    folder = EVIDENCE / name
    path = folder / "summary.json"
    if not path.is_file():
        raise EvidenceError(f"evidence/gpu/{name}/summary.json does not exist (python3 site_tools/gpu_evidence.py "
                            f"evidence/gpu/{name} writes it from the run's logs)")
    stored = json.loads(path.read_text())
    if stored != summarize(folder):
        raise EvidenceError(f"evidence/gpu/{name}/summary.json differs from the logs beside it: regenerate it "
                            f"(python3 site_tools/gpu_evidence.py evidence/gpu/{name})")
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
        raise EvidenceError(f"{summary['folder']}/main.log has no row {row} of {exercise}") from None


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
        file = "main.log" if summary["references"] else ""
    return (f"{m['gpu']}, driver {m['driver']}, CUDA {m['cuda']}, torch {m['torch']}; {summary['date']}; "
            f"`{summary['folder']}{'/' + file if file else ''}`")


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
