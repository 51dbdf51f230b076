"""Exercises: the ids (folders of exercises/ with an exercise.json), their metadata, and short names resolved."""

from __future__ import annotations

import difflib

from .. import metadata as course_metadata  # the one Python reader of exercise.json: checks resolved from the catalog
from .common import ROOT, die


def exercise_ids() -> list[str]:
    return course_metadata.exercise_ids(ROOT)


def load_exercise(ex: str) -> dict:
    path = ROOT / "exercises" / ex / "exercise.json"
    if not path.is_file():
        ids = exercise_ids()
        names = {i.split("_", 1)[-1]: i for i in ids}  # a typo of a name (cpuu) or of an id (03_cpuu)
        close = difflib.get_close_matches(ex, list(names) + ids, n=1, cutoff=0.7)
        fix = f"did you mean {names.get(close[0], close[0])}? " if close else ""
        die(
            f"no exercise '{ex}': {fix}the exercises are {', '.join(ids) or 'none'} (a number or name works too: "
            f"./course grade 3, ./course grade cpu)"
        )
    try:
        return course_metadata.load(ex, ROOT)
    except course_metadata.MetadataError as e:
        die(str(e))


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
    return course_metadata.max_points(meta)


def stub_files(ex: str) -> list[str]:
    """Files of the stub a student edits: every file of the exercise folder but exercise.json."""
    meta = load_exercise(ex)
    names = set(meta.get("sources", []))
    names.update(meta.get("student_files", []))
    for p in (ROOT / "exercises" / ex).iterdir():
        if p.is_file() and p.name != "exercise.json" and not p.name.startswith("."):
            names.add(p.name)
    return sorted(names)
