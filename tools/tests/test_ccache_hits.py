"""ccache serves the judge's builds of submissions: the same source graded in two different folders (every grade
and every student of a batch builds in a new one) compiles once; the second grade is a cache hit."""
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
        out = subprocess.run([tc["ccache"], "--print-stats"], env=env, capture_output=True, text=True).stdout
        pairs = dict(line.split("\t") for line in out.splitlines() if "\t" in line)
        hits = int(pairs.get("direct_cache_hit", 0)) + int(pairs.get("preprocessed_cache_hit", 0))
        return hits, int(pairs.get("cache_miss", 0))

    for i, name in enumerate(("first", "second")):
        sub = tmp / name / "some" / "deeper" / "02_schema"  # different folders, different depths
        shutil.copytree(SOURCE / "solutions" / "02_schema", sub)
        r = subprocess.run([str(build / "judge"), "--exercise", "02_schema", "--submission", str(sub), "--out",
                            str(tmp / f"grade-{name}"), "--no-color", "--toolchain", str(tcf)],
                           env=env, capture_output=True, text=True, timeout=900)
        print(r.stdout + r.stderr)
        expect(r.returncode == 0, f"{name} grade passes")
        hits, misses = stats()
        print(f"after the {name} grade: {hits} hit(s), {misses} miss(es)")
        expect((hits, misses) == ((0, 1) if i == 0 else (1, 1)), f"ccache after the {name} grade")
    print("ok: ccache hits across grade folders")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
