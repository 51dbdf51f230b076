"""Exercises: the ids (folders of exercises/ with an exercise.json), their metadata, and short names resolved."""
from __future__ import annotations

import json

from .common import ROOT, die


def exercise_ids() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "exercises").glob("*/exercise.json"))


def load_exercise(ex: str) -> dict:
    path = ROOT / "exercises" / ex / "exercise.json"
    if not path.is_file():
        known = ", ".join(exercise_ids()) or "none"
        die(f"no exercise '{ex}' (known: {known}); `./course list` shows them all")
    return json.loads(path.read_text())


def resolve_exercise(ex: str) -> str:
    """Accepts the full id (02_schema), its number (02, 2) or its name (schema)."""
    ids = exercise_ids()
    if ex in ids:
        return ex
    matches = [i for i in ids if i.split("_", 1)[0].lstrip("0") == ex.lstrip("0") or i.split("_", 1)[-1] == ex]
    if len(matches) == 1:
        return matches[0]
    load_exercise(ex)  # dies with the list of known ids
    return ex


def total_points(meta: dict) -> float:
    """The points an exercise is worth: the sum of its checks'."""
    return float(sum(c.get("points", 0) for c in meta["checks"]))


def stub_files(ex: str) -> list[str]:
    """Files of the stub a student edits: every file of the exercise folder but exercise.json."""
    meta = load_exercise(ex)
    names = set(meta.get("sources", []))
    names.update(meta.get("student_files", []))
    for p in (ROOT / "exercises" / ex).iterdir():
        if p.is_file() and p.name != "exercise.json" and not p.name.startswith("."):
            names.add(p.name)
    return sorted(names)
