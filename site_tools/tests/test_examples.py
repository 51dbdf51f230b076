"""The example scripts the chapters include still print what the chapters show: each is run from the course root
(against the built reference solutions) and every line it prints must appear in its chapter.

usage: test_examples.py BUILD_DIR"""
import os
import subprocess
import sys

from sitelib import COURSE_ROOT

# (what the chapter includes, the command run in a scratch root whose build/ is the build tree, the chapter)
EXAMPLES = [
    ('"site_tools/examples/explain_scale_add.py"', [sys.executable, "{root}/site_tools/examples/explain_scale_add.py"],
     "chapters/01_custom_op.md"),
    ('"site_tools/examples/inspect_schema.py"', [sys.executable, "{root}/site_tools/examples/inspect_schema.py"],
     "chapters/02_schema.md"),
    ('"site_tools/examples/print_schema.cpp:inspect"',
     ["build/print_schema", "build/lib/solutions/02_schema/libmm16_schema.so"], "chapters/02_schema.md"),
]


def main():
    build = os.path.abspath(sys.argv[1])
    problems = []
    for included, command, chapter in EXAMPLES:
        # the scripts name build/...; run them in a scratch root whose build/ is this build tree
        with open(os.path.join(COURSE_ROOT, chapter)) as f:
            text = f.read()
        script = " ".join(command[-2:] if command[0] == sys.executable else command)
        if f"--8<-- {included}" not in text:
            problems.append(f"{chapter} no longer includes {included}")
        scratch = os.path.join(build, "example-root")
        os.makedirs(scratch, exist_ok=True)
        link = os.path.join(scratch, "build")
        if not os.path.islink(link):
            os.symlink(build, link)
        proc = subprocess.run([c.format(root=COURSE_ROOT) for c in command], cwd=scratch, capture_output=True,
                              text=True, timeout=300)
        if proc.returncode != 0:
            problems.append(f"{script} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
            continue
        for line in proc.stdout.splitlines():
            if line.strip() and line not in text:
                problems.append(f"{script} now prints a line {chapter} does not show:\n    {line}")
    for p in problems:
        print("FAIL:", p)
    print(f"site/examples: {len(EXAMPLES)} scripts, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
