"""`python -m opcourse.cli COMMAND ...`: the Python commands of ./course (opcourse/cli/main.py parses them)."""

import sys

from .main import main

sys.exit(main())
