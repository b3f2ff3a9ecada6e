"""The printable handouts as Chromium prints them (tools/classroom/handouts.py): at A4
width, no code or output line runs past the page's edge, and every picture the lesson
shows (graphs and plots) is drawn with a size. tests/test_classroom_handouts.py checks
the PDFs themselves.
"""
import sys

import nbformat

from .stored_outputs import ROOT

sys.path.insert(0, str(ROOT))
from tools.classroom.handouts import PAGE_WIDTH, handout_html  # noqa: E402

# What runs past the page's printable width, and the pictures drawn with a size.
LAYOUT = """() => {
    const main = document.querySelector('main');
    const right = main.getBoundingClientRect().right + 1;
    const wide = [...main.querySelectorAll('pre, img, svg, table, .jp-OutputArea-output')]
        .filter(e => e.getBoundingClientRect().right > right || e.scrollWidth > e.clientWidth + 1)
        .map(e => e.tagName + ': ' + (e.textContent || e.getAttribute('src') || '').slice(0, 60));
    const pictures = [...main.querySelectorAll('.jp-OutputArea-output img, .jp-OutputArea-output > svg')];
    return {wide: wide, pictures: pictures.length,
            drawn: pictures.filter(p => p.getBoundingClientRect().width > 50).length};
}"""


def pictures_in(lesson) -> int:
    notebook = nbformat.read(lesson, as_version=4)
    return sum("image/svg+xml" in output.get("data", {}) or "image/png" in output.get("data", {})
               for cell in notebook.cells for output in cell.get("outputs", []))


# `lesson`: every lesson, in both languages (conftest.py parametrizes it).
def test_printed_page_clips_nothing(lesson, tmp_path, browser):
    html_file = tmp_path / f"{lesson.stem}.html"
    html_file.write_text(handout_html(lesson), encoding="utf-8")
    page = browser.new_page(viewport={"width": PAGE_WIDTH, "height": 1123})
    try:
        page.goto(html_file.as_uri(), wait_until="load")
        page.emulate_media(media="print")
        layout = page.evaluate(LAYOUT)
    finally:
        page.close()
    assert not layout["wide"], f"runs past the page: {layout['wide'][:5]}"
    assert layout["pictures"] == layout["drawn"] == pictures_in(lesson)


def test_the_layout_check_sees_a_clipped_line(tmp_path, browser):
    """A line too long to wrap (no break allowed) is caught."""
    html_file = tmp_path / "wide.html"
    html_file.write_text("<main><pre style='white-space: pre'>" + "x" * 400 + "</pre></main>")
    page = browser.new_page(viewport={"width": PAGE_WIDTH, "height": 1123})
    try:
        page.goto(html_file.as_uri())
        assert page.evaluate(LAYOUT)["wide"]
    finally:
        page.close()
