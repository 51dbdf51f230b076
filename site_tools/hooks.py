"""MkDocs hooks of the course site (mkdocs.yml: hooks).

* KaTeX comes from the Debian package libjs-katex (+ fonts-katex), copied into the site at build time, so a page
  opened offline still renders its math and nothing is fetched from a CDN.
* ```dot fenced blocks are rendered to inline SVG with Graphviz at build time (Debian package graphviz): no
  diagram library runs in the browser.
* A page's YAML front matter (authors, reviewers, dates; every glossary page has it) is validated against
  site_tools/page_meta.schema.json, and its `<!-- byline -->` mark becomes the byline, "pending" shown as it is. A
  page whose front matter breaks the schema stops the strict build with a message naming the page and the field.
* GPU figures are rendered from a run's evidence/gpu/FOLDER/summary.json (site_tools/gpu_evidence.py), never
  retyped: a ```gpu-rows FOLDER block (one line per row, "what it shows | EXERCISE | ROW") becomes a table of the row
  on the GPU and without one; a <!-- gpu-row: FOLDER EXERCISE ROW --> mark becomes the row's verdict and detail, a
  <!-- gpu-case: FOLDER EXERCISE/CASE --> mark a planted case's failed rows, and <!-- gpu-run: FOLDER --> (required
  beside them) names the machine, the date and the file. A page that names an evidence file that does not exist, or a row or folder
  the summary lacks, or a summary that no longer matches its logs, stops the build.
Both packages are installed by tools/setup.sh; without them the build stops and says what to install.
"""
import os
import re
import subprocess

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

KATEX_DIRS = ["/usr/share/javascript/katex"]
_deps_root = os.environ.get("COURSE_DEPS_ROOT")
if _deps_root:
    KATEX_DIRS.insert(0, os.path.join(_deps_root, "usr/share/javascript/katex"))
INSTALL = "apt-get install libjs-katex fonts-katex graphviz (tools/setup.sh installs them)"


def _katex_dir():
    for d in KATEX_DIRS:
        if os.path.isfile(os.path.join(d, "katex.min.js")):
            return d
    raise PluginError(f"KaTeX not found in {KATEX_DIRS}: the site renders math from local files only. {INSTALL}")


def on_files(files, config):
    src = _katex_dir()
    wanted = ["katex.min.js", "katex.min.css"]
    for name in wanted:
        files.append(File.generated(config, f"assets/katex/{name}", abs_src_path=os.path.join(src, name)))
    # Debian ships auto-render unminified; it is published under the name mkdocs.yml loads
    files.append(File.generated(config, "assets/katex/contrib/auto-render.min.js",
                                abs_src_path=os.path.join(src, "contrib", "auto-render.js")))
    fonts = os.path.realpath(os.path.join(src, "fonts"))
    if not os.path.isdir(fonts) or not any(f.endswith(".woff2") for f in os.listdir(fonts)):
        raise PluginError(f"KaTeX's fonts are missing ({fonts}). {INSTALL}")
    for name in sorted(os.listdir(fonts)):
        if name.endswith(".woff2"):
            files.append(File.generated(config, f"assets/katex/fonts/{name}", abs_src_path=os.path.join(fonts, name)))
    return files


# Graphviz sizes in points; a diagram wider than this is shrunk to fit the text column (~900 px on a laptop) until
# its 11 pt labels fall below ~11 px. Lay it out top-to-bottom or in rank=same rows instead.
MAX_DIAGRAM_WIDTH_PT = 900
_DOT_FENCE = re.compile(r"^```dot[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


def _render_dot(source, page):
    try:
        proc = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=60)
    except FileNotFoundError as e:
        raise PluginError(f"Graphviz's dot is not installed (diagram in {page.file.src_uri}). {INSTALL}") from e
    if proc.returncode != 0:
        raise PluginError(f"a dot diagram in {page.file.src_uri} does not render:\n{proc.stderr.strip()}")
    svg = proc.stdout[proc.stdout.index("<svg"):]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    # the page's colours, not Graphviz's: black strokes and text follow the light/dark scheme
    svg = svg.replace('fill="white" stroke="none"', 'fill="none" stroke="none"')
    svg = svg.replace('stroke="black"', 'stroke="currentColor"').replace('fill="black"', 'fill="currentColor"')
    width = float(re.search(r'<svg width="([0-9.]+)pt"', svg).group(1))
    if width > MAX_DIAGRAM_WIDTH_PT:
        first = source.strip().splitlines()[0]
        raise PluginError(f"the dot diagram '{first}' in {page.file.src_uri} is {width:.0f} pt wide (at most "
                          f"{MAX_DIAGRAM_WIDTH_PT}): the page would shrink its text to an unreadable size. Use "
                          "rankdir=TB, or { rank=same; ... } rows, to make it narrower.")
    # natural size (the labels' font size), shrunk by CSS only when the column is narrower
    svg = svg.replace("<svg ", '<svg role="img" ', 1)
    return '<div class="diagram" markdown="0">' + "".join(l.strip() for l in svg.splitlines()) + "</div>"


def on_page_markdown(markdown, page, config, files):
    markdown = _page_meta(markdown, page)
    markdown = _expand_exercise_marks(markdown, page)
    markdown = _gpu_evidence(markdown, page)
    return _DOT_FENCE.sub(lambda m: _render_dot(m.group(1), page), markdown)


_GPU_ROWS = re.compile(r"^```gpu-rows[ \t]+(\S+)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_GPU_ROW = re.compile(r"<!-- gpu-row: (\S+) (\S+) (\S+) -->")
_GPU_RUN = re.compile(r"<!-- gpu-run: (\S+) -->")
_GPU_CASE = re.compile(r"<!-- gpu-case: (\S+) (\S+) -->")
_EVIDENCE_PATH = re.compile(r"evidence/gpu/[A-Za-z0-9_./-]*[A-Za-z0-9_]")


def _gpu_module():
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gpu_evidence

    return gpu_evidence


def _gpu_evidence(markdown, page):
    ev = _gpu_module()
    src = f"chapters/{page.file.src_uri}"

    def summary(folder):
        try:
            return ev.load(folder)
        except ev.EvidenceError as e:
            raise PluginError(f"{src}: {e}") from None

    def row(s, exercise, row_id):
        try:
            return ev.reference_row(s, exercise, row_id)
        except ev.EvidenceError as e:
            raise PluginError(f"{src}: {e}") from None

    def without_gpu(s, exercise, row_id):
        case = s["cases_without_gpu"].get(f"{exercise}/reference")
        if case is not None:
            if row_id in case["skipped"]:
                return "SKIPPED: needs a CUDA device (not graded, not passed)"
            return "FAIL" if row_id in case["failed"] else "PASS"
        meta = _exercise(exercise, page)
        check = next((c for c in meta["checks"] if c["id"] == row_id), None)
        if check is None or check.get("cuda"):
            raise PluginError(f"{src}: {s['folder']} has no run of {exercise} without a GPU to show {row_id} from")
        return f"PASS (a CPU row: CI grades planted `{exercise}/reference` on every commit)"

    def table(m):
        s = summary(m.group(1))
        lines = ["| what it shows | row | on the GPU | without a GPU |", "| --- | --- | --- | --- |"]
        for line in m.group(2).strip().splitlines():
            cells = [c.strip() for c in line.split("|")]
            if len(cells) != 3:
                raise PluginError(f"{src}: a gpu-rows line is 'what it shows | EXERCISE | ROW', not {line!r}")
            what, exercise, row_id = cells
            r = row(s, exercise, row_id)
            lines.append(f"| {_md_cell(what)} | `{exercise}` `{row_id}` | **{r['status']}** {_md_cell(r['detail'])} | "
                         f"{without_gpu(s, exercise, row_id)} |")
        return "\n".join(lines) + f"\n\nRendered from the run's summary: {ev.machine_line(s)}."

    def mark(m):
        s = summary(m.group(1))
        r = row(s, m.group(2), m.group(3))
        if m.group(1) not in runs_named:
            raise PluginError(f"{src}: a gpu-row of {m.group(1)} needs a <!-- gpu-run: {m.group(1)} --> mark on the "
                              "page, which names the machine, the date and the file")
        return f"`{m.group(2)}` `{m.group(3)}` **{r['status']}** (as the table logged it: \"{r['detail']}\")"

    def case(m):
        s = summary(m.group(1))
        c = s["cases"].get(m.group(2))
        if c is None:
            raise PluginError(f"{src}: no verdict table of {s['folder']} has planted case {m.group(2)}")
        if m.group(1) not in runs_named:
            raise PluginError(f"{src}: a gpu-case of {m.group(1)} needs a <!-- gpu-run: {m.group(1)} --> mark on the page")
        failed = ", ".join(f"`{r}`" for r in c["failed"]) or "none"
        skipped = ", ".join(f"`{r}`" for r in c["skipped"])
        return (f"planted `{m.group(2)}` on the GPU: rows failed {failed}"
                f"{'; SKIPPED ' + skipped if skipped else ''}"
                f"{' (its expected verdict)' if c['as_expected'] else ' (NOT its expected verdict)'}")

    runs_named = set(_GPU_RUN.findall(markdown)) | {m.group(1) for m in _GPU_ROWS.finditer(markdown)}
    markdown = _GPU_CASE.sub(case, markdown)
    markdown = _GPU_ROWS.sub(table, markdown)
    markdown = _GPU_ROW.sub(mark, markdown)
    markdown = _GPU_RUN.sub(lambda m: f"Measured on {ev.machine_line(summary(m.group(1)))}.", markdown)
    for cited in sorted(set(_EVIDENCE_PATH.findall(markdown))):
        if not (ev.ROOT / cited).exists():
            raise PluginError(f"{src} cites {cited}, which does not exist")
    return markdown


# <!-- checks: EXERCISE --> and <!-- hints: EXERCISE --> in a chapter become the table of graded checks and the
# collapsible hints, read from exercises/EXERCISE/exercise.json at build time: the page cannot drift from the grader.
_EXERCISE_MARK = re.compile(r"^<!-- (checks|hints): ([A-Za-z0-9_]+) -->[ \t]*$", re.M)


def _exercise(exercise_id, page):
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "autograder", "metadata"))
    import course_metadata  # the one Python reader of exercise.json (checks resolved from the catalog)

    if not os.path.isfile(os.path.join("exercises", exercise_id, "exercise.json")):
        raise PluginError(f"{page.file.src_uri} names exercise '{exercise_id}', which has no exercise.json")
    try:
        return course_metadata.load(exercise_id)
    except course_metadata.MetadataError as e:
        raise PluginError(f"{page.file.src_uri}: {e}") from None


def _md_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def _exercise_block(kind, exercise_id, page):
    meta = _exercise(exercise_id, page)
    if kind == "checks":
        lines = ["| Check | What it verifies | Points | GPU |", "| --- | --- | --: | :-: |"]
        for c in meta["checks"]:
            lines.append(f"| `{c['id']}` | {_md_cell(c['title'])} | {c.get('points', 1):g} | "
                         f"{'yes' if c.get('cuda') else ''} |")
        total = sum(c.get("points", 1) for c in meta["checks"])
        lines.append(f"| | **total** | **{total:g}** | |")
        return "\n".join(lines)
    blocks = []
    for i, hint in enumerate(meta.get("hints", []), 1):
        blocks.append(f'??? tip "Hint {i}"\n    {hint}\n')
    return "\n".join(blocks)


def _expand_exercise_marks(markdown, page):
    return _EXERCISE_MARK.sub(lambda m: _exercise_block(m.group(1), m.group(2), page), markdown)


# Front matter and byline (site_tools/page_meta.py): MkDocs has already parsed the front matter into page.meta.
GLOSSARY_DIR = "glossary/"


def _page_meta(markdown, page):
    import sys

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import page_meta

    src = page.file.src_uri
    meta = page.meta or None
    if meta is None:
        if src.startswith(GLOSSARY_DIR):
            raise PluginError(f"chapters/{src}: a glossary page needs front matter (authors, reviewers, written_on, "
                              f"last_checked_on, checked_against_torch; 'pending' where no person has signed)")
        if page_meta.BYLINE_MARK in markdown:
            raise PluginError(f"chapters/{src} has a byline mark but no front matter to render it from")
        return markdown
    problems = page_meta.validate(meta, f"chapters/{src}")
    if problems:
        raise PluginError("page front matter does not follow site_tools/page_meta.schema.json:\n  "
                          + "\n  ".join(problems))
    if page_meta.BYLINE_MARK not in markdown:
        raise PluginError(f"chapters/{src} has front matter but no '{page_meta.BYLINE_MARK}' mark where its byline "
                          "goes (under its '## Byline' heading)")
    return markdown.replace(page_meta.BYLINE_MARK, page_meta.render_byline(meta))
