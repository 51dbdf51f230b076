"""The one reader and writer of the judge's reports on the Python side: rows.json (every row of a grade, in progress or
final; autograder/schemas/rows.schema.json), Gradescope's results.json (gradescope_results.schema.json, beside it)
and phase.json (what a running judge is doing; phase.schema.json).

Every document read or written is checked against its schema, so a report that does not match stops with one line
naming the file and its first mismatch (ReportError, a ValueError), never a traceback and never a silent misreading.
The schemas are checked with jsonschema, which the course's environment has; a Python without it (an installed torch
on the GPU machine, COURSE_PYTHON=python3) still gets the typed reading below, which refuses a field of the wrong
type."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# beside the code that reads them (not COURSE_ROOT's, which may be a course without the grader: a student's copy)
SCHEMAS = Path(__file__).resolve().parents[1] / "autograder" / "schemas"
ROWS_SCHEMA = "rows.schema.json"
RESULTS_SCHEMA = "gradescope_results.schema.json"
PHASE_SCHEMA = "phase.schema.json"


class ReportError(ValueError):
    """A report that is not JSON, or does not match its schema: str() names the file and the first mismatch."""

    def __init__(self, path: Path | str | None, what: str):
        self.path = Path(path) if path is not None else None
        super().__init__(f"{path if path is not None else '(a report)'}: {what}")


_validators: dict[str, Any] = {}


def _validator(schema: str):
    """jsonschema's validator of one of the course's schemas; None where jsonschema is not installed."""
    if schema not in _validators:
        try:
            import jsonschema
        except ImportError:
            _validators[schema] = None
        else:
            try:
                _validators[schema] = jsonschema.Draft202012Validator(json.loads((SCHEMAS / schema).read_text()))
            except (OSError, ValueError) as e:
                raise ReportError(SCHEMAS / schema, f"the schema cannot be read ({e})") from None
    return _validators[schema]


def first_mismatch(doc: Any, schema: str) -> str:
    """'' when `doc` matches autograder/schemas/`schema`; else where and how it first does not (the error jsonschema
    ranks most relevant, at the shallowest place)."""
    validator = _validator(schema)
    if validator is None:
        return ""
    import jsonschema

    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is None:
        return ""
    where = "/".join(map(str, error.absolute_path)) or "(top)"
    return f"at {where}: {error.message}"


def check(doc: Any, schema: str, path: Path | str | None, what: str) -> None:
    """Raises ReportError when `doc` does not match the schema."""
    mismatch = first_mismatch(doc, schema)
    if mismatch:
        raise ReportError(path, f"not {what} (autograder/schemas/{schema}): {mismatch}")


def read_json(path: Path | str, schema: str, what: str) -> Any:
    """The document in `path`, checked against the schema. OSError when the file cannot be read; ReportError when it
    is not JSON or does not match."""
    text = Path(path).read_text()
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise ReportError(path, f"not JSON ({e})") from None
    check(doc, schema, path, what)
    return doc


def write_json(path: Path | str, doc: Any, schema: str, what: str) -> None:
    """Writes `doc` (indent 2) beside `path` and renames it into place, after checking it against the schema: a
    reader never sees half a file, and nothing the course writes breaks its own format."""
    path = Path(path)
    check(doc, schema, path, what)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2))
    tmp.replace(path)


# --- rows.json -------------------------------------------------------------------------------------------------------
ROWS_WHAT = "a rows.json as the judge writes it"


@dataclass(frozen=True)
class Row:
    """One check's row as the judge decided it (row_json in autograder/judge/report.cpp)."""

    id: str
    status: str = "FAIL"  # PASS, FAIL or SKIPPED
    title: str = ""
    points: float = 0.0
    max_points: float = 0.0
    detail: str = ""
    expected: str = ""
    seen: str = ""
    hint: str = ""
    not_graded: str = ""  # why this machine could not grade it; "" when it could

    @classmethod
    def from_json(cls, j: dict) -> Row:
        return cls(
            id=_text(j, "id"),
            status=_text(j, "status", "FAIL"),
            title=_text(j, "title"),
            points=_number(j, "points"),
            max_points=_number(j, "max_points"),
            detail=_text(j, "detail"),
            expected=_text(j, "expected"),
            seen=_text(j, "seen"),
            hint=_text(j, "hint"),
            not_graded=_text(j, "not_graded"),
        )


@dataclass
class Report:
    """A rows.json: the judge's (final, or in progress while the grade runs), or batch's stand-in for a submission the
    judge never saw (missing, refused, error)."""

    exercise: str
    score: float = 0.0
    max_score: float = 0.0  # the points of the rows that were graded
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    rows: list[Row] = field(default_factory=list)
    points_total: float = 0.0  # every row's points, graded or not
    not_graded_points: float = 0.0
    not_graded_why: dict[str, float] = field(default_factory=dict)
    final: bool = True
    undecided: list[str] = field(default_factory=list)
    deciding: str | None = None
    protections: list[dict] = field(default_factory=list)
    timeline: list[dict] = field(default_factory=list)
    seconds: float = 0.0  # the judge's own clock (final reports)
    missing: bool = False  # stand-ins: not submitted ...
    refused: str = ""  # ... refused, and why ...
    error: str = ""  # ... or the judge wrote no readable rows.json
    data: dict = field(default_factory=dict)  # the document as read

    @classmethod
    def from_json(cls, d: dict, path: Path | str | None = None) -> Report:
        try:
            ng = d.get("not_graded") if isinstance(d.get("not_graded"), dict) else {}
            why = ng.get("why") if isinstance(ng.get("why"), dict) else {}
            max_score = _number(d, "max_score")
            return cls(
                exercise=_text(d, "exercise"),
                score=_number(d, "score"),
                max_score=max_score,
                passed=int(d.get("passed", 0)),
                failed=int(d.get("failed", 0)),
                skipped=int(d.get("skipped", 0)),
                rows=[Row.from_json(r) for r in d.get("rows", [])],
                points_total=float(d.get("points_total", max_score)),
                not_graded_points=float(ng.get("points", 0) or 0),
                not_graded_why={str(k): float(v) for k, v in why.items()},
                final=d.get("final", True) is True,
                undecided=[str(i) for i in d.get("undecided") or []],
                deciding=d.get("deciding") if isinstance(d.get("deciding"), str) else None,
                protections=[p for p in d.get("protections", []) if isinstance(p, dict)],
                timeline=[s for s in d.get("timeline", []) if isinstance(s, dict)],
                seconds=float(d.get("seconds", 0) or 0),
                missing=d.get("missing") is True,
                refused=_text(d, "refused"),
                error=_text(d, "error"),
                data=d,
            )
        except (TypeError, ValueError, AttributeError) as e:  # only where jsonschema is not there to say it first
            raise ReportError(path, f"not {ROWS_WHAT}: {e}") from None

    def row(self, row_id: str) -> Row | None:
        return next((r for r in self.rows if r.id == row_id), None)

    def failing(self) -> list[Row]:
        return [r for r in self.rows if r.status == "FAIL"]

    def decided(self) -> list[Row]:
        """The rows with a verdict: in a report in progress, neither undecided nor being decided."""
        open_ids = set(self.undecided) | {self.deciding}
        return [r for r in self.rows if r.id not in open_ids]

    def not_graded(self) -> tuple[float, dict[str, float]]:
        """(points, {why: points}) this machine could not grade."""
        return self.not_graded_points, dict(self.not_graded_why)

    def protections_off(self) -> list[str]:
        return [str(p.get("id")) for p in self.protections if p.get("on") is False]

    def build_error(self) -> str:
        """The first compiler error of a grade whose build failed (its build row's detail), control characters as
        '?' (it quotes the submission); "" when the build passed."""
        build = self.row("build")
        if build is None or build.status != "FAIL":
            return ""
        return printable(build.detail)


def _text(d: dict, key: str, default: str = "") -> str:
    v = d.get(key, default)
    if not isinstance(v, str):
        raise TypeError(f"{key} is {type(v).__name__}, not a string")
    return v


def _number(d: dict, key: str) -> float:
    v = d.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{key} is {type(v).__name__}, not a number")
    return float(v)


def printable(text: str) -> str:
    """Control characters as '?': text that quotes a submission, on one terminal line."""
    return "".join(c if c >= " " and c != "\x7f" else "?" for c in text)


def rows_file(folder_or_file: Path | str) -> Path:
    p = Path(folder_or_file)
    return p if p.name.endswith(".json") else p / "rows.json"


def read_rows(folder_or_file: Path | str) -> Report:
    """The rows.json in a grade's folder (or that file): OSError when there is none; ReportError when it does not
    match autograder/schemas/rows.schema.json."""
    path = rows_file(folder_or_file)
    doc = read_json(path, ROWS_SCHEMA, ROWS_WHAT)
    if not isinstance(doc, dict):  # (where jsonschema is not installed)
        raise ReportError(path, f"not {ROWS_WHAT}: a JSON {type(doc).__name__}, not an object")
    return Report.from_json(doc, path)


def read_rows_since(out_dir: Path | str, since: float) -> Report | None:
    """The rows.json of a grade that started at `since` (file times): None while there is none of this grade yet (an
    earlier grade's, or none), or it cannot be read (mid-rename)."""
    path = rows_file(out_dir)
    try:
        if path.stat().st_mtime < since:
            return None
        return read_rows(path)
    except (OSError, ValueError):
        return None


def decided_rows(out_dir: Path | str, since: float) -> list[Row]:
    """The rows a running judge has decided so far (its rows.json, rewritten after every row), in the order they were
    decided as far as one reading tells; [] before this run's first rows.json (written at or after `since`)."""
    report = read_rows_since(out_dir, since)
    return report.decided() if report else []


def build_error(out: Path | str, since: float = 0.0) -> str:
    """The first compiler error of a grade whose build failed, from its rows.json (written at or after `since`, so a
    stale one from an earlier grade is not read); "" when the build passed or there is no such grade."""
    report = read_rows_since(out, since)
    return report.build_error() if report else ""


def stand_in(
    ex: str, max_score: float, checks: int, *, missing: bool = False, refused: str = "", error: str = ""
) -> dict:
    """batch's rows.json for a submission the judge did not grade: every check failed, and why."""
    doc = {"exercise": ex, "score": 0.0, "max_score": max_score, "passed": 0, "failed": checks, "skipped": 0}
    if missing:
        return {**doc, "rows": [], "missing": True}
    if refused:
        return {**doc, "rows": [], "refused": refused}
    return {**doc, "error": error, "rows": []}


def write_rows(folder: Path | str, doc: dict) -> Report:
    """Writes a rows.json (a stand-in: only the judge writes its own) into `folder`, checked against the schema."""
    path = rows_file(folder)
    write_json(path, doc, ROWS_SCHEMA, ROWS_WHAT)
    return Report.from_json(doc, path)


# --- results.json (Gradescope) ---------------------------------------------------------------------------------------
RESULTS_WHAT = "a results.json in Gradescope's format"


def read_results(folder_or_file: Path | str) -> dict:
    p = Path(folder_or_file)
    return read_json(p if p.name.endswith(".json") else p / "results.json", RESULTS_SCHEMA, RESULTS_WHAT)


def write_results(path: Path | str, doc: dict) -> None:
    write_json(path, doc, RESULTS_SCHEMA, RESULTS_WHAT)


# --- phase.json ------------------------------------------------------------------------------------------------------
PHASES = ("starting", "compiling", "linking", "checks", "done")


@dataclass(frozen=True)
class Phase:
    """What a running judge is doing (the judge writes it beside rows.json): `text` is shown as it is."""

    phase: str = "starting"
    text: str = "starting"


def read_phase(out_dir: Path | str, since: float = 0.0) -> Phase:
    """The phase.json a judge grading into `out_dir` wrote at or after `since` (file times); "starting" while there is
    none of this grade yet or it cannot be read (the judge renames each one into place)."""
    path = Path(out_dir) / "phase.json"
    try:
        if path.stat().st_mtime < since:
            return Phase()
        doc = read_json(path, PHASE_SCHEMA, "a phase.json as the judge writes it")
        phase, text = doc["phase"], doc["text"]
    except (OSError, ValueError, KeyError, TypeError):
        return Phase()
    if phase not in PHASES or not isinstance(text, str) or not text:  # (where jsonschema is not installed)
        return Phase()
    return Phase(phase, printable(text))


def clear_phase(out_dir: Path | str) -> None:
    """Removes an earlier grade's phase.json, so the next grade's progress starts at "starting"."""
    try:
        os.unlink(Path(out_dir) / "phase.json")
    except OSError:
        pass
