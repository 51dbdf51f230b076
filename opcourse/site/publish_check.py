"""Refuses to publish the site while any page lacks a named author's and reviewer's sign-off.

The default build (opcourse/site/build_site.py, `./course main`) still builds every page, "pending" bylines included; this is the
gate a release runs before publishing. A page is ready when its front matter (see opcourse/site/page_meta.schema.json)
names its authors and reviewers and gives the date it was last checked. A reviewer signs off by editing the page's
front matter: replace `reviewers: pending` with `reviewers: [Their Name]` and `last_checked_on: pending` with the
date they checked it (and the author does the same for `authors` and `written_on`).

usage: publish_check.py [--root COURSE_ROOT]
exit 0: every page signed; exit 1: the pages that are not, each with its reasons, are printed.
"""

import argparse
import os
import sys

from opcourse.site import page_meta

NOT_PAGES = {os.path.join("glossary", "abbreviations.md")}  # appended to every page, not a page (mkdocs.yml)


def blockers(root):
    """[(page, [reasons])] of every page under chapters/ that may not be published yet."""
    chapters = os.path.join(root, "chapters")
    out = []
    for dirpath, _, names in sorted(os.walk(chapters)):
        for n in sorted(names):
            if not n.endswith(".md") or os.path.relpath(os.path.join(dirpath, n), chapters) in NOT_PAGES:
                continue
            path = os.path.join(dirpath, n)
            rel = os.path.relpath(path, root)
            try:
                meta, _ = page_meta.read_page(path)
            except Exception as e:  # noqa: BLE001 - unreadable front matter blocks publishing too
                out.append((rel, [f"front matter is not valid YAML: {e}"]))
                continue
            reasons = page_meta.publish_blockers(meta)
            if meta is not None:
                reasons = page_meta.validate(meta, rel) + reasons
            if reasons:
                out.append((rel, reasons))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
    args = ap.parse_args(argv)
    found = blockers(args.root)
    if not found:
        print("publish_check: every page names its author and reviewer and when it was checked: ready to publish")
        return 0
    print(f"publish_check: refusing to publish: {len(found)} page(s) lack a named author's and reviewer's sign-off")
    for page, reasons in found:
        print(f"  {page}: " + "; ".join(reasons))
    print(
        "A reviewer signs off by setting 'reviewers' and 'last_checked_on' in the page's front matter "
        "(opcourse/site/page_meta.schema.json); every page is still built, with 'pending' shown in its byline."
    )
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
