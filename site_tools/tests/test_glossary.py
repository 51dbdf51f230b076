"""The glossary and the chapters agree (issue 26).

check (default):
- every link to a glossary page, from a chapter or from the glossary itself, resolves to an existing page;
- every term page (chapters/glossary/*.md but index.md and abbreviations.md) has the seed's parts, in order: an H1
  question, a one-paragraph definition, then the sections Why it matters, Measured, Related terms, Where you meet
  this, Sources, Byline (with its <!-- byline --> mark), and nothing else;
- Measured cites only evidence files that exist (evidence/gpu/...), or says "No measurement of its own: see
  chapter N"; every source says when it was checked and against which torch;
- each chapter a term page lists under "Where you meet this" mentions the term (its `term` or one of its `aliases`,
  in prose) and links its first use to the term page; and the reverse: every chapter whose prose uses the term (outside
  code, inline code, comments, grader transcripts and its list of sources) is listed there, so a reader of the term
  finds every chapter they meet it in;
- every page's front matter validates against opcourse/site/page_meta.schema.json (glossary pages must have it), and
  every term has a hover definition in chapters/glossary/abbreviations.md;
- what pages say about the course is true (page_claims.py): every chapter named is in mkdocs.yml's nav, no page
  promises a chapter the nav lacks, and hints or reference solutions said to be below, or in every chapter, are.
catches: each breakage the check exists for (page_claims.PLANTED, and a dangling term link, a "Where you meet this" chapter that never uses
  the term, a chapter that uses the term but is not listed, a section out of order, a cited evidence file that does not exist, a front matter field that breaks the
  schema) is planted in a temporary copy of the course and must be reported by name; the dangling link and the
  schema violation must also stop the strict MkDocs build, naming the page and the link or the field.
publish_refuses: opcourse/site/publish_check.py and the site command's publish mode (build_site.py --publish) refuse to
  publish today's pages (reviewers pending), exit 1, naming them, building nothing; a page without front matter stops
  the default build; a page whose author and reviewer have signed (in a temporary copy) is no longer named.

usage: test_glossary.py [check | catches | publish_refuses]"""

import os
import re
import subprocess
import sys
import tempfile

from sitelib import COURSE_ROOT, build_site, copy_course, plant

from opcourse.site import page_meta
from opcourse.site.sources import CHECKED, SOURCE_SECTIONS  # the note every source carries

SECTIONS = ["Why it matters", "Measured", "Related terms", "Where you meet this", "Sources", "Byline"]
NOT_TERMS = ("index.md", "abbreviations.md")
LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
EVIDENCE = re.compile(r"evidence/gpu/[\w./-]+[\w]")
NO_MEASUREMENT = re.compile(r"No measurement of its own: see chapter \d+")
ABBR = re.compile(r"^\*\[([^\]]+)\]:\s*\S")


def prose_lines(text):
    """(line number, line, the section it is in) of the text a reader reads as prose: fenced blocks, HTML comments
    and grader transcripts left out; headings set the section and are not yielded."""
    fence, comment, transcript, section = None, False, False, None
    for no, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if fence:
            if s.startswith(fence) and s.strip(fence[0]) == "":
                fence = None
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(1)
            continue
        if comment:
            comment = "-->" not in line
            continue
        if s.startswith("<!--"):
            comment = "-->" not in s
            continue
        if '<div class="grader-output"' in line:
            transcript = True
        if transcript:
            transcript = "</div>" not in line
            continue
        head = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if head:
            section = head.group(1)
        yield no, line, section, bool(head)


def prose(text):
    """The text a reader reads as prose (headings included): fenced blocks, HTML comments and transcripts removed."""
    return "\n".join(line for _, line, _, _ in prose_lines(text))


def first_use(text, names):
    """(line number, line) of the first use of one of `names` in the page's running prose: outside fenced blocks,
    inline code, comments, grader transcripts and the page's list of sources (a link title there is not a use); None
    if the page never uses them."""
    for no, line, section, heading in prose_lines(text):
        if heading or section in SOURCE_SECTIONS:
            continue
        flat = re.sub(r"[*_]{1,2}(?=\w)|(?<=\w)[*_]{1,2}", "", re.sub(r"`[^`]*`", "``", line))
        if any(re.search(r"(?<![\w-])%s(?![\w])" % re.escape(n), flat, re.I) for n in names if n):
            return no, line.strip()
    return None


def mentions(text, names):
    flat = re.sub(r"[*_]{1,2}(?=\w)|(?<=\w)[*_]{1,2}", "", prose(text))  # *current* stream -> current stream
    flat = re.sub(r"\s+", " ", flat)
    return any(re.search(r"(?<![\w-])%s(?![\w])" % re.escape(n), flat, re.I) for n in names)


def sections(body):
    """(h1, definition paragraphs, [(h2, text)])"""
    h1 = re.search(r"^# (.+)$", body, re.M)
    if not h1:
        return None, [], []
    rest = body[h1.end() :]
    parts = re.split(r"^## (.+)$", rest, flags=re.M)
    definition = [p for p in re.split(r"\n\s*\n", parts[0].strip()) if p.strip()]
    return h1.group(1).strip(), definition, [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts), 2)]


def list_links(text):
    return [(m.group(1), m.group(2)) for m in LINK.finditer(text)]


def glossary_target(source, target, root):
    """The glossary page a link points to (path relative to root), or None if it is not a glossary link."""
    path = target.split("#")[0]
    if not path.endswith(".md") or "://" in path:
        return None
    full = os.path.normpath(os.path.join(os.path.dirname(source), path))
    if os.path.dirname(full) != os.path.join(root, "chapters", "glossary"):
        return None
    return os.path.relpath(full, root)


def check(root=COURSE_ROOT):
    """[problem] of the glossary and its links in the course at root."""
    problems = []
    chapters_dir = os.path.join(root, "chapters")
    gdir = os.path.join(chapters_dir, "glossary")
    pages = sorted(os.path.join(d, n) for d, _, ns in os.walk(chapters_dir) for n in ns if n.endswith(".md"))
    pages = [p for p in pages if os.path.relpath(p, gdir) != "abbreviations.md"]
    rel = lambda p: os.path.relpath(p, root)  # noqa: E731
    terms = {}

    # front matter of every page; glossary pages must have it
    for p in pages:
        try:
            meta, _ = page_meta.read_page(p)
        except Exception as e:  # noqa: BLE001 - a YAML error: say which page
            problems.append(f"{rel(p)}: front matter is not valid YAML: {e}")
            continue
        if meta is None:
            if p.startswith(gdir + os.sep):
                problems.append(f"{rel(p)}: a glossary page without front matter")
            continue
        problems += page_meta.validate(meta, rel(p))
        if p.startswith(gdir + os.sep) and os.path.basename(p) not in NOT_TERMS:
            if not meta.get("term"):
                problems.append(f"{rel(p)}: front matter field 'term': a term page names its term")
            terms[rel(p)] = [meta.get("term") or ""] + list(meta.get("aliases") or [])

    # every glossary link resolves, from the chapters and from the glossary itself
    linked = {}  # chapter -> {glossary page it links}
    for p in pages:
        with open(p, encoding="utf-8") as f:
            text = prose(f.read())
        for label, target in list_links(text):
            g = glossary_target(p, target, root)
            if g is None and p.startswith(gdir + os.sep) and target.endswith(".md") and "/" not in target:
                g = os.path.relpath(os.path.join(gdir, target), root)
            if g is None:
                continue
            if not os.path.isfile(os.path.join(root, g)) or os.path.basename(g) in ("abbreviations.md",):
                problems.append(f"{rel(p)}: the link [{label}]({target}) points to {g}, which is no glossary page")
            linked.setdefault(rel(p), set()).add(g)

    # abbreviations: one hover definition per term
    abbr_file = os.path.join(gdir, "abbreviations.md")
    abbrs = set()
    if os.path.isfile(abbr_file):
        with open(abbr_file, encoding="utf-8") as f:
            abbrs = {m.group(1).lower() for m in map(ABBR.match, f) if m}
    else:
        problems.append(f"{rel(abbr_file)} is missing: the terms have no hover definitions")

    for page, names in sorted(terms.items()):
        full = os.path.join(root, page)
        _, body = page_meta.read_page(full)
        h1, definition, secs = sections(body)
        if not h1 or not re.match(r"What (is|are) .+\?$", h1):
            problems.append(f"{page}: the title must be the term as a question (# What is ...?), not {h1!r}")
        if len(definition) != 1 or not definition[0].strip().endswith("."):
            problems.append(f"{page}: the definition must be one paragraph (one sentence) right under the title")
        names_found = [s for s, _ in secs]
        if names_found != SECTIONS:
            problems.append(f"{page}: sections {names_found} are not the seed's sections in order {SECTIONS}")
        sec = dict(secs)
        measured = sec.get("Measured", "")
        cited = EVIDENCE.findall(measured)
        # a run's rows rendered from its summary.json (```gpu-rows FOLDER, <!-- gpu-row|gpu-case|gpu-run: FOLDER ... -->)
        # (`newest`: each row from the newest run that logged it, which the build finds and names)
        for folders in re.findall(r"^```gpu-rows[ \t]+(\S+)|<!-- gpu-(?:row|case|run): (\S+) ", measured, re.M):
            cited += [
                f"evidence/gpu/{folder}/summary.json" if folder != "newest" else "evidence/gpu"
                for folder in folders
                if folder
            ]
        for path in cited:
            if not os.path.exists(os.path.join(root, path)):
                problems.append(f"{page}: Measured cites {path}, which does not exist")
        if not cited and not NO_MEASUREMENT.search(measured):
            problems.append(
                f"{page}: Measured cites no evidence/gpu/ file and does not say "
                "'No measurement of its own: see chapter N'"
            )
        for label, target in list_links(sec.get("Related terms", "")):
            if target == os.path.basename(page):
                problems.append(f"{page}: Related terms lists the page itself")
        if not list_links(sec.get("Related terms", "")):
            problems.append(f"{page}: Related terms links no other term")
        where = [t for _, t in list_links(sec.get("Where you meet this", ""))]
        if not where:
            problems.append(f"{page}: 'Where you meet this' lists no chapter")
        for target in where:
            chapter = os.path.normpath(os.path.join(os.path.dirname(full), target.split("#")[0]))
            crel = os.path.relpath(chapter, root)
            if not os.path.isfile(chapter):
                problems.append(f"{page}: 'Where you meet this' lists {crel}, which does not exist")
                continue
            with open(chapter, encoding="utf-8") as f:
                ctext = f.read()
            if not mentions(ctext, [n for n in names if n]):
                problems.append(
                    f"{page}: 'Where you meet this' lists {crel}, which never mentions "
                    f"{' or '.join(repr(n) for n in names if n)}"
                )
            elif page not in linked.get(crel, set()):
                problems.append(
                    f"{page}: 'Where you meet this' lists {crel}, which does not link the term's first "
                    f"use to {os.path.basename(page)}"
                )
        # the reverse: a chapter that uses the term is listed (chapter 9 was thought to use "custom operator"; the
        # rule found chapters 3 to 7 using dispatcher, schema, fake tensor and profiler without being listed)
        listed = {os.path.normpath(os.path.join(os.path.dirname(full), t.split("#")[0])) for t in where}
        for chapter in sorted(
            p for p in pages if os.path.dirname(p) == chapters_dir and os.path.basename(p) != "index.md"
        ):
            if chapter in listed:
                continue
            with open(chapter, encoding="utf-8") as f:
                use = first_use(f.read(), names)
            if use:
                problems.append(
                    f"{page}: {rel(chapter)} uses the term (line {use[0]}: {use[1][:80]!r}) but "
                    f"'Where you meet this' does not list it"
                )
        sources = [l for l in sec.get("Sources", "").split("\n- ") if l.strip()]
        if not sources:
            problems.append(f"{page}: Sources lists nothing")
        for s in sources:
            if "http" not in s or not CHECKED.search(re.sub(r"\s+", " ", s)):
                problems.append(
                    f"{page}: the source {s.strip()[:70]!r}... needs its address and "
                    "'(checked YYYY-MM-DD against torch X.Y.Z)'"
                )
        if page_meta.BYLINE_MARK not in sec.get("Byline", ""):
            problems.append(f"{page}: the Byline section lacks the {page_meta.BYLINE_MARK} mark it is rendered at")
        if not any(n.lower() in abbrs for n in names if n):
            problems.append(f"{page}: no hover definition for {names[0]!r} in chapters/glossary/abbreviations.md")
    if not terms:
        problems.append("no glossary term page found under chapters/glossary/")
    return problems, len(terms)


def main_check():
    import page_claims

    problems, n = check()
    problems += page_claims.check()
    for p in problems:
        print("FAIL:", p)
    print(
        f"site/glossary: {n} term pages, their links from the chapters and their front matter, and the pages' "
        f"claims about chapters and hints checked, {len(problems)} problem(s)"
    )
    return 1 if problems else 0


# (what is planted, file, old text, new text, what the report must contain)
PLANTED = [
    (
        "a dangling term link in a chapter",
        "chapters/01_custom_op.md",
        "# 1. What a custom operator is\n",
        "# 1. What a custom operator is\n\nSee [the table](glossary/no-such-term.md).\n",
        ["chapters/01_custom_op.md", "glossary/no-such-term.md", "no glossary page"],
    ),
    (
        "a 'Where you meet this' chapter that never uses the term",
        "chapters/glossary/negative-control.md",
        "## Sources",
        "- [Chapter 9, Portability](../09_portability.md): not there.\n\n## Sources",
        ["negative-control.md", "chapters/09_portability.md", "never mentions"],
    ),
    (
        "a chapter listed under 'Where you meet this' that does not link the term",
        "chapters/06_autograd.md",
        "[negative control](glossary/negative-control.md)",
        "negative control",
        ["negative-control.md", "chapters/06_autograd.md", "does not link"],
    ),
    (
        "a chapter that uses the term, missing from 'Where you meet this'",
        "chapters/glossary/cuda-stream.md",
        "- [Chapter 4, The CUDA kernel](../04_cuda.md)",
        "- (chapter 4 left out)",
        ["cuda-stream.md", "chapters/04_cuda.md uses the term", "does not list it"],
    ),
    (
        "a section of the seed renamed",
        "chapters/glossary/opcheck.md",
        "## Why it matters",
        "## Why this matters",
        ["opcheck.md", "not the seed's sections in order"],
    ),
    (
        "two sections out of order (Sources before Where you meet this)",
        "chapters/glossary/opcheck.md",
        "## Where you meet this",
        "## Sources\n\n- moved up\n\n## Where you meet this",
        ["opcheck.md", "not the seed's sections in order"],
    ),
    (
        "a Measured section citing a log that does not exist",
        "chapters/glossary/gencode.md",
        "`evidence/gpu/README.md` records it",
        "`evidence/gpu/no-such.log` records it",
        ["gencode.md", "no-such.log", "does not exist"],
    ),
    (
        "a Measured section quoting a run that does not exist",
        "chapters/glossary/gencode.md",
        "<!-- gpu-case: 2026-12-02-arch-list-9.0a ",
        "<!-- gpu-case: 2026-12-02-no-such-run ",
        ["gencode.md", "2026-12-02-no-such-run/summary.json", "does not exist"],
    ),
    (
        "front matter with a bad field value",
        "chapters/glossary/dispatcher.md",
        "reviewers: pending\n",
        "reviewers: pendng\n",
        ["chapters/glossary/dispatcher.md", "'reviewers'"],
    ),
    (
        "front matter with a field the schema does not know",
        "chapters/glossary/schema.md",
        "written_on: pending\n",
        "written_on: pending\nreviewed: yes\n",
        ["chapters/glossary/schema.md", "'reviewed'"],
    ),
]


# planted breakages that must also stop the strict MkDocs build, and what its output must say
BUILD_STOPS = {
    "a dangling term link in a chapter": ["01_custom_op.md", "glossary/no-such-term.md"],
    "front matter with a bad field value": ["glossary/dispatcher.md", "'reviewers'"],
}


def main_catches():
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        base, _ = check(tmp)
        if base:
            missed.append(f"the unmodified copy already fails the check: {base}")
        for what, path, old, new, expected in PLANTED:
            original = plant(tmp, path, old, new)
            found, _ = check(tmp)
            hit = [p for p in found if all(e in p for e in expected)]
            if hit:
                print(f"caught: {what}: {hit[0]}")
            else:
                missed.append(f"not caught: {what} (expected a problem containing {expected}, got {found})")
            stops = BUILD_STOPS.get(what)
            if stops and hit:
                # the same breakage stops the strict build, naming the page and what is wrong
                status, output = build_site(tmp, os.path.join(tmp, "site"))
                if status == 0 or not all(e in output for e in stops):
                    missed.append(
                        f"the strict build did not stop on {what}, saying {stops} (exit {status}):\n{output[-2000:]}"
                    )
                else:
                    line = next(l for l in output.splitlines() if stops[-1] in l)
                    print(f"caught by the strict build too: {what}: {line.strip()}")
            with open(os.path.join(tmp, path), "w", encoding="utf-8") as f:
                f.write(original)
    import page_claims

    missed += page_claims.catches()
    for m in missed:
        print("FAIL:", m)
    print(
        f"site/glossary_catches: {len(PLANTED) + len(page_claims.PLANTED)} planted breakages, {len(missed)} problem(s)"
    )
    return 1 if missed else 0


def run_publish_check(root):
    proc = subprocess.run(
        [sys.executable, "-m", "opcourse.site.publish_check", "--root", root],
        cwd=COURSE_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr


def main_publish_refuses():
    problems = []
    status, output = run_publish_check(COURSE_ROOT)
    print(output)
    if status != 1:
        problems.append(f"publish_check.py exited {status}, expected 1 (it must refuse while reviewers are pending)")
    if "chapters/glossary/opcheck.md" not in output or "reviewers: pending" not in output:
        problems.append("publish_check.py's refusal does not name a pending page and its reason")
    # the site command's publish mode: refused the same way, and nothing built
    with tempfile.TemporaryDirectory() as site:
        proc = subprocess.run(
            [sys.executable, "-m", "opcourse.site.build_site", "--publish", "--site-dir", site],
            cwd=COURSE_ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        out = proc.stdout + proc.stderr
        print(out.splitlines()[0] if out else "")
        if (
            proc.returncode != 1
            or "chapters/04_cuda.md: reviewers: pending" not in out
            or os.path.exists(os.path.join(site, "index.html"))
        ):
            problems.append(
                f"build_site.py --publish must refuse (exit 1, naming the pages, nothing built); exit "
                f"{proc.returncode}:\n{out[-2000:]}"
            )
    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        # a page without front matter has no review state: the default build stops, naming it
        with open(os.path.join(tmp, "chapters", "03_cpu.md"), encoding="utf-8") as f:
            text = f.read()
        with open(os.path.join(tmp, "chapters", "03_cpu.md"), "w", encoding="utf-8") as f:
            f.write(text.split("---\n", 2)[2])
        status, output = build_site(tmp, os.path.join(tmp, "site"))
        if status == 0 or "chapters/03_cpu.md: every page needs front matter" not in output:
            problems.append(
                f"a chapter without front matter must stop the build, naming it (exit {status}):\n{output[-2000:]}"
            )
    with tempfile.TemporaryDirectory() as tmp:
        copy_course(tmp)
        # a placeholder signature, only in this temporary copy: the signed page must drop out of the refusal
        plant(
            tmp,
            "chapters/glossary/opcheck.md",
            "authors: pending\nreviewers: pending\nwritten_on: pending\nlast_checked_on: pending\n",
            "authors: [an author]\nreviewers: [a reviewer]\nwritten_on: 2026-12-04\nlast_checked_on: 2026-12-04\n",
        )
        status, output = run_publish_check(tmp)
        if "chapters/glossary/opcheck.md" in output:
            problems.append(f"a signed page is still refused:\n{output}")
        if status != 1 or "chapters/glossary/gradcheck.md" not in output:
            problems.append(f"with one page signed, the others must still be refused:\n{output}")
    for p in problems:
        print("FAIL:", p)
    print(f"site/publish_refuses: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    sys.exit({"check": main_check, "catches": main_catches, "publish_refuses": main_publish_refuses}[mode]())
