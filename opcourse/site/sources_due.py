"""The pages whose external sources are due for a re-check (maintainers).

usage: python -m opcourse.site.sources_due [--max-age-days N]

A page is due when one of its sources (opcourse/site/sources.py: a bullet of "Read more", "Sources" or "Upstream
documentation" ending "(checked YYYY-MM-DD against torch X.Y.Z)") was checked against a torch older than the one
requirements/course.txt pins, or longer ago than N days (default 365). Each due page is listed with why and its
sources; after re-reading them, update the notes' dates and torch versions. Exit status 0 whether or not a page is
due (it is a list, not a check; the site's build warns about the torch on its own). A page whose sources cannot be
read is listed as such, with exit status 1."""

from __future__ import annotations

import argparse
import datetime
import glob
import os
import sys

from opcourse.site import sources


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-age-days", type=int, default=365, metavar="N")
    args = ap.parse_args(argv)
    pinned = sources.pinned_torch()
    today = datetime.date.today()
    pages = sorted(glob.glob(os.path.join(sources.ROOT, "chapters", "**", "*.md"), recursive=True))
    due_pages, unreadable, total = 0, 0, 0
    for path in pages:
        rel = os.path.relpath(path, sources.ROOT)
        with open(path, encoding="utf-8") as f:
            found, problems = sources.page_sources(f.read())
        total += len(found)
        if problems:
            unreadable += 1
            print(f"{rel}: its sources cannot be read: " + "; ".join(problems))
            continue
        reasons = sources.due(found, pinned, today, args.max_age_days)
        if reasons:
            due_pages += 1
            print(f"{rel}: due ({'; '.join(reasons)})")
            for s in found:
                print(f"    {s.url}  (checked {s.checked_on} against torch {s.torch})")
    print(
        f"{due_pages} of {len(pages)} pages due for a re-check ({total} sources; torch {pinned} pinned, "
        f"older than {args.max_age_days} days counts)" + (f"; {unreadable} unreadable" if unreadable else "")
    )
    return 1 if unreadable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
