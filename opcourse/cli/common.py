"""The course's folders and how a command talks: every module imports these."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

ROOT = Path(os.environ.get("COURSE_ROOT", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("COURSE_BUILD_DIR", ROOT / "build"))
STATE_DIR = Path(os.environ.get("COURSE_STATE_DIR", ROOT / ".course"))
# the student's grades (what `list` reads): theirs, not the build's, so a rebuild or a toolkit switch keeps them
GRADES = STATE_DIR / "grades"


def say(msg: str) -> None:
    print(msg, flush=True)


def die(msg: str, code: int = 2) -> NoReturn:
    print(f"course: {msg}", file=sys.stderr)
    sys.exit(code)
