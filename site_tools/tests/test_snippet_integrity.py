"""Chapters and code agree: every region a chapter includes exists (start and end marker) in its file, and every
region marked in an exercise or solution source is included by some chapter (no code that no page shows)."""

import os
import sys

from sitelib import COURSE_ROOT, marked_regions, regions_in_file, snippet_references


def main():
    problems = []
    refs = snippet_references()
    used = set()
    for chapter, line, path, region in refs:
        full = os.path.join(COURSE_ROOT, path)
        if not os.path.isfile(full):
            problems.append(f"{chapter}:{line} includes {path}, which does not exist")
            continue
        if region is None:
            continue
        used.add((path, region))
        have = regions_in_file(full).get(region)
        if have is None:
            problems.append(f"{chapter}:{line} includes region '{region}' of {path}, which marks no such region")
        elif have != (True, True):
            problems.append(
                f"{chapter}:{line}: region '{region}' of {path} lacks its {'start' if not have[0] else 'end'} marker"
            )
    for path, region in sorted(marked_regions() - used):
        problems.append(
            f"{path} marks region '{region}', but no chapter includes it "
            f'(add --8<-- "{path}:{region}" to a chapter, or remove the markers)'
        )
    if not refs:
        problems.append("no chapter includes any code region: the snippet syntax may have changed")
    for p in problems:
        print("FAIL:", p)
    print(
        f"site/snippet_integrity: {len(refs)} includes in chapters, {len(marked_regions())} marked regions, "
        f"{len(problems)} problem(s)"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
