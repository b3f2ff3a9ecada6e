"""The printable handouts (build/classroom/handouts, build/classroom/ko/handouts) that
`make classroom` writes with tools/classroom/handouts.py: one PDF per lesson, in both
languages, that a student can read on paper.

- the PDF opens, has a sensible number of pages and text that a program can extract;
- every heading of the lesson is in that text, and so is the lesson's first line of
  each code cell (whitespace aside: long lines wrap);
- no worked solution is in it;
- (tests/browser/test_browser_handouts.py: printed in Chromium at A4 width, no code or
  output line runs past the page's edge, and every picture is there with a size.)
"""
import functools
import os
import re

import nbformat
import pytest

from project import KOREAN_NOTEBOOKS, NOTEBOOKS, ROOT
from solutions import secret_lines

pytestmark = pytest.mark.build

CLASSROOM = ROOT / "build" / "classroom"
LESSONS = NOTEBOOKS + KOREAN_NOTEBOOKS
IDS = [p.stem for p in NOTEBOOKS] + [f"ko-{p.stem}" for p in KOREAN_NOTEBOOKS]
HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.M)


def unavailable(reason):
    """Skip on a learner's machine; fail under CI, where a skip would hide a missing set-up."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (not skipped under CI)")
    pytest.skip(reason)


def handout(lesson):
    folder = CLASSROOM / "ko" if lesson.parent.name == "ko" else CLASSROOM
    return folder / "handouts" / f"{lesson.stem}.pdf"


def squeezed(text: str) -> str:
    """Text with no whitespace, no markdown marks: what survives wrapping and extraction."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\$[^$]*\$", "", text)  # maths is typeset, not extracted as TeX
    text = text.replace("`", "").replace("**", "").replace("*", "")
    return re.sub(r"\s+", "", text).replace("ﬂ", "fl").replace("ﬁ", "fi")


@functools.lru_cache(maxsize=None)
def pdf_text(lesson):
    """The PDF's number of pages and its text, read once per process."""
    from pypdf import PdfReader

    path = handout(lesson)
    if not path.is_file():
        unavailable(f"{path.relative_to(ROOT)} is missing: run `make classroom` (needs Chromium)")
    reader = PdfReader(path)
    return len(reader.pages), "\n".join(page.extract_text() for page in reader.pages)


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_handout_has_pages_and_text(lesson):
    pages, text = pdf_text(lesson)
    assert 4 <= pages <= 40, f"{pages} pages"
    assert len(squeezed(text)) > 5000, "too little extractable text"


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_handout_has_every_heading_and_code_cell(lesson):
    _, text = pdf_text(lesson)
    printed = squeezed(text)
    notebook = nbformat.read(lesson, as_version=4)
    missing = [title for cell in notebook.cells if cell.cell_type == "markdown"
               for title in HEADING.findall(cell.source) if squeezed(title) not in printed]
    assert not missing, f"headings not in the PDF: {missing}"
    first_lines = [line for cell in notebook.cells if cell.cell_type == "code"
                   for line in cell.source.splitlines()[:1] if line.strip() and not line.startswith("%")]
    lost = [line for line in first_lines if squeezed(line) not in printed]
    assert not lost, f"code lines not in the PDF: {lost}"


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_handout_holds_no_worked_solution(lesson):
    _, text = pdf_text(lesson)
    printed = squeezed(text)
    shown = squeezed("\n".join(cell.source for cell in nbformat.read(lesson, as_version=4).cells))
    leaked = [line for lines in secret_lines(lesson).values() for line in lines
              if len(line) >= 16 and squeezed(line) not in shown and squeezed(line) in printed]
    assert not leaked, leaked
