"""Tabulates, as Markdown, the verdicts the planted cases just got (run_planted.py's RESULTS_DIR/EXERCISE/CASE.json).

python tools/verdicts_table.py BUILD_DIR/planted-results > table.md
"""

import glob
import json
import os
import sys


def main():
    d = sys.argv[1]
    # EXERCISE/CASE.json, or RUN/EXERCISE/CASE.json where one case was graded several times (harness-5x)
    paths = sorted(glob.glob(os.path.join(d, "*", "*.json")) + glob.glob(os.path.join(d, "*", "*", "*.json")))
    print("| exercise | planted case | CUDA rows ran | rows failed | rows skipped | verdict as expected |")
    print("| --- | --- | --- | --- | --- | --- |")
    bad = 0
    for p in paths:
        c = json.load(open(p))
        exercise, case = os.path.relpath(os.path.dirname(p), d), os.path.basename(p)[:-5]
        if c.get("outcome") == "skipped":
            print(f"| {exercise} | {case} | - | - | - | SKIPPED: protections off: {', '.join(c.get('off', []))} |")
            continue
        rows = c.get("rows", [])
        failed = [r["id"] for r in rows if r["status"] == "FAIL"]
        skipped = [r["id"] for r in rows if r["status"] == "SKIPPED"]
        ok = "yes" if not c["problems"] else "NO: " + "; ".join(c["problems"]).replace("|", "\\|")
        bad += bool(c["problems"])
        print(
            f"| {exercise} | {case} | {'yes' if c.get('cuda') else 'no'} | {', '.join(failed) or '-'} | "
            f"{', '.join(skipped) or '-'} | {ok} |"
        )
    print(f"\n{len(paths) - bad} of {len(paths)} planted cases got exactly their expected verdict.")


if __name__ == "__main__":
    main()
