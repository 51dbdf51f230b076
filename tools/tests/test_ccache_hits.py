"""ccache serves the judge's builds of submissions: a regrade of the same submission folder is a cache hit (every
grade builds in a new scratch folder), while another submission folder has a cache of its own (no submission can
plant objects in another's build)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from clitest import SOURCE, expect, temp_dir

build = Path(sys.argv[1])
tc = json.loads((build / "toolchain.json").read_text())
if not tc.get("ccache"):
    print("ccache is not installed: nothing to test")
    sys.exit(0)
tmp = temp_dir("ccache")
try:
    tcf = tmp / "toolchain.json"
    tcf.write_text(json.dumps(dict(tc, ccache_dir="")))
    env = dict(os.environ, CCACHE_DIR=str(tmp / "cache"))

    def stats():
        """(hits, misses) of every submission's own cache under the base folder."""
        hits = misses = 0
        for own in sorted((tmp / "cache" / "submissions").glob("*")):
            out = subprocess.run(
                [tc["ccache"], "--print-stats"], env=dict(env, CCACHE_DIR=str(own)), capture_output=True, text=True
            ).stdout
            pairs = dict(line.split("\t") for line in out.splitlines() if "\t" in line)
            hits += int(pairs.get("direct_cache_hit", 0)) + int(pairs.get("preprocessed_cache_hit", 0))
            misses += int(pairs.get("cache_miss", 0))
        return hits, misses

    first = tmp / "first" / "some" / "deeper" / "02_schema"
    other = tmp / "other" / "02_schema"
    for folder in (first, other):
        shutil.copytree(SOURCE / "solutions" / "02_schema", folder)
    # first grade: a miss; regrade of the same folder: a hit; another student's identical folder: its own miss
    for i, (sub, want) in enumerate(((first, (0, 1)), (first, (1, 1)), (other, (1, 2)))):
        r = subprocess.run(
            [
                str(build / "judge"),
                "--exercise",
                "02_schema",
                "--submission",
                str(sub),
                "--out",
                str(tmp / f"grade-{i}"),
                "--no-color",
                "--toolchain",
                str(tcf),
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        print(r.stdout + r.stderr)
        expect(r.returncode == 0, f"grade {i} passes")
        hits, misses = stats()
        print(f"after grade {i} ({sub}): {hits} hit(s), {misses} miss(es)")
        expect((hits, misses) == want, f"ccache after grade {i}: expected {want}")
    # three judges grading one folder at once (each with a sandbox uid of its own) share its cache: they take
    # turns, and each builds
    shutil.rmtree(tmp / "cache", ignore_errors=True)
    together = [
        subprocess.Popen(
            [
                str(build / "judge"),
                "--exercise",
                "02_schema",
                "--submission",
                str(other),
                "--out",
                str(tmp / f"together-{i}"),
                "--no-color",
                "--toolchain",
                str(tcf),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(3)
    ]
    for i, p in enumerate(together):
        out = p.communicate(timeout=900)[0]
        if p.returncode != 0:
            print(out)
        expect(
            p.returncode == 0, f"concurrent grade {i} of the same folder passes (its build is not broken by another's)"
        )
    print("ok: a regrade hits its own cache; another submission does not share it; concurrent grades take turns")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
