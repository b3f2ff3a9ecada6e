"""The rules that make each lesson's slides (tools/classroom/slides.py), on the lessons.

The decks themselves are presented in a browser by tests/browser/test_browser_slides.py;
here, quickly, which cell becomes what: the set-up cell is skipped, each section starts a
slide, each prediction and each exercise's worked solution waits for a click, and every
entry of the override table names a cell that exists.
"""
import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

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


KOREAN = sorted((ROOT / "notebooks" / "ko").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("korean", KOREAN, ids=[path.stem for path in KOREAN])
def test_the_korean_deck_is_cut_as_the_english_one(korean):
    """Same cells, same slides: the rules read the Korean headings, "예측" and "연습 문제"
    as they read the English ones (a Korean deck of other slides would fail here)."""
    number = korean.name[:2]
    english = nbformat.read(ROOT / "notebooks" / korean.name, as_version=4)
    assert slides.slide_types(nbformat.read(korean, as_version=4), number) == \
        slides.slide_types(english, number)
