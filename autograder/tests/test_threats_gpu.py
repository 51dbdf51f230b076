"""threats.py's GPU column reads the newest committed GPU run that graded a case, and fails on a run that did not get
its verdict. Shown on copies of two real runs of 07_testing/opcheck_square_only: the first (2026-12-06-h100-late-07)
got it wrong, the second (-again, after the fix) right. Alone, the first must fail the table; with both, the newer
one decides; with the second's start time moved before the first's, the wrong verdict is the newest again."""

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
import threats  # beside this script
from threats import gpu_evidence

HERE = os.path.dirname(os.path.abspath(__file__))

CASE = ("07_testing", "opcheck_square_only")
COMMITTED = gpu_evidence.EVIDENCE
WRONG, RIGHT = "2026-12-06-h100-late-07", "2026-12-06-h100-late-07-again"


def verdict_with(runs, tmp, edit=None):
    evidence = Path(tmp) / "evidence" / "gpu"
    shutil.rmtree(evidence, ignore_errors=True)
    gpu_evidence.ROOT, gpu_evidence.EVIDENCE = Path(tmp), evidence
    for run in runs:
        shutil.copytree(COMMITTED / run, evidence / run)
        if edit:
            edit(evidence / run)
        (evidence / run / "summary.json").write_text(json.dumps(gpu_evidence.summarize(evidence / run)))
    return threats.gpu_verdict(gpu_evidence.newest_case_verdicts(), True, *CASE)


def main():
    root, evidence = gpu_evidence.ROOT, gpu_evidence.EVIDENCE
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            ok, text = verdict_with([WRONG], tmp)
            if ok or "NOT as expected" not in text:
                failures.append(f"the wrong run alone: the table must fail, got {ok}, {text!r}")
            ok, text = verdict_with([WRONG, RIGHT], tmp)
            if not ok or RIGHT not in text or "as expected, failed catches.fake_wrong_shape" not in text:
                failures.append(f"both runs: the newer must decide, got {ok}, {text!r}")

            def earlier(folder):  # the fixed run moved to before the wrong one
                if folder.name == RIGHT:
                    s = folder / "summary.txt"
                    s.write_text(s.read_text().replace("(05:33:22)", "(05:01:00)"))

            ok, text = verdict_with([WRONG, RIGHT], tmp, earlier)
            if ok or WRONG not in text:
                failures.append(f"the wrong run newest: the table must fail, got {ok}, {text!r}")
            ok, text = threats.gpu_verdict({}, True, *CASE)
            if not ok or "not graded yet" not in text:
                failures.append(f"no run: 'not graded yet', got {ok}, {text!r}")
        finally:
            gpu_evidence.ROOT, gpu_evidence.EVIDENCE = root, evidence
    for f in failures:
        print("FAIL:", f)
    print(f"{4 - len(failures)} of 4 GPU-column checks as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
