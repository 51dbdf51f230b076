"""CSV files an instructor opens in a spreadsheet: every text cell the course writes is made inert there.

A cell that begins with '=', '+', '-', '@', a tab or a carriage return is a formula to Excel, LibreOffice and
Google Sheets (CSV injection, OWASP); student folder names reach the gradebook from an LMS export or a roster, so a
name like '=HYPERLINK(...)' would become a live cell. Such a cell gets a leading "'" (OWASP's advice), the csv module
still quotes it, and the real name stays in the student's results.json and feedback.md. Every cell goes through
inert(): the scores the course formats never begin with one of those characters, so they are written unchanged."""

from __future__ import annotations

import csv
from typing import IO, Iterable

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")


def inert(cell: str) -> str:
    """The cell as a spreadsheet must show it: text, never a formula."""
    return "'" + cell if cell.startswith(FORMULA_LEADS) else cell


def writer(fh: IO[str]) -> "SafeWriter":
    return SafeWriter(fh)


class SafeWriter:
    """csv.writer whose every cell is written through inert()."""

    def __init__(self, fh: IO[str]):
        self._w = csv.writer(fh)

    def writerow(self, row: Iterable[object]) -> None:
        self._w.writerow([inert(str(c)) for c in row])
