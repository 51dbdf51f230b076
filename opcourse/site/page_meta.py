"""Page front matter: read, validate against page_meta.schema.json, render as a byline.

A page starts with YAML front matter (between two `---` lines) saying who wrote and who reviewed it. Every page
must have it (the build stops on one without). "pending" stands where no person has signed yet; the site still builds every page, and
shows "pending" plainly, but opcourse/site/publish_check.py refuses to publish while any reviewer is pending.

Used by the site's Markdown extension (opcourse/site/course_markdown.py), the glossary test
(site_tools/tests/test_glossary.py) and the publish check (opcourse/site/publish_check.py), so the three read front matter
the same way.
"""

import datetime
import json
import os
import re

import yaml

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "page_meta.schema.json")
PENDING = "pending"
BYLINE_MARK = "<!-- byline -->"
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)(?:---|\.\.\.)[ \t]*\n", re.S)


def split_front_matter(text):
    """(front matter as a dict, or None when the page has none; the rest of the page)."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return None, text
    data = yaml.safe_load(m.group(1))
    return (data if data is not None else {}), text[m.end() :]


def read_page(path):
    with open(path, encoding="utf-8") as f:
        return split_front_matter(f.read())


def normalise(meta):
    """YAML reads 2026-12-04 as a date; the schema (JSON) speaks strings, so dates become ISO strings."""

    def conv(v):
        if isinstance(v, (datetime.date, datetime.datetime)):
            return v.isoformat()[:10]
        if isinstance(v, list):
            return [conv(x) for x in v]
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        return v

    return conv(dict(meta))


_SCHEMA = None


def schema():
    global _SCHEMA
    if _SCHEMA is None:
        with open(SCHEMA_PATH, encoding="utf-8") as f:
            _SCHEMA = json.load(f)
    return _SCHEMA


def validate(meta, page):
    """[message] for each way `meta` breaks the schema; each message names the page and the field."""
    import jsonschema

    if not isinstance(meta, dict):
        return [f"{page}: front matter must be a mapping of fields, not {type(meta).__name__}"]
    validator = jsonschema.Draft202012Validator(schema())
    problems = []
    for err in sorted(validator.iter_errors(normalise(meta)), key=lambda e: list(map(str, e.absolute_path))):
        field = ".".join(str(p) for p in err.absolute_path)
        if not field and err.validator == "required":
            field = re.search(r"'([^']+)' is a required property", err.message)
            field = field.group(1) if field else "(page)"
        elif not field and err.validator == "additionalProperties":
            field = ", ".join(sorted(set(meta) - set(schema()["properties"])))
        elif not field:
            field = "(page)"
        problems.append(f"{page}: front matter field '{field}': {_explain(err, field)}")
    return problems


def _explain(err, field):
    if err.validator == "oneOf" and field in ("authors", "reviewers"):
        return f"{err.instance!r} is neither 'pending' nor a list of names"
    if err.validator == "oneOf":
        return f"{err.instance!r} is neither 'pending' nor a date YYYY-MM-DD"
    if err.validator == "required":
        return (
            "missing (every page with front matter states authors, reviewers, written_on, last_checked_on and "
            "checked_against_torch; 'pending' where no person has signed)"
        )
    if err.validator == "additionalProperties":
        return "not a field of the page schema (opcourse/site/page_meta.schema.json)"
    return err.message


def people(value):
    if value == PENDING or value is None:
        return PENDING
    return ", ".join(value)


def is_pending(value):
    return value == PENDING or value is None or value == [] or value == [PENDING]


def render_byline(meta):
    """The byline of a page, in Markdown: every field shown, 'pending' written out as it is."""
    meta = normalise(meta)
    parts = [
        f"**Written by:** {people(meta.get('authors'))}.",
        f"**Reviewed by:** {people(meta.get('reviewers'))}.",
        f"**Written on:** {meta.get('written_on', PENDING)}.",
        f"**Last checked on:** {meta.get('last_checked_on', PENDING)}.",
    ]
    tail = []
    if meta.get("checked_against_torch"):
        tail.append(
            f"The API names and behaviour on this page were checked against torch {meta['checked_against_torch']}."
        )
    if is_pending(meta.get("authors")) or is_pending(meta.get("reviewers")):
        tail.append("Publication still requires a named author's and a named reviewer's sign-off.")
    return '<div class="byline" markdown>\n' + " ".join(parts) + "\n\n" + " ".join(tail) + "\n</div>\n"


def publish_blockers(meta):
    """[reason] why a page with this front matter may not be published yet ([] when it may)."""
    if meta is None:
        return ["no front matter: the page names no author and no reviewer"]
    meta = normalise(meta)
    reasons = []
    if is_pending(meta.get("reviewers")):
        reasons.append("reviewers: pending (no named reviewer has signed)")
    if is_pending(meta.get("authors")):
        reasons.append("authors: pending (no named author)")
    if meta.get("last_checked_on", PENDING) == PENDING:
        reasons.append("last_checked_on: pending")
    return reasons
