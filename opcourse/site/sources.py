"""A page's external sources: each says when it was checked and against which torch.

A page lists its external references in a source section ("## Read more", "## Sources", "## Upstream
documentation"), one bullet each, and every bullet with a link ends with a note

    (checked YYYY-MM-DD against torch X.Y.Z)

saying when someone last compared what the page says about that source with the source, and which torch that was
for. A link in the page's prose must be one of its listed sources, so the list is the page's whole set of external
references. The site's build (course_markdown.py) stops on a bullet without its note or a prose link not listed, and
warns when the course's pinned torch (requirements/course.txt) is newer than a page's sources were checked against;
`python -m opcourse.site.sources_due` lists the pages due for a re-check.

A link to PyTorch's versioned documentation (https://docs.pytorch.org/docs/X.Y/...) names the X.Y of the torch its
note says it was checked against, the pinned torch when the page is up to date: a source checked against torch
2.15.0 links https://docs.pytorch.org/docs/2.15/..., never /docs/stable/ (which moves on to the next release without
the page) nor another version; the build stops on one that does not. A newer pin only warns (above), and the re-check
it asks for updates the note and the link together. The tutorials (docs.pytorch.org/tutorials/) have no versioned
address and are left as they are.
"""

from __future__ import annotations

import datetime
import os
import re
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE_SECTIONS = ("Read more", "Sources", "Upstream documentation")
CHECKED = re.compile(r"\(checked (\d{4}-\d{2}-\d{2}) against torch (\d+\.\d+(?:\.\d+)?)\)")
_URL = re.compile(r"https?://[^\s)>\]`\"']+")
_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
_TORCH_DOCS = re.compile(r"^https?://(?:docs\.)?pytorch\.org/docs/([^/#?]+)")


@dataclass
class Source:
    url: str
    checked_on: str
    torch: str
    line: int


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def pinned_torch(root: str = ROOT) -> str:
    """The torch the course pins (requirements/course.txt: torch==X.Y.Z)."""
    with open(os.path.join(root, "requirements", "course.txt"), encoding="utf-8") as f:
        m = re.search(r"^torch==(\S+)", f.read(), re.M)
    if not m:
        raise ValueError("requirements/course.txt pins no torch (a line torch==X.Y.Z)")
    return m.group(1)


def _strip(url: str) -> str:
    return url.split("#")[0].rstrip("/.,;:")


def torch_docs_version(torch: str) -> str:
    """The X.Y of docs.pytorch.org/docs/X.Y/ that documents torch X.Y.Z."""
    return ".".join(torch.split("+")[0].split(".")[:2])


def page_sources(text: str) -> tuple[list[Source], list[str]]:
    """The page's listed sources, and what is wrong with them (messages without the page's name)."""
    text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)  # code blocks hold no references
    lines = text.split("\n")
    sources, problems, listed = [], [], set()
    section, item, item_line = None, [], 0
    prose_urls = []

    def close_item():
        body = " ".join(item)
        urls = _URL.findall(body)
        if urls:
            note = CHECKED.search(body)
            if not note:
                problems.append(
                    f"line {item_line}: the source {urls[0]} does not say when it was checked: end the "
                    "bullet with '(checked YYYY-MM-DD against torch X.Y.Z)'"
                )
            else:
                try:
                    day = datetime.date.fromisoformat(note.group(1))
                except ValueError:
                    problems.append(f"line {item_line}: {note.group(1)} is not a date")
                    day = None
                if day and day > datetime.date.today():
                    problems.append(f"line {item_line}: the source {urls[0]} was checked on {day}, a future date")
                for u in urls:
                    sources.append(Source(u, note.group(1), note.group(2), item_line))
            listed.update(_strip(u) for u in urls)
        item.clear()

    for n, line in enumerate(lines, 1):
        head = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if head:
            close_item()
            section = head.group(2) if head.group(2) in SOURCE_SECTIONS else None
            continue
        if section is None:
            prose_urls += [(n, u) for u in _URL.findall(line)]
            continue
        if re.match(r"^\s{0,3}[-*+]\s", line):
            close_item()
            item[:], item_line = [line], n
        elif item and (line.startswith((" ", "\t")) and line.strip()):
            item.append(line)
        else:
            close_item()
            prose_urls += [(n, u) for u in _URL.findall(line)]
    close_item()
    for s in sources:  # a prose link is one of these (below), so it is checked here
        version, docs = _TORCH_DOCS.match(s.url), torch_docs_version(s.torch)
        if version and version.group(1) != docs:
            problems.append(
                f"line {s.line}: {s.url} links PyTorch's documentation of '{version.group(1)}', not of "
                f"torch {s.torch} it was checked against: write https://docs.pytorch.org/docs/{docs}/"
                f"{s.url[version.end() :].lstrip('/')}"
            )
    for n, u in prose_urls:
        if _strip(u) not in listed:
            problems.append(
                f"line {n}: {u} is not among the page's sources: list it, with when it was checked, "
                f"under one of the sections {', '.join(SOURCE_SECTIONS)}"
            )
    return sources, problems


def older_torch(sources: list[Source], pinned: str) -> str | None:
    """Why the page's sources predate the pinned torch (None: they do not); the build warns with it."""
    older = sorted({s.torch for s in sources if _version(s.torch) < _version(pinned)}, key=_version)
    return f"checked against torch {', '.join(older)}; the course pins {pinned}" if older else None


def due(sources: list[Source], pinned: str, today: datetime.date, max_age_days: int) -> list[str]:
    """Why the page's sources are due for a re-check (empty: not due)."""
    reasons = [r for r in (older_torch(sources, pinned),) if r]
    stale = [s for s in sources if (today - datetime.date.fromisoformat(s.checked_on)).days > max_age_days]
    if stale:
        oldest = min(s.checked_on for s in stale)
        reasons.append(f"{len(stale)} source(s) last checked more than {max_age_days} days ago (oldest {oldest})")
    return reasons
