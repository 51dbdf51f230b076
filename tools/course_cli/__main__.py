"""`python -m course_cli` (with tools/ on the path) is `tools/course.py`."""
import sys

from .main import main

sys.exit(main())
