"""The rules that make each lesson's slides (tools/classroom/slides.py), on the lessons.

The decks themselves are presented in a browser by tests/browser/test_browser_slides.py;
here, quickly, which cell becomes what: the set-up cell is skipped, each section starts a
slide, each prediction and each exercise's worked solution waits for a click, and every
entry of the override table names a cell that exists. And the deck's copy of each lesson:
every `##`/`###` heading starts a slide wherever it sat, the lesson itself unchanged; every
picture sized for text of 14 px or more, a graph too big for a slide in parts; each section's
minutes from the teacher's guide in its speaker notes.
"""
import base64
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
KOREAN = sorted((ROOT / "notebooks" / "ko").glob("[0-9][0-9]_*.ipynb"))

spec = importlib.util.spec_from_file_location("classroom_slides", ROOT / "tools" / "classroom" / "slides.py")
slides = importlib.util.module_from_spec(spec)
spec.loader.exec_module(slides)


@pytest.fixture(params=LESSONS, ids=[lesson.stem for lesson in LESSONS])
def lesson(request):
    notebook = nbformat.read(request.param, as_version=4)
    return request.param.name[:2], notebook, slides.slide_types(notebook, request.param.name[:2])


def test_overrides_name_cells_that_exist():
    for number, overrides in slides.OVERRIDES.items():
        path = next(p for p in LESSONS if p.name.startswith(number))
        ids = {cell.get("id") for cell in nbformat.read(path, as_version=4).cells}
        missing = set(overrides) - ids
        assert not missing, f"slides.OVERRIDES names cells that {path.name} does not have: {missing}"
        assert set(overrides.values()) <= {"slide", "subslide", "fragment", "-", "skip", "notes"}


def test_rules(lesson):
    number, notebook, types = lesson
    assert len(types) == len(notebook.cells)
    assert types[0] == "slide", "the title opens the deck"
    code = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    assert types[code[0]] == "skip", "the set-up cell is not presented"
    assert types.count("skip") <= 2
    for index, (cell, kind) in enumerate(zip(notebook.cells, types)):
        if cell.cell_type == "markdown" and re.match(r"#{1,2}\s", cell.source):
            assert kind in ("slide", "skip"), f"cell {index}: a section starts a slide"
        if cell.cell_type == "code" and slides.is_answer_cell(cell):
            assert kind == "fragment", f"cell {index}: the worked solution waits for a click"
        if (cell.cell_type == "code" and index and notebook.cells[index - 1].cell_type == "markdown"
                and re.search(r"\bpredict\b", notebook.cells[index - 1].source, re.I)
                and kind != "skip"):
            assert kind == "fragment", f"cell {index}: the answer to a prediction waits for a click"


def test_mark_sets_the_metadata_jupyterlab_reads(lesson):
    number, notebook, types = lesson
    marked = slides.mark(nbformat.from_dict(notebook), number)
    assert [cell.metadata["slideshow"]["slide_type"] for cell in marked.cells] == types


@pytest.mark.parametrize("korean", KOREAN, ids=[path.stem for path in KOREAN])
def test_the_korean_deck_is_cut_as_the_english_one(korean):
    """Same cells, same slides: the rules read the Korean headings, "예측" and "연습 문제"
    as they read the English ones (a Korean deck of other slides would fail here)."""
    number = korean.name[:2]
    english = nbformat.read(ROOT / "notebooks" / korean.name, as_version=4)
    assert slides.slide_types(nbformat.read(korean, as_version=4), number) == \
        slides.slide_types(english, number)


# --- the deck's copy of a lesson: headings, pictures, speaker notes -------------------

def test_a_heading_in_the_middle_of_a_cell_starts_a_slide():
    source = ("One pass runs once.\n\n## Summary\n\n- a point\n\n## Exercises\n\n"
              "### Exercise 1: which graphs survive?\n\nEach expression...")
    assert slides.split_at_headings(source) == [
        "One pass runs once.", "## Summary\n\n- a point", "## Exercises",
        "### Exercise 1: which graphs survive?\n\nEach expression..."]


def test_headings_in_code_blocks_and_deeper_headings_stay():
    source = "## 1. Title\n\nText.\n\n```python\n## not a heading\n```\n\n#### A detail\n\nMore."
    assert slides.split_at_headings(source) == [source]


def _deck(path):
    notebook = nbformat.read(path, as_version=4)
    language = "ko" if path.parent.name == "ko" else "en"
    return notebook, slides.deck_notebook(notebook, path.name[:2], language=language)


@pytest.mark.parametrize("path", LESSONS + KOREAN, ids=[f"{p.parent.name}-{p.stem}" for p in LESSONS + KOREAN])
def test_every_heading_starts_a_slide_and_the_lesson_is_unchanged(path):
    notebook, deck = _deck(path)
    assert nbformat.read(path, as_version=4) == notebook, "the lesson itself is not changed"
    for cell in deck.cells:
        kind = cell.metadata["slideshow"]["slide_type"]
        if cell.cell_type != "markdown" or kind in ("skip", "notes"):
            continue
        headings = re.findall(r"^(#{2,3})\s", cell.source, re.M)
        assert all(cell.source.startswith(h) for h in headings[:1]) and len(headings) <= 1, \
            f"a heading in the middle of a deck cell: {cell.source[:80]!r}"
        if headings:
            assert kind == ("slide" if headings[0] == "##" else "subslide"), cell.source[:60]
    shown = [c.source for c in deck.cells if c.cell_type == "markdown"
             and c.metadata["slideshow"]["slide_type"] != "notes"]
    assert "".join("".join(shown).split()) == "".join(
        "".join(c.source for c in notebook.cells if c.cell_type == "markdown").split()), \
        "the deck shows all of the lesson's text, in order"


@pytest.mark.parametrize("path", LESSONS + KOREAN, ids=[f"{p.parent.name}-{p.stem}" for p in LESSONS + KOREAN])
def test_pictures_are_sized_for_14_px_text_and_fit_a_slide(path):
    _, deck = _deck(path)
    for cell in deck.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            for svg in [data.get("image/svg+xml")] + slides.INLINE_SVG.findall(data.get("text/html", "")):
                if not svg or not slides.svg_text_units(svg):
                    continue
                root = slides.SVG_ROOT.search(svg)[0]
                width = slides._pixels(slides._attribute(root, "width"))
                height = slides._pixels(slides._attribute(root, "height"))
                box = slides.svg_view_box(svg)
                assert slides.svg_text_units(svg) * width / box[2] >= slides.MIN_TEXT_PX - 0.5
                if "image/svg+xml" in data:
                    assert width <= slides.PICTURE_ROOM[0] and height <= slides.PICTURE_ROOM[1]
            if "image/png" in data:
                png = base64.b64decode(data["image/png"])
                shown = output.metadata["image/png"]["width"]
                assert slides.png_text_px(png) * shown / slides.png_size(png)[0] >= slides.MIN_TEXT_PX


def test_a_graph_too_big_for_one_slide_comes_in_parts():
    svg = ('<svg width="1004pt" height="536pt" viewBox="0.00 0.00 1004.00 535.55">'
           '<g class="graph" transform="scale(0.82 0.82) rotate(0)"><text font-size="10.00">x</text></g></svg>')
    parts = slides.readable_svg(svg)
    assert len(parts) == 4  # 1004 × 14/8.2 px is wider than a slide, and 536 × 14/8.2 taller
    boxes = [slides.svg_view_box(part) for part in parts]
    assert boxes[0][:2] == (0, 0) and boxes[-1][0] > 0 and boxes[-1][1] > 0
    assert all(14 <= 8.2 * float(re.search(r'width="([\d.]+)px"', p)[1]) / b[2] + 0.01 for p, b in zip(parts, boxes))


@pytest.mark.parametrize("path", LESSONS + KOREAN, ids=[f"{p.parent.name}-{p.stem}" for p in LESSONS + KOREAN])
def test_each_section_carries_the_guides_minutes_as_speaker_notes(path):
    guide = ROOT / "docs" / ("guide.ko.md" if path.parent.name == "ko" else "guide.md")
    text = guide.read_text(encoding="utf-8")
    number = path.name[:2]
    plan = slides.lesson_plan(text, number)
    notebook = nbformat.read(path, as_version=4)
    deck = slides.deck_notebook(notebook, number, text, "ko" if path.parent.name == "ko" else "en")
    sections = [i for i, cell in enumerate(deck.cells) if cell.cell_type == "markdown"
                and slides.SECTION.match(cell.source)]
    assert sections, "the lesson numbers its sections"
    for index in sections:
        section = slides.SECTION.match(deck.cells[index].source)[1]
        notes = deck.cells[index + 1]
        rows = [line for line in plan.get(f"§{section}", []) if " min** · " in line]
        if not rows:
            continue  # the guide plans no minutes for this section
        assert notes.metadata["slideshow"]["slide_type"] == "notes", f"§{section} has no notes"
        for row in rows:
            assert row in notes.source
    noted = "\n".join(c.source for c in deck.cells if c.metadata["slideshow"]["slide_type"] == "notes")
    for minutes in re.findall(r"^\|\s*(\d+[–-]\d+)\s*\|\s*§", slides._lesson_text(text, number), re.M):
        assert f"**{minutes} min**" in noted, f"the guide's row {minutes} is in no slide's notes"
