"""A grade does not depend on its neighbours (CPU): the reference of 03_cpu graded in a batch beside students whose
operators hog the host's memory and fill /tmp gets exactly the rows and score it gets graded alone.
(The GPU side, neighbours that take the GPU's memory, is shown by the GPU evidence: GPU runs take turns.)"""

import json
import shutil

from clitest import SOURCE, expect, run, temp_dir

from opcourse import planted as planted_cases

HOG = """
#include <sys/mman.h>
#include <unistd.h>
#include <cstring>
namespace {
// PLANTED neighbour: takes 4 GiB of host memory (touched, so resident) at load and holds it for 15 s
const bool hog = [] {
  const size_t n = size_t(4) << 30;
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) std::memset(p, 1, n);
  sleep(15);
  return true;
}();
}  // namespace
"""

tmp = temp_dir("neighbours")
try:
    klass = tmp / "class"
    alice = klass / "alice" / "03_cpu"
    shutil.copytree(SOURCE / "solutions" / "03_cpu", alice)
    hog = klass / "mallory_memory" / "03_cpu"
    shutil.copytree(SOURCE / "solutions" / "03_cpu", hog)
    with open(hog / "mm16_cpu.cpp", "a") as f:
        f.write(HOG)
    filler = klass / "mallory_tmp" / "02_schema"  # the planted /tmp filler, a neighbour of another exercise
    shutil.copytree(
        planted_cases.materialize(SOURCE, SOURCE / "autograder" / "planted" / "02_schema" / "fills_tmp", tmp / "work"),
        filler,
    )
    rc, out = run(
        ["batch", str(klass), "--jobs", "3", "--exercises", "03_cpu,02_schema", "--out", str(tmp / "batch")],
        timeout=1500,
    )
    expect(rc in (0, 1), f"batch ran (exit {rc})")
    rc, out = run(["grade", "03_cpu", str(alice), "--out", str(tmp / "alone"), "--no-color"], timeout=900)
    in_batch = json.loads((tmp / "batch" / "students" / "alice" / "03_cpu" / "rows.json").read_text())
    alone = json.loads((tmp / "alone" / "rows.json").read_text())
    verdicts = lambda rows: [(r["id"], r["status"], r["points"]) for r in rows["rows"]]  # noqa: E731
    expect(
        verdicts(in_batch) == verdicts(alone) and in_batch["score"] == alone["score"] == alone["max_score"],
        f"alice's reference: the same rows beside the neighbours as alone ({in_batch['score']:g} and "
        f"{alone['score']:g} of {alone['max_score']:g})",
    )
    hogged = json.loads((tmp / "batch" / "students" / "mallory_memory" / "03_cpu" / "rows.json").read_text())
    expect(hogged["score"] == alone["score"], "the hog's own verdicts: its operator is right, only greedy")
    print("ok: batch neighbours")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
