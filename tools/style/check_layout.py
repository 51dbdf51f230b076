"""The package's boundaries: no Python file of the clone touches the interpreter's module search path (the package
opcourse is installed; a script's own folder is searched already), and the product (opcourse/) imports no test code (a
module of a tests/ folder).

    python3 tools/style/check_layout.py [--root CLONE]

Exit status: 0 within its boundaries, 1 not (each breach named).
"""

import argparse
import ast
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEST_FOLDERS = ("autograder/tests", "tools/tests", "site_tools/tests")
SEARCH_PATH = "sys" + ".path"  # spelt in two so that this file does not name it


def tracked_python(root: Path) -> list[str]:
    r = subprocess.run(["git", "ls-files", "-z", "*.py"], cwd=root, capture_output=True, text=True, check=True)
    return [p for p in r.stdout.split("\0") if p]


def path_edits(root: Path, files: list[str]) -> list[str]:
    """Every mention of the search path: reading it is as telling as editing it, and neither is needed any more."""
    found = []
    for rel in files:
        for n, line in enumerate((root / rel).read_text(errors="replace").splitlines(), 1):
            if SEARCH_PATH in line:
                found.append(f"{rel}:{n}: {SEARCH_PATH} ({line.strip()[:80]})")
    return found


def test_imports(root: Path, files: list[str]) -> list[str]:
    """Imports in opcourse/ of a module that is a file of a tests folder."""
    test_modules = {Path(p).stem for p in files if any(p.startswith(f + "/") for f in TEST_FOLDERS)}
    found = []
    for rel in (p for p in files if p.startswith("opcourse/")):
        tree = ast.parse((root / rel).read_text(), filename=rel)
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            found += [f"{rel}:{node.lineno}: imports {name}, a test module" for name in names if name in test_modules]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parents[1], help="the clone to check (default: this one)")
    root = ap.parse_args(argv).root.resolve()
    files = tracked_python(root)
    breaches = path_edits(root, files) + test_imports(root, files)
    print(f"layout: {len(files)} Python files, {len(breaches) or 'no'} breach(es) of the package's boundaries")
    for b in breaches:
        print(f"breach: {b}")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
