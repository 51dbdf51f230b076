"""The course's own Markdown, as a Python-Markdown extension (mkdocs.yml: markdown_extensions: opcourse.site.course_markdown).

It rewrites a page before any other extension reads it (snippets, fences, tables), as the MkDocs hook it replaces
did. An extension, not a hook: MkDocs 2 drops hooks and plugins and Material's successor (Zensical) runs neither, but
both run the Python-Markdown extensions mkdocs.yml names, so these steps survive a move off MkDocs 1.x.

* ```dot fenced blocks are rendered to inline SVG with Graphviz at build time (Debian package graphviz): no
  diagram library runs in the browser. A diagram too wide to read stops the build.
* A page's YAML front matter (authors, reviewers, dates; every page has it, or the build stops) is validated against
  opcourse/site/page_meta.schema.json, and its `<!-- byline -->` mark becomes the byline, "pending" shown as it is. A
  page whose front matter breaks the schema stops the build with a message naming the page and the field.
* <!-- checks: EXERCISE --> and <!-- hints: EXERCISE --> become the table of graded checks and the hints, read from
  exercises/EXERCISE/exercise.json.
* GPU figures are rendered from a run's evidence/gpu/FOLDER/summary.json (opcourse/site/gpu_evidence.py), never
  retyped: a ```gpu-rows FOLDER block (one line per row, "what it shows | EXERCISE | ROW") becomes a table of the row
  on the GPU and without one; a <!-- gpu-row: FOLDER EXERCISE ROW --> mark becomes the row's verdict and detail, a
  <!-- gpu-case: FOLDER EXERCISE/CASE --> mark a planted case's failed rows, a <!-- gpu-figure: FOLDER KEY.PATH [FORMAT]
  --> mark one measured value of the run's figures.json (FORMAT: a Python format spec such as .1f), a ```gpu-text
  FOLDER FILE block (options inside: title, columns of a profiler table to keep, cut: a line length) the text file the
  run wrote, a <!-- gpu-quote: FOLDER FILE "WORDS" --> mark WORDS as code, once the build has found them in the file,
  and <!-- gpu-run: FOLDER --> (required beside them) names the machine, the date and the file. A page that
  names an evidence file that does not exist, or a row, figure, file or folder the summary lacks, or a summary that no
  longer matches its logs, stops the build. A reference solution's row is shown from the newest run that logged it:
  FOLDER `newest` in a gpu-rows block or a gpu-row mark takes each row from that run and names it beside the row, and
  a page that names an older run for a row a newer run has logged stops the build (two pages cannot disagree).

Python-Markdown does not tell an extension which page it renders: `_page` asks the engine (MkDocs 1.x's relpath tree
processor, frozen with 1.6.1, the last 1.x; Zensical's rendering context). Nothing else here knows which engine runs.
The front matter is read from the page's file by page_meta.py, as the glossary test and the publish check read it.
KaTeX is no page's business: the site command (opcourse/site/build_site.py) copies it into the built site.
"""

import os
import re
import subprocess
import sys

from markdown import Extension
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor

from . import gpu_evidence as ev
from . import page_meta
from . import sources as page_sources

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = "chapters"  # mkdocs.yml: docs_dir; messages name a page as chapters/PAGE, the path in the repository
INSTALL = "apt-get install libjs-katex fonts-katex graphviz (tools/setup.sh installs them)"

try:  # MkDocs 1.x prints a PluginError as one line, without a traceback; any other engine sees an Exception
    from mkdocs.exceptions import PluginError as _Base
except ImportError:
    _Base = Exception


class SiteError(_Base):
    """A page the course's Markdown cannot render as written: the build stops, naming the page."""


class _Page:
    def __init__(self, src, path):
        self.src = src  # relative to the docs folder: glossary/opcheck.md
        self.path = path  # the file, to read its front matter


def _page(md):
    """The page `md` is rendering, from whichever engine runs it."""
    relpath = md.treeprocessors["relpath"] if "relpath" in md.treeprocessors else None
    file = getattr(relpath, "file", None)
    if file is not None:  # MkDocs 1.x: one Markdown per page, with the page's File on this tree processor
        return _Page(file.src_uri, file.abs_src_path)
    for p in md.preprocessors:  # Zensical: its rendering context (path relative to docs_dir)
        page, config = getattr(p, "page", None), getattr(p, "config", None)
        if page is not None and isinstance(config, dict) and "docs_dir" in config:
            return _Page(page.path, os.path.join(config.get("root_dir", ""), config["docs_dir"], page.path))
    raise SiteError(
        "opcourse/site/course_markdown.py cannot tell which page it renders (it knows MkDocs 1.x and "
        "Zensical): add the new engine's way to _page()"
    )


# Graphviz sizes in points; a diagram wider than this is shrunk to fit the text column (~900 px on a laptop) until
# its 11 pt labels fall below ~11 px. Lay it out top-to-bottom or in rank=same rows instead.
MAX_DIAGRAM_WIDTH_PT = 900
_DOT_FENCE = re.compile(r"^```dot[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


def _render_dot(source, page):
    try:
        proc = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=60)
    except FileNotFoundError as e:
        raise SiteError(f"Graphviz's dot is not installed (diagram in {page.src}). {INSTALL}") from e
    if proc.returncode != 0:
        raise SiteError(f"a dot diagram in {page.src} does not render:\n{proc.stderr.strip()}")
    svg = proc.stdout[proc.stdout.index("<svg") :]
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    # the page's colours, not Graphviz's: black strokes and text follow the light/dark scheme
    svg = svg.replace('fill="white" stroke="none"', 'fill="none" stroke="none"')
    svg = svg.replace('stroke="black"', 'stroke="currentColor"').replace('fill="black"', 'fill="currentColor"')
    width = float(re.search(r'<svg width="([0-9.]+)pt"', svg).group(1))
    if width > MAX_DIAGRAM_WIDTH_PT:
        first = source.strip().splitlines()[0]
        raise SiteError(
            f"the dot diagram '{first}' in {page.src} is {width:.0f} pt wide (at most "
            f"{MAX_DIAGRAM_WIDTH_PT}): the page would shrink its text to an unreadable size. Use "
            "rankdir=TB, or { rank=same; ... } rows, to make it narrower."
        )
    # natural size (the labels' font size), shrunk by CSS only when the column is narrower
    svg = svg.replace("<svg ", '<svg role="img" ', 1)
    return '<div class="diagram" markdown="0">' + "".join(l.strip() for l in svg.splitlines()) + "</div>"


def render(markdown, page):
    """The page's Markdown with the course's marks, fences and front matter rendered (SiteError if it cannot be)."""
    markdown = _page_meta(markdown, page)
    _check_sources(markdown, page)
    markdown = _expand_exercise_marks(markdown, page)
    markdown = _gpu_evidence(markdown, page)
    return _DOT_FENCE.sub(lambda m: _render_dot(m.group(1), page), markdown)


def _check_sources(markdown, page):
    """Every external reference is a listed source with the date it was checked and the torch it was checked against
    (opcourse/site/sources.py): the build stops on one without; it warns, without stopping, when the course now pins a
    newer torch than a page's sources were checked against (opcourse/site/sources_due.py lists those pages)."""
    src = f"{DOCS}/{page.src}"
    found, problems = page_sources.page_sources(markdown)
    if problems:
        raise SiteError(f"{src}: " + f"\n{src}: ".join(problems))
    older = page_sources.older_torch(found, page_sources.pinned_torch())
    if older:  # printed, not logged through MkDocs: --strict would make a warning an error
        print(
            f"WARNING -  {src}: sources {older}: re-check them (python -m opcourse.site.sources_due)", file=sys.stderr
        )


_GPU_ROWS = re.compile(r"^```gpu-rows[ \t]+(\S+)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_GPU_ROW = re.compile(r"<!-- gpu-row: (\S+) (\S+) (\S+) -->")
_GPU_RUN = re.compile(r"<!-- gpu-run: (\S+) -->")
_GPU_CASE = re.compile(r"<!-- gpu-case: (\S+) (\S+) -->")
_GPU_FIGURE = re.compile(r"<!-- gpu-figure: (\S+) (\S+)(?: (\S+))? -->")
_GPU_QUOTE = re.compile(r'<!-- gpu-quote: (\S+) (\S+) "([^"\n]+)" -->')
_GPU_TEXT = re.compile(r"^```gpu-text[ \t]+(\S+)[ \t]+(\S+)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
_EVIDENCE_PATH = re.compile(r"evidence/gpu/[A-Za-z0-9_./-]*[A-Za-z0-9_]")


class _GpuMarks:
    """The gpu-* marks of one page, each replaced by what the evidence under evidence/gpu/ logged."""

    def __init__(self, markdown, page):
        self.page = page
        self.src = f"{DOCS}/{page.src}"
        self.no_gpu_runs = []  # the runs a `newest` table's "without a GPU" column came from
        self.runs_named = set(_GPU_RUN.findall(markdown)) | {m.group(1) for m in _GPU_ROWS.finditer(markdown)}

    def summary(self, folder):
        try:
            return ev.load(folder)
        except ev.EvidenceError as e:
            raise SiteError(f"{self.src}: {e}") from None

    def row(self, folder, exercise, row_id):
        """(summary, row): from the run named, or the newest that logged it; a named run that a newer one has
        superseded for this row stops the build."""
        try:
            if folder == ev.NEWEST:
                return ev.newest_reference_row(exercise, row_id)
            s = self.summary(folder)
            r = ev.reference_row(s, exercise, row_id)
            newer = ev.newer_reference_row(s, exercise, row_id)
        except ev.EvidenceError as e:
            raise SiteError(f"{self.src}: {e}") from None
        if newer is not None:
            raise SiteError(
                f"{self.src}: row {row_id} of {exercise} is quoted from {folder}, but the newer run "
                f"{newer['folder']} logged it too: quote the newest run (write `{ev.NEWEST}` for the "
                f"folder), so that no two pages show different runs' figures for it"
            )
        return s, r

    def cited(self, s, exercise):
        return ev.machine_line(s, s["reference_logs"].get(exercise))

    def without_gpu(self, s, exercise, row_id):
        if s is None:  # `newest`: the newest run that graded the reference without the GPU
            s, case, file = ev.newest_without_gpu(exercise)
            if s is not None:
                self.no_gpu_runs.append(ev.machine_line(s, file))
        else:
            case = s["cases_without_gpu"].get(f"{exercise}/reference")
        if case is not None:
            if row_id in case["skipped"]:
                return "SKIPPED: needs a CUDA device (not graded, not passed)"
            return "FAIL" if row_id in case["failed"] else "PASS"
        meta = _exercise(exercise, self.page)
        check = next((c for c in meta["checks"] if c["id"] == row_id), None)
        if check is None or check.get("cuda"):
            raise SiteError(
                f"{self.src}: {s['folder'] if s else 'no run'} has no run of {exercise} without a GPU to show {row_id} from"
            )
        return f"PASS (a CPU row: CI grades planted `{exercise}/reference` on every commit)"

    def needs_run(self, folder, what):
        if folder not in self.runs_named:
            raise SiteError(
                f"{self.src}: a {what} of {folder} needs a <!-- gpu-run: {folder} --> mark on the page, which "
                "names the machine, the date and the file"
            )

    def table(self, m):
        folder, newest = m.group(1), m.group(1) == ev.NEWEST
        lines = ["| what it shows | row | on the GPU | without a GPU |", "| --- | --- | --- | --- |"]
        runs = []
        self.no_gpu_runs.clear()
        for line in m.group(2).strip().splitlines():
            cells = [c.strip() for c in line.split("|")]
            if len(cells) != 3:
                raise SiteError(f"{self.src}: a gpu-rows line is 'what it shows | EXERCISE | ROW', not {line!r}")
            what, exercise, row_id = cells
            s, r = self.row(folder, exercise, row_id)
            if self.cited(s, exercise) not in runs:
                runs.append(self.cited(s, exercise))
            run_no = f" [{runs.index(self.cited(s, exercise)) + 1}]" if newest else ""
            lines.append(
                f"| {_md_cell(what)} | `{exercise}` `{row_id}` | **{r['status']}** {_md_cell(r['detail'])}"
                f"{run_no} | {self.without_gpu(None if newest else s, exercise, row_id)} |"
            )
        if not newest:
            return "\n".join(lines) + f"\n\nRendered from the run's summary: {ev.machine_line(self.summary(folder))}."
        no_gpu = sorted(set(self.no_gpu_runs))
        return (
            "\n".join(lines)
            + "\n\nEach row from the newest run that logged it: "
            + "; ".join(f"[{i}] {run}" for i, run in enumerate(runs, 1))
            + (f". Without a GPU: {'; '.join(no_gpu)}." if no_gpu else ".")
        )

    def mark(self, m):
        folder = m.group(1)
        s, r = self.row(folder, m.group(2), m.group(3))
        shown = f'`{m.group(2)}` `{m.group(3)}` **{r["status"]}** (as the table logged it: "{r["detail"]}")'
        if folder == ev.NEWEST:  # the run is named here, not by a gpu-run mark
            return f"{shown}, in the newest run that logged it: {self.cited(s, m.group(2))}"
        self.needs_run(folder, "gpu-row")
        return shown

    def case(self, m):
        s = self.summary(m.group(1))
        c = s["cases"].get(m.group(2))
        if c is None:
            raise SiteError(f"{self.src}: no verdict table of {s['folder']} has planted case {m.group(2)}")
        self.needs_run(m.group(1), "gpu-case")
        failed = ", ".join(f"`{r}`" for r in c["failed"]) or "none"
        skipped = ", ".join(f"`{r}`" for r in c["skipped"])
        return (
            f"planted `{m.group(2)}` on the GPU: rows failed {failed}"
            f"{'; SKIPPED ' + skipped if skipped else ''}"
            f"{' (its expected verdict)' if c['as_expected'] else ' (NOT its expected verdict)'}"
        )

    def figure(self, m):
        self.needs_run(m.group(1), "gpu-figure")
        try:
            value = ev.figure(self.summary(m.group(1)), m.group(2))
            return format(value, m.group(3) or "")
        except ev.EvidenceError as e:
            raise SiteError(f"{self.src}: {e}") from None
        except (ValueError, TypeError) as e:
            raise SiteError(f"{self.src}: gpu-figure {m.group(2)} cannot be written as {m.group(3)!r}: {e}") from None

    def quote(self, m):
        folder, file, words = m.groups()
        self.needs_run(folder, "gpu-quote")
        try:
            logged = ev.text_file(self.summary(folder), file)
        except ev.EvidenceError as e:
            raise SiteError(f"{self.src}: {e}") from None
        if words not in logged:
            raise SiteError(
                f"{self.src}: evidence/gpu/{folder}/{file} does not contain {words!r}: a page quotes a run only "
                "with what the run wrote"
            )
        return f"`{words}`"

    def text(self, m):
        folder, file = m.group(1), m.group(2)
        self.needs_run(folder, "gpu-text")
        options = {}
        for line in m.group(3).strip().splitlines():
            key, sep, value = line.partition(":")
            if not sep or key.strip() not in ("title", "columns", "cut"):
                raise SiteError(
                    f"{self.src}: a gpu-text option is 'title: ...', 'columns: A | B' or 'cut: N', not {line!r}"
                )
            options[key.strip()] = value.strip()
        s = self.summary(folder)
        try:
            lines = ev.text_file(s, file).rstrip("\n").splitlines()
        except ev.EvidenceError as e:
            raise SiteError(f"{self.src}: {e}") from None
        if "columns" in options:
            lines = _profiler_columns(lines, [c.strip() for c in options["columns"].split("|")], self.src)
        if "cut" in options:
            if not options["cut"].isdigit() or int(options["cut"]) < 8:
                raise SiteError(f"{self.src}: gpu-text cut is a line length of 8 or more, not {options['cut']!r}")
            width = int(options["cut"])
            lines = [line if len(line) <= width else line[: width - 3] + "..." for line in lines]
        title = f"{options.get('title', file)} ({s['folder']}/{file})"
        mark = "'" if '"' in title else '"'  # superfences takes no escaped quote in a title
        return f"```text title={mark}{title.replace(mark, '`')}{mark}\n" + "\n".join(lines) + "\n```"


def _gpu_evidence(markdown, page):
    marks = _GpuMarks(markdown, page)
    src = marks.src
    markdown = _GPU_TEXT.sub(marks.text, markdown)
    markdown = _GPU_FIGURE.sub(marks.figure, markdown)
    markdown = _GPU_QUOTE.sub(marks.quote, markdown)
    markdown = _GPU_CASE.sub(marks.case, markdown)
    markdown = _GPU_ROWS.sub(marks.table, markdown)
    markdown = _GPU_ROW.sub(marks.mark, markdown)
    markdown = _GPU_RUN.sub(lambda m: f"Measured on {ev.machine_line(marks.summary(m.group(1)))}.", markdown)
    for cited in sorted(set(_EVIDENCE_PATH.findall(markdown))):
        if not (ev.ROOT / cited).exists():
            raise SiteError(f"{src} cites {cited}, which does not exist")
    return markdown


def _profiler_columns(lines, keep, src):
    """The columns named `keep` of a torch.profiler table (key_averages().table()): its dashed rules give each
    column's span, the line after the first rule the names (in order: a name wider than its column shifts the rest)."""
    rules = [i for i, line in enumerate(lines) if line.strip() and set(line.strip()) <= {"-", " "}]
    if len(rules) < 2:
        raise SiteError(f"{src}: gpu-text columns: the file is not a profiler table (no dashed rules)")
    spans = [m.span() for m in re.finditer(r"-+", lines[rules[0]])]
    names = re.split(r"\s{2,}", lines[rules[0] + 1].strip())
    if len(names) != len(spans):
        raise SiteError(f"{src}: gpu-text columns: the table's header has {len(names)} names for {len(spans)} columns")
    missing = [c for c in keep if c not in names]
    if missing:
        raise SiteError(
            f"{src}: gpu-text columns: the table has no column {', '.join(missing)} (it has: {', '.join(names)})"
        )
    chosen = [(names.index(c), spans[names.index(c)]) for c in keep]
    out = []
    for i, line in enumerate(lines):
        if i == rules[0] + 1:
            out.append("  ".join(names[k].rjust(b - a) for k, (a, b) in chosen).rstrip())
        elif rules[0] <= i <= rules[-1]:
            out.append("  ".join("-" * (b - a) if i in rules else line[a:b] for _, (a, b) in chosen).rstrip())
        else:
            out.append(line)
    return out


# <!-- checks: EXERCISE --> and <!-- hints: EXERCISE --> in a chapter become the table of graded checks and the
# collapsible hints, read from exercises/EXERCISE/exercise.json at build time: the page cannot drift from the grader.
_EXERCISE_MARK = re.compile(r"^<!-- (checks|hints): ([A-Za-z0-9_]+) -->[ \t]*$", re.M)


def _exercise(exercise_id, page):
    from .. import (
        metadata as course_metadata,
    )  # the one Python reader of exercise.json (checks resolved from the catalog)

    if not os.path.isfile(os.path.join(ROOT, "exercises", exercise_id, "exercise.json")):
        raise SiteError(f"{page.src} names exercise '{exercise_id}', which has no exercise.json")
    try:
        return course_metadata.load(exercise_id)
    except course_metadata.MetadataError as e:
        raise SiteError(f"{page.src}: {e}") from None


def _md_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def _exercise_block(kind, exercise_id, page):
    meta = _exercise(exercise_id, page)
    if kind == "checks":
        lines = ["| Check | What it verifies | Points | GPU |", "| --- | --- | --: | :-: |"]
        for c in meta["checks"]:
            lines.append(
                f"| `{c['id']}` | {_md_cell(c['title'])} | {c.get('points', 1):g} | {'yes' if c.get('cuda') else ''} |"
            )
        total = sum(c.get("points", 1) for c in meta["checks"])
        lines.append(f"| | **total** | **{total:g}** | |")
        return "\n".join(lines)
    blocks = []
    for i, hint in enumerate(meta.get("hints", []), 1):
        blocks.append(f'??? tip "Hint {i}"\n    {hint}\n')
    return "\n".join(blocks)


def _expand_exercise_marks(markdown, page):
    return _EXERCISE_MARK.sub(lambda m: _exercise_block(m.group(1), m.group(2), page), markdown)


# Front matter and byline (opcourse/site/page_meta.py). The engine has already cut the front matter off the Markdown it
# hands over; page_meta reads it from the page's file, as the glossary test and the publish check do.


def _page_meta(markdown, page):
    src = f"{DOCS}/{page.src}"
    try:
        meta, _ = page_meta.read_page(page.path)
    except Exception as e:  # noqa: BLE001 - a YAML error: say which page
        raise SiteError(f"{src}: front matter is not valid YAML: {e}") from None
    if meta is None:  # every page states its review state, chapters as much as glossary pages
        raise SiteError(
            f"{src}: every page needs front matter (authors, reviewers, written_on, last_checked_on, "
            f"checked_against_torch; 'pending' where no person has signed) and a "
            f"'{page_meta.BYLINE_MARK}' mark where its byline goes"
        )
    problems = page_meta.validate(meta, src)
    if problems:
        raise SiteError(
            "page front matter does not follow opcourse/site/page_meta.schema.json:\n  " + "\n  ".join(problems)
        )
    if page_meta.BYLINE_MARK not in markdown:
        raise SiteError(
            f"{src} has front matter but no '{page_meta.BYLINE_MARK}' mark where its byline "
            "goes (under its '## Byline' heading)"
        )
    return markdown.replace(page_meta.BYLINE_MARK, page_meta.render_byline(meta))


class _CoursePreprocessor(Preprocessor):
    def run(self, lines):
        return render("\n".join(lines), _page(self.md)).split("\n")


# A fence the fence extension did not take (superfences refuses a title with an escaped quote, \", and says nothing)
# comes out as a paragraph of inline code: its info string, then its first line.
_UNTAKEN_FENCE = re.compile(r"<p><code>([\w+-]+(?:[ \t]+[^\n<]*)?)\n")


class _UntakenFences(Postprocessor):
    def run(self, text):
        m = _UNTAKEN_FENCE.search(text)
        if m:
            raise SiteError(
                f"{DOCS}/{_page(self.md).src}: a fenced block was not read as one, its opening line is "
                f"```{m.group(1)!s} (a title holds an escaped quote? write title='...' instead)"
            )
        return text


class CourseMarkdown(Extension):
    def extendMarkdown(self, md):
        # 40: before snippets (32), whitespace normalisation (30) and the fences: the page as its author wrote it
        md.preprocessors.register(_CoursePreprocessor(md), "course_markdown", 40)
        md.postprocessors.register(_UntakenFences(md), "course_untaken_fences", 0)


def makeExtension(**kwargs):
    return CourseMarkdown(**kwargs)
