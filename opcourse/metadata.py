"""The one Python reader of the course's exercise metadata: exercises/NN_topic/exercise.json (format 2) and the check
catalog autograder/metadata/checks.json. The CLI, the site's build, the test drivers and the integrity check all read
exercises through load(); the judge has its own reader in C++ (Exercise::load) and CMake its own (cmake/Exercises.cmake).

load() returns the exercise with its checks resolved: a list of {"id", "title", "points", "hint", "cuda", "toolkit"}
in table order ("toolkit": needs the CUDA toolkit, which every "cuda" check does too), so no reader needs to know about
the catalog.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORMAT_VERSION = 2
HERE = ROOT / "autograder" / "metadata"  # the catalog and the schemas, where the C++ judge reads them too


class MetadataError(Exception):
    """exercise.json or checks.json is malformed: the message names the file and what is wrong."""


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise MetadataError(f"{path}: cannot read it ({e.strerror})") from None
    except ValueError as e:
        raise MetadataError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise MetadataError(f"{path}: not a JSON object")
    return data


def catalog(root: Path = ROOT) -> dict[str, dict]:
    """Every check the judge implements: id -> {title, points, hint, cuda}."""
    path = Path(root) / "autograder" / "metadata" / "checks.json"
    data = _read(path)
    if data.get("format_version") != 1 or not isinstance(data.get("checks"), dict):
        raise MetadataError(f"{path}: expected format_version 1 and a 'checks' object")
    return data["checks"]


def exercise_ids(root: Path = ROOT) -> list[str]:
    return sorted(p.parent.name for p in (Path(root) / "exercises").glob("*/exercise.json"))


def raw(ex: str, root: Path = ROOT) -> dict:
    """exercise.json as written (checks as ids), format checked."""
    path = Path(root) / "exercises" / ex / "exercise.json"
    data = _read(path)
    if data.get("format_version") != FORMAT_VERSION:
        raise MetadataError(
            f"{path}: format_version {data.get('format_version')!r}; this course reads "
            f"{FORMAT_VERSION} (checks as ids of autograder/metadata/checks.json)"
        )
    return data


def load(ex: str, root: Path = ROOT) -> dict:
    """The exercise with its checks resolved from the catalog (MetadataError names what is wrong)."""
    data = raw(ex, root)
    known = catalog(root)
    where = f"exercises/{ex}/exercise.json"
    checks = []
    for entry in data.get("checks", []):
        cid = entry if isinstance(entry, str) else entry.get("id") if isinstance(entry, dict) else None
        if cid not in known:
            raise MetadataError(f"{where}: check {cid!r} is not declared in autograder/metadata/checks.json")
        check = {"id": cid, "cuda": False, **known[cid]}
        check["toolkit"] = bool(check.get("toolkit") or check["cuda"])
        if isinstance(entry, dict) and "hint" in entry:
            check["hint"] = entry["hint"]
        checks.append(check)
    sources, cuda_sources = data.get("sources", []), data.get("cuda_sources", [])
    if not set(cuda_sources) <= set(sources):
        raise MetadataError(
            f"{where}: cuda_sources names files that are not in sources: {sorted(set(cuda_sources) - set(sources))}"
        )
    if uncounted := [s for s in sources if s.endswith(".cu") and s not in cuda_sources]:
        raise MetadataError(f"{where}: {uncounted} need the CUDA toolkit: list them in cuda_sources")
    if data.get("abi") == "python" and (f"{data.get('library')}.py" not in sources or cuda_sources):
        raise MetadataError(
            f'{where}: a Python-defined exercise ("abi": "python") names its \'library\', the module LIBRARY.py of '
            "'sources', and compiles nothing (no 'cuda_sources')"
        )
    in_folder = [s for s in sources if "/" in s]
    if in_folder and (
        data.get("abi") != "stable" or any(s != f"{data.get('library')}/{Path(s).name}" for s in in_folder)
    ):
        raise MetadataError(
            f"{where}: {in_folder}: a source in a folder must be the stable-ABI package's LIBRARY/NAME.py"
        )
    return {**data, "checks": checks}


def max_points(meta: dict) -> float:
    return float(sum(c.get("points", 0) for c in meta["checks"]))


def schema_problems(root: Path = ROOT) -> list[str]:
    """Every exercise.json and checks.json against their JSON Schemas (jsonschema, from the course's pins)."""
    import jsonschema  # the course's venv has it; a machine without it cannot run the integrity check

    problems = []
    for name, files in (
        ("checks.schema.json", [Path(root) / "autograder" / "metadata" / "checks.json"]),
        ("exercise.schema.json", [Path(root) / "exercises" / ex / "exercise.json" for ex in exercise_ids(root)]),
    ):
        validator = jsonschema.Draft202012Validator(json.loads((HERE / name).read_text()))
        for f in files:
            try:
                data = json.loads(f.read_text())
            except (OSError, ValueError) as e:
                problems.append(f"{f.relative_to(root)}: unreadable ({e})")
                continue
            for err in sorted(validator.iter_errors(data), key=lambda e: list(e.path)):
                at = "/".join(map(str, err.path)) or "(top)"
                problems.append(f"{f.relative_to(root)}: breaks {name} at {at}: {err.message}")
    return problems
