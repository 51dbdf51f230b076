"""Tabulates the planted cases' verdicts that run_planted.py kept (COURSE_VERDICTS_DIR) as Markdown.

    python tools/verdicts_table.py VERDICTS_DIR > table.md
"""
import glob
import json
import os
import sys


def main():
    d = sys.argv[1]
    cases = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, "*.json")))]
    print("| exercise | planted case | rows failed | rows skipped | verdict as expected |")
    print("| --- | --- | --- | --- | --- |")
    for c in cases:
        failed = [r["id"] for r in c["rows"] if r["status"] == "FAIL"]
        skipped = [r["id"] for r in c["rows"] if r["status"] == "SKIPPED"]
        ok = "yes" if not c["problems"] else "NO: " + "; ".join(c["problems"])
        print(f"| {c['exercise']} | {c['case']} | {', '.join(failed) or '-'} | {', '.join(skipped) or '-'} | {ok} |")
    bad = sum(1 for c in cases if c["problems"])
    print(f"\n{len(cases) - bad} of {len(cases)} planted cases got exactly their expected verdict.")


if __name__ == "__main__":
    main()
