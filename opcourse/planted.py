"""Planted submissions: how a case in autograder/planted/EXERCISE/CASE/ becomes a submission folder to grade.

One module for everyone who needs a planted submission: the test driver (run_planted.py), CMake (the planted-bug
operators exercise 07 grades against, cmake/OperatorsUnderTest.cmake) and the static integrity check (which
dry-runs every patch). autograder/planted/README.md describes the kinds of case.

expected.json keys that shape the submission (the verdict keys are run_planted.py's):
  submission   a folder of the course the case starts from ("solutions/03_cpu", "exercises/03_cpu"); without it,
               the case folder's own files (an attack that needs code of its own)
  patch        {"FILE": [[OLD, NEW], ...]}: exact replacements in the starting files; each OLD must occur exactly
               once, so a patch that no longer applies fails loudly instead of planting nothing
  template     the case's own files contain @COURSE_ROOT@, @SITE_PACKAGES@, @PORT@, @SECRET@, @SECRET_TEXT@
  links        {"NAME": "TARGET"}: NAME becomes a symbolic link to TARGET (templated)
  hardlinks    {"NAME": "TARGET"}: NAME becomes a hard link to TARGET (templated; same file system)
  fifos        ["NAME", ...]: NAME becomes a named pipe
  submission_link  true: the folder handed to the judge is a symbolic link to the prepared folder
A secret file (@SECRET@, holding @SECRET_TEXT@) is made outside the submission for every case: a case that points
at it shows that nothing of a file outside the submission reaches a report.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import uuid
from pathlib import Path


class PlantedError(Exception):
    """A case that cannot be prepared (a patch that no longer applies, a missing starting folder)."""


def load(case_dir: Path) -> dict:
    with open(Path(case_dir) / "expected.json") as f:
        return json.load(f)


def substitute(text: str, subs: dict[str, str]) -> str:
    for k, v in subs.items():
        text = text.replace(k, v)
    return text


def apply_patch(text: str, edits: list, where: str) -> str:
    for old, new in edits:
        n = text.count(old)
        if n != 1:
            raise PlantedError(
                f"{where}: the patch no longer applies: {old[:80]!r} occurs {n} times (it must occur exactly once)"
            )
        text = text.replace(old, new)
    return text


def patched_files(course_root: Path, case_dir: Path, expected: dict | None = None) -> dict[str, str]:
    """The files a patch case changes, patched: {name: text}. Raises PlantedError when a patch does not apply."""
    expected = expected if expected is not None else load(case_dir)
    if "patch" not in expected:
        return {}
    base = Path(course_root) / expected["submission"]
    out = {}
    for fname, edits in expected.get("patch", {}).items():
        src = base / fname
        if not src.is_file():
            raise PlantedError(
                f"{case_dir.parent.name}/{case_dir.name}: the patch names {fname}, which "
                f"{expected['submission']} does not have"
            )
        out[fname] = apply_patch(src.read_text(), edits, f"{case_dir.parent.name}/{case_dir.name}: {fname}")
    return out


def needs_copy(expected: dict) -> bool:
    return (
        any(k in expected for k in ("patch", "template", "links", "hardlinks", "fifos", "submission_link"))
        or "submission" not in expected
    )


def materialize(course_root: Path, case_dir: Path, work: Path, subs: dict[str, str] | None = None) -> Path:
    """Prepares the case under `work` (an empty folder) and returns the path to hand to the judge. A case that is a
    course folder as it is (the stub, the reference) is returned in place."""
    course_root, case_dir, work = Path(course_root), Path(case_dir), Path(work)
    expected = load(case_dir)
    secret = work / "outside" / "secret.txt"
    secret_text = "PLANTED-SECRET-" + uuid.uuid4().hex
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(f"#error {secret_text}\n{secret_text}\n")
    subs = dict(subs or {})
    subs.update(
        {
            "@COURSE_ROOT@": str(course_root),
            "@SITE_PACKAGES@": sysconfig.get_paths()["purelib"],
            "@SECRET@": str(secret),
            "@SECRET_TEXT@": secret_text,
        }
    )
    if not needs_copy(expected):
        return course_root / expected["submission"]
    sub = work / "submission"
    if "submission" in expected:
        base = course_root / expected["submission"]
        if not base.is_dir():
            raise PlantedError(f"{case_dir.parent.name}/{case_dir.name}: no folder {expected['submission']}")
        shutil.copytree(base, sub)
    else:
        sub.mkdir(parents=True)
        for entry in sorted(case_dir.iterdir()):
            if entry.name != "expected.json" and entry.is_file():
                shutil.copy2(entry, sub / entry.name)
    for fname, text in patched_files(course_root, case_dir, expected).items():
        (sub / fname).write_text(text)
    if expected.get("template"):
        for entry in sub.iterdir():
            if entry.is_file():
                entry.write_text(substitute(entry.read_text(), subs))
    for fname, target in expected.get("links", {}).items():
        if (sub / fname).is_dir() and not (sub / fname).is_symlink():
            shutil.rmtree(sub / fname)  # a folder (a stable-ABI exercise's package) becomes the link
        (sub / fname).unlink(missing_ok=True)
        os.symlink(substitute(target, subs), sub / fname)
    for fname, target in expected.get("hardlinks", {}).items():
        (sub / fname).unlink(missing_ok=True)
        os.link(substitute(target, subs), sub / fname)
    for fname in expected.get("fifos", []):
        (sub / fname).unlink(missing_ok=True)
        os.mkfifo(sub / fname)
    if expected.get("submission_link"):
        link = work / "submission-link"
        os.symlink(sub, link)
        return link
    return sub


def substitutions(work: Path) -> dict[str, str]:
    """The values materialize() used for @SECRET@ and @SECRET_TEXT@ (to template the verdict keys with)."""
    secret = Path(work) / "outside" / "secret.txt"
    text = secret.read_text().splitlines()[-1] if secret.is_file() else ""
    return {"@SECRET@": str(secret), "@SECRET_TEXT@": text}


def all_cases(course_root: Path):
    for expected in sorted(Path(course_root, "autograder", "planted").glob("*/*/expected.json")):
        yield expected.parent


def dry_run(course_root: Path) -> list[str]:
    """Every patch applies and names files its starting folder has: problems, each naming the case and file."""
    problems = []
    for case in all_cases(course_root):
        try:
            expected = load(case)
        except (OSError, ValueError) as e:
            problems.append(f"{case.parent.name}/{case.name}/expected.json: {e}")
            continue
        if "patch" in expected and "submission" not in expected:
            problems.append(f"{case.parent.name}/{case.name}: a patch needs a 'submission' folder to start from")
            continue
        if "submission" in expected and not (Path(course_root) / expected["submission"]).is_dir():
            problems.append(f"{case.parent.name}/{case.name}: no folder {expected['submission']}")
            continue
        try:
            patched_files(course_root, case, expected)
        except PlantedError as e:
            problems.append(str(e))
    return problems


def main(argv: list[str]) -> int:
    """python -m opcourse.planted write COURSE_ROOT CASE_DIR FILE DEST: writes the case's version of FILE (patched, or
    the starting folder's) to DEST, only when it changed (CMake builds exercise 07's operators from these)."""
    if len(argv) == 5 and argv[0] == "write":
        course_root, case_dir, fname, dest = Path(argv[1]), Path(argv[2]), argv[3], Path(argv[4])
        expected = load(case_dir)
        files = patched_files(course_root, case_dir, expected)
        text = files[fname] if fname in files else (course_root / expected["submission"] / fname).read_text()
        if not dest.is_file() or dest.read_text() != text:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
        return 0
    if len(argv) == 2 and argv[0] == "check":
        problems = dry_run(Path(argv[1]))
        for p in problems:
            print("FAIL:", p)
        return 1 if problems else 0
    print(main.__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
