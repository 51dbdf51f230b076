"""The site command: `mkdocs build --strict` of the course, then KaTeX copied into the built site.

usage: build_site.py [--site-dir DIR]   (default: site/ of the course this file belongs to)

`./course main` and the site's tests build through this, never through MkDocs alone:
1. KaTeX must be there (Debian's libjs-katex + fonts-katex; COURSE_DEPS_ROOT for an unpacked copy): the site renders
   math from local files only, so a page opened offline still shows it and nothing is fetched from a CDN.
2. `python -m mkdocs build --strict --site-dir DIR`, in the course folder with it on PYTHONPATH, where mkdocs.yml's
   markdown_extensions finds opcourse.site.course_markdown (dot diagrams, exercise and GPU marks, front matter).
3. KaTeX's script, style sheet, auto-render and fonts are copied into DIR/assets/katex, where mkdocs.yml's extra_css
   and extra_javascript load them. A step of this command, not a MkDocs hook: the same copy works after any engine
   that reads mkdocs.yml (opcourse/site/successor_check.py runs it after Zensical). `mkdocs serve` alone has no KaTeX.
MkDocs must be 1.x (a 2.x is refused, with the reason). Exit status: MkDocs' own (the build stops on a warning, a
broken snippet, a page the course's Markdown refuses).
"""

import argparse
import os
import shutil
import subprocess
import sys

COURSE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# What a build of the site reads, relative to the course: a copy of these builds the same site (the tests plant
# breakages in such copies; the successor check builds one with the other engine). requirements/: the pinned torch
# that pages' sources are checked against (sources.py).
SITE_INPUTS = (
    "mkdocs.yml",
    "chapters",
    "exercises",
    "solutions",
    "site_tools",
    "opcourse",
    "autograder",
    "evidence",
    "requirements",
)
INSTALL = "apt-get install libjs-katex fonts-katex graphviz (tools/setup.sh installs them)"


def katex_files():
    """{path under assets/katex: the file to copy}; SystemExit naming the package when KaTeX or its fonts are missing."""
    dirs = ["/usr/share/javascript/katex"]
    if os.environ.get("COURSE_DEPS_ROOT"):
        dirs.insert(0, os.path.join(os.environ["COURSE_DEPS_ROOT"], "usr/share/javascript/katex"))
    src = next((d for d in dirs if os.path.isfile(os.path.join(d, "katex.min.js"))), None)
    if src is None:
        sys.exit(f"build_site: KaTeX not found in {dirs}: the site renders math from local files only. {INSTALL}")
    # Debian ships auto-render unminified; it is published under the name mkdocs.yml loads
    files = {
        "katex.min.js": "katex.min.js",
        "katex.min.css": "katex.min.css",
        "contrib/auto-render.min.js": "contrib/auto-render.js",
    }
    files = {dst: os.path.join(src, name) for dst, name in files.items()}
    fonts = os.path.realpath(os.path.join(src, "fonts"))
    woff2 = sorted(f for f in os.listdir(fonts) if f.endswith(".woff2")) if os.path.isdir(fonts) else []
    if not woff2:
        sys.exit(f"build_site: KaTeX's fonts are missing ({fonts}). {INSTALL}")
    files.update({f"fonts/{name}": os.path.join(fonts, name) for name in woff2})
    return files


def copy_katex(site_dir, files=None):
    for dst, src in (files or katex_files()).items():
        target = os.path.join(site_dir, "assets", "katex", dst)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(src, target)


def check_mkdocs():
    """MkDocs 1.x, or SystemExit saying why: MkDocs 2 runs neither Material nor the course's mkdocs.yml as written. The
    pin (requirements/course.txt: mkdocs==1.6.1,<2) covers the course's venv; this covers COURSE_PYTHON's own MkDocs."""
    try:
        import mkdocs
    except ImportError:
        sys.exit(f"build_site: MkDocs is not installed for {sys.executable} (requirements/course.txt pins it)")
    if not mkdocs.__version__.startswith("1."):
        sys.exit(
            f"build_site: MkDocs {mkdocs.__version__} is not 1.x: MkDocs 2 drops plugins and the Material theme "
            f"this site is built with; install mkdocs==1.6.1 (requirements/course.txt)"
        )


def engine_env(course=COURSE):
    env = dict(os.environ)
    # the course folder first: a copy of the course (the site's tests make them) renders with its own opcourse
    env["PYTHONPATH"] = os.pathsep.join(p for p in (course, env.get("PYTHONPATH")) if p)
    # Material 9.8 prints its end-of-life notice on every build; the course follows it in successor_check.py and
    # the README, so a student's `./course main` does not repeat it
    env.setdefault("NO_MKDOCS_2_WARNING", "1")
    return env


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site-dir", default=os.path.join(COURSE, "site"))
    parser.add_argument(
        "--publish",
        action="store_true",
        help="build for publication: refused, naming the pages, "
        "while a page lacks its named author's and reviewer's sign-off (opcourse/site/publish_check.py)",
    )
    args = parser.parse_args(argv)
    site_dir = os.path.abspath(args.site_dir)
    if args.publish:  # the default build (students, CI) builds every page, "pending" bylines included
        from . import publish_check

        if publish_check.main(["--root", COURSE]) != 0:
            print(f"build_site: nothing built into {site_dir}: publishing needs every page signed", file=sys.stderr)
            return 1
    check_mkdocs()
    files = katex_files()  # before MkDocs runs: a missing package is named first
    status = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", site_dir], cwd=COURSE, env=engine_env()
    ).returncode
    if status != 0:
        return status
    copy_katex(site_dir, files)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
