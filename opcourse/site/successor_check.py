"""What Material's successor, Zensical, makes of the course's site: a report, never a failure (issue 26).

usage: successor_check.py REPORT_DIR

MkDocs 1.6.1 is the last 1.x and Material 9.x its last theme; Zensical reads the same mkdocs.yml and runs the same
Python-Markdown extensions (opcourse/site/course_markdown.py among them), but none of MkDocs' hooks or plugins.
This builds a copy of the course with the site command (MkDocs) and with `zensical build`, both followed by the site
command's KaTeX copy, and writes REPORT_DIR/successor_report.md (and a .json of the same):
- the pages each engine built, and the ones only one of them built;
- what the course's Markdown and the extensions made, counted in each site (diagrams, bylines, marks left
  unrendered, glossary tooltips, math, highlighted code, admonitions), and how far each page's text differs;
- which planted breakages (the ones the site tests plant) stop each build: Zensical with mkdocs.yml as it is
  (`strict: true`) and with `strict: false`, which tells a failure of the course's Markdown from a warning.
Exit 0 whatever differs (the course builds with MkDocs; this only tells what a move would change), 77 (ctest:
skipped) when zensical is not installed for this Python.
"""

import difflib
import html
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from opcourse.site import build_site  # the site command: its KaTeX copy and its environment, for both engines

COURSE = build_site.COURSE

COPIED = build_site.SITE_INPUTS
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*)</article>', re.S)
# (what, pattern counted in each page's article)
FEATURES = [
    ("diagrams rendered to inline SVG (course_markdown)", r'<div class="diagram"'),
    ("dot sources left as code", r"language-dot"),
    ("bylines from front matter (course_markdown)", r'class="byline"'),
    (
        "course marks left unrendered (checks, hints, gpu-*, byline)",
        r"<!-- (?:checks|hints|gpu-row|gpu-case|gpu-run|byline)\b",
    ),
    ("glossary tooltips (abbr + snippets auto_append)", r"<abbr title="),
    ("math (arithmatex)", r'class="arithmatex"'),
    ("highlighted code blocks", r'<div class="[^"]*\bhighlight\b'),
    ("admonitions", r'class="admonition\b'),
    ("collapsible blocks (details)", r"<details\b"),
    ("tabbed sets", r'class="tabbed-set\b'),
    ("heading permalinks", r'class="headerlink"'),
]
# (what is planted, file, text appended or (old, new), what the build's output should name)
WIDE = (
    "\n```dot\ndigraph too_wide {\n  rankdir=LR; node [shape=box, fontsize=11];\n  "
    + "; ".join(f'n{i} [label="a step of the pipeline {i}"]' for i in range(6))
    + ";\n  "
    + " -> ".join(f"n{i}" for i in range(6))
    + ";\n}\n```\n"
)
PLANTED = [
    ("a diagram too wide to read", "chapters/02_schema.md", WIDE, ["02_schema.md", "pt wide"]),
    (
        "a front matter field that breaks the schema",
        "chapters/glossary/dispatcher.md",
        ("reviewers: pending\n", "reviewers: pendng\n"),
        ["glossary/dispatcher.md", "'reviewers'"],
    ),
    (
        "a snippet file that does not exist",
        "chapters/01_custom_op.md",
        '\n```cpp\n--8<-- "exercises/01_custom_op/no_such_file.cpp"\n```\n',
        ["no_such_file.cpp"],
    ),
    (
        "a link to a page that does not exist",
        "chapters/03_cpu.md",
        "\nSee [nowhere](no-such-page.md).\n",
        ["no-such-page.md"],
    ),
    (
        "a GPU figure retyped into a run's summary.json",
        "evidence/gpu/2026-12-03-all-solutions-2/summary.json",
        ('"status": "PASS"', '"status": "FAIL"'),
        ["summary.json differs from the logs"],
    ),
]


def run(argv, cwd, env):
    t = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        out, status = ANSI.sub("", p.stdout + p.stderr), p.returncode
    except subprocess.TimeoutExpired:
        out, status = "(timed out after 300 s)", 124
    return status, out, time.monotonic() - t


def build_mkdocs(copy, site):
    return run(
        [sys.executable, "-m", "opcourse.site.build_site", "--site-dir", site], copy, build_site.engine_env(copy)
    )


def build_zensical(copy, site, strict_off=False):
    """`zensical build` of the copy (it writes the config's site_dir, site/), moved to `site`, KaTeX copied in;
    strict_off: with a mkdocs.yml that says `strict: false`."""
    shutil.rmtree(os.path.join(copy, "site"), ignore_errors=True)
    config = "mkdocs.yml"
    if strict_off:
        config = "mkdocs.strict-off.yml"
        with open(os.path.join(copy, "mkdocs.yml"), encoding="utf-8") as f:
            text = re.sub(r"^strict: true$", "strict: false", f.read(), flags=re.M)
        with open(os.path.join(copy, config), "w", encoding="utf-8") as f:
            f.write(text)
    env = dict(build_site.engine_env(copy), NO_COLOR="1")
    status, out, secs = run([sys.executable, "-m", "zensical", "build", "--clean", "-f", config], copy, env)
    if status == 0 and os.path.isdir(os.path.join(copy, "site")):
        shutil.rmtree(site, ignore_errors=True)
        shutil.move(os.path.join(copy, "site"), site)
        build_site.copy_katex(site)  # the site command's step, as after MkDocs
    return status, out, secs


def page_key(rel):
    """A built page's name in either layout: NAME.html (mkdocs.yml's use_directory_urls: false) and NAME/index.html
    (an engine that ignores it) are both "NAME/", the home page "" (so the two sites compare page by page)."""
    rel = rel.replace(os.sep, "/")
    if rel == "index.html" or rel.endswith("/index.html"):
        return rel[: -len("index.html")]
    return rel[: -len(".html")] + "/"


def pages(site):
    out = {}
    for d, _, names in os.walk(site):
        rel = os.path.relpath(d, site)
        if rel.split(os.sep)[0] in ("assets", "search"):
            continue
        for name in names:
            if not name.endswith(".html") or (rel == "." and name == "404.html"):
                continue
            with open(os.path.join(d, name), encoding="utf-8") as f:
                m = ARTICLE.search(f.read())
            out[page_key(os.path.normpath(os.path.join(rel, name)))] = m.group(1) if m else ""
    return out


def text_lines(article):
    """The article as a reader reads it: one line per block, tags and scripts gone."""
    s = re.sub(r"<(script|style)\b.*?</\1>", "", article, flags=re.S)
    s = re.sub(r"</(p|li|h\d|tr|td|th|dt|dd|pre|summary|div|table|figcaption)>|<br\s*/?>", "\n", s)
    s = html.unescape(re.sub(r"<[^>]+>", "", s))
    return [re.sub(r"\s+", " ", l).strip() for l in s.splitlines() if l.strip()]


def compare(mk_site, zs_site):
    mk, zs = pages(mk_site), pages(zs_site)
    lines = [
        "## Pages",
        "",
        f"MkDocs built {len(mk)} pages, Zensical {len(zs)}.",
        f"Only MkDocs: {', '.join(sorted(set(mk) - set(zs))) or 'none'}. "
        f"Only Zensical: {', '.join(sorted(set(zs) - set(mk))) or 'none'}.",
        "",
        "## What the course's Markdown and the extensions made (counted over every page both built)",
        "",
        "| what | MkDocs | Zensical |",
        "| --- | --: | --: |",
    ]
    both = sorted(set(mk) & set(zs))
    for what, pattern in FEATURES:
        a = sum(len(re.findall(pattern, mk[p])) for p in both)
        b = sum(len(re.findall(pattern, zs[p])) for p in both)
        lines.append(f"| {what} | {a} | {b}{'' if a == b else ' (differs)'} |")
    for what, rel in [
        ("KaTeX (assets/katex/katex.min.js, by the site command)", "assets/katex/katex.min.js"),
        ("search index search/search_index.json (MkDocs)", "search/search_index.json"),
        ("search index search.json (Zensical)", "search.json"),
        (
            "search index as a script, search/search_index.js (Material's offline plugin: search from file://)",
            "search/search_index.js",
        ),
        (
            "pages as NAME.html, 01_custom_op.html (use_directory_urls: false: links work from file://)",
            "01_custom_op.html",
        ),
        ("the search worker's file:// stand-in, assets/iframe-worker.js (extra.polyfills)", "assets/iframe-worker.js"),
        ("sitemap.xml", "sitemap.xml"),
        ("404.html", "404.html"),
    ]:
        have = ["yes" if os.path.isfile(os.path.join(s, rel)) else "no" for s in (mk_site, zs_site)]
        lines.append(f"| {what} | {have[0]} | {have[1]} |")
    lines += ["", "## Page text (the article, tags removed, one line per block)", ""]
    same, differing = 0, []
    for p in both:
        a, b = text_lines(mk[p]), text_lines(zs[p])
        if a == b:
            same += 1
            continue
        ratio = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
        diff = [
            l for l in difflib.unified_diff(a, b, lineterm="", n=0) if l[:1] in "+-" and l[:3] not in ("+++", "---")
        ]
        differing.append((ratio, p, diff))
    lines.append(f"{same} of {len(both)} pages read the same in both.")
    links = [p for p in both if re.findall(r'href="([^"]*)"', mk[p]) != re.findall(r'href="([^"]*)"', zs[p])]
    lines.append(
        f"{len(both) - len(links)} of {len(both)} pages link to the same targets in their text"
        f"{': not ' + ', '.join(p or 'index' for p in links) if links else ''}."
    )
    for ratio, p, diff in sorted(differing):
        lines.append(f"- `{p or 'index'}`: {ratio:.1%} of its lines alike, {len(diff)} lines differ; first:")
        lines += [f"    `{l[:150]}`" for l in diff[:4]]
    return lines, {
        "pages_mkdocs": len(mk),
        "pages_zensical": len(zs),
        "pages_same_text": same,
        "pages_only_mkdocs": sorted(set(mk) - set(zs)),
        "pages_only_zensical": sorted(set(zs) - set(mk)),
    }


def plant(copy, rel, change):
    path = os.path.join(copy, rel)
    with open(path, encoding="utf-8") as f:
        original = f.read()
    if isinstance(change, tuple):
        assert change[0] in original, f"the planted case expects {change[0]!r} in {rel}: update PLANTED"
        text = original.replace(change[0], change[1], 1)
    else:
        text = original + change
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path, original


def verdict(status, out, names):
    if status == 0:
        return "builds"
    named = all(n in out for n in names)
    return f"stops (exit {status}){', naming it' if named else ', without naming ' + ' / '.join(names)}"


def _missing_builder() -> str | None:
    """The SKIPPED line when zensical or MkDocs is not installed here, else None."""
    for module, why in (
        (
            "zensical",
            "it is not in this Python's packages (pip install zensical; the course's requirements/course.txt pins one)",
        ),
        ("mkdocs", "MkDocs is not installed: there is no reference build to compare with"),
    ):
        if importlib.util.find_spec(module) is None:
            return f"SKIPPED: {module} is not installed for {sys.executable}: {why}"
    return None


def _copy_course(tmp: str) -> str:
    copy = os.path.join(tmp, "course")
    os.makedirs(copy)
    for name in COPIED:
        src = os.path.join(COURSE, name)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, os.path.join(copy, name))
    return copy


def _unchanged_builds(copy: str, tmp: str, summary: dict) -> list[str]:
    """The report's section on the unchanged course: each build's status, and MkDocs' site against Zensical's."""
    mk_site, zs_site = os.path.join(tmp, "mkdocs-site"), os.path.join(tmp, "zensical-site")
    mk = build_mkdocs(copy, mk_site)
    zs = build_zensical(copy, zs_site)
    zs_lax = build_zensical(copy, os.path.join(tmp, "zensical-lax-site"), strict_off=True)
    body = [
        "## Builds of the unchanged course",
        "",
        "| build | exit | seconds | its last words |",
        "| --- | --: | --: | --- |",
    ]
    for what, (status, out, secs) in [
        ("site command (MkDocs --strict)", mk),
        ("zensical build", zs),
        ("zensical build, strict: false", zs_lax),
    ]:
        tail = " / ".join(l.strip() for l in out.strip().splitlines()[-2:]).replace(tmp, "TMP")[:200]
        tail = tail.replace("|", "\\|")
        body.append(f"| {what} | {status} | {secs:.1f} | {tail} |")
    summary.update(mkdocs_exit=mk[0], zensical_exit=zs[0], zensical_strict_off_exit=zs_lax[0])
    body.append("")
    if mk[0] != 0:
        body.append(f"The MkDocs build failed, so nothing is compared; its output:\n\n```\n{mk[1][-3000:]}\n```")
    elif zs[0] != 0 or not os.path.isdir(zs_site):
        body.append(f"Zensical did not build the site; its output:\n\n```\n{zs[1][-3000:]}\n```")
    else:
        lines, counts = compare(mk_site, zs_site)
        body += lines
        summary.update(counts)
    return body


def _planted_builds(copy: str, tmp: str, summary: dict) -> list[str]:
    """The report's section on the planted breakages: each planted in the copy, built three ways, then undone."""
    body = [
        "",
        "## Planted breakages (each in the copy, then undone)",
        "",
        "| planted | site command (MkDocs --strict) | zensical build | zensical build, strict: false |",
        "| --- | --- | --- | --- |",
    ]
    summary["planted"] = {}
    for what, rel, change, names in PLANTED:
        path, original = plant(copy, rel, change)
        try:
            results = [
                build_mkdocs(copy, os.path.join(tmp, "planted-mkdocs")),
                build_zensical(copy, os.path.join(tmp, "planted-zensical")),
                build_zensical(copy, os.path.join(tmp, "planted-zensical"), strict_off=True),
            ]
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(original)
        cells = [verdict(s, o, names) for s, o, _ in results]
        summary["planted"][what] = cells
        body.append(f"| {what} | " + " | ".join(cells) + " |")
    return body


def main(argv):
    if len(argv) != 1:
        print(__doc__)
        return 2
    report_dir = os.path.abspath(argv[0])
    skipped = _missing_builder()
    if skipped:
        print(skipped)
        return 77
    os.makedirs(report_dir, exist_ok=True)
    versions = {
        p: importlib.metadata.version(p) for p in ("zensical", "mkdocs", "mkdocs-material", "pymdown-extensions")
    }
    head = [
        f"# What Zensical {versions['zensical']} makes of the course's site",
        "",
        f"Reference: the site command (MkDocs {versions['mkdocs']}, Material {versions['mkdocs-material']}, "
        f"pymdown-extensions {versions['pymdown-extensions']}). Written by opcourse/site/successor_check.py on "
        f"{time.strftime('%Y-%m-%d')}; it never fails the tests: the course builds with MkDocs.",
        "",
    ]
    summary = {"versions": versions}
    with tempfile.TemporaryDirectory() as tmp:
        copy = _copy_course(tmp)
        body = _unchanged_builds(copy, tmp, summary)
        body += _planted_builds(copy, tmp, summary)
    report = "\n".join(head + body) + "\n"
    with open(os.path.join(report_dir, "successor_report.md"), "w", encoding="utf-8") as f:
        f.write(report)
    with open(os.path.join(report_dir, "successor_report.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    print(report)
    print(f"site/successor: report in {os.path.join(report_dir, 'successor_report.md')} (never a failure)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
