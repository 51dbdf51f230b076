#!/usr/bin/env python3
"""Runs the course's commands (the package tools/course_cli/): ./course, tools/gradescope/run_autograder and the tests
start it as `python3 tools/course.py COMMAND ARGS...`."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from course_cli.main import main  # noqa: E402  (after the path is set)

if __name__ == "__main__":
    sys.exit(main())
