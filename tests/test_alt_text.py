"""Every picture in the lessons says what it shows (issue 20): alt text in its cell's
metadata, where the site (myst-nb), the decks and the handouts read it."""
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools import alt_text  # noqa: E402

LESSONS = (sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
           + sorted((ROOT / "notebooks" / "ko").glob("[0-9]*.ipynb")))
FILE_NAME = re.compile(r"^\S+\.(png|svg|jpe?g|gif)$", re.I)  # what Sphinx writes without alt


def _id(path: Path) -> str:
    return f"ko-{path.stem}" if path.parent.name == "ko" else path.stem


@pytest.mark.parametrize("lesson", LESSONS, ids=[_id(p) for p in LESSONS])
def test_every_picture_has_alt_text(lesson):
    notebook = nbformat.read(lesson, as_version=4)
    problems = []
    for cell in notebook.cells:
        if not alt_text.has_picture(cell):
            continue
        alt = (alt_text.cell_alt(cell) or "").strip()
        if not alt or FILE_NAME.match(alt) or alt == alt_text.GENERIC:
            problems.append(f"cell {cell.get('id')}: alt text {alt!r}")
    assert not problems, (f"{lesson.relative_to(ROOT)}: pictures without alt text (run "
                          "`python -m tools.alt_text`):\n" + "\n".join(problems))


def test_the_authored_texts_belong_to_pictures_that_exist():
    """A plot moved to another cell, or gone, leaves its text behind: say so."""
    pictures = set()
    for lesson in LESSONS:
        for cell in nbformat.read(lesson, as_version=4).cells:
            if alt_text.has_picture(cell):
                pictures.add((lesson.name[:2], cell.get("id")))
    assert set(alt_text.AUTHORED) <= pictures, set(alt_text.AUTHORED) - pictures
    for english, korean in alt_text.AUTHORED.values():
        assert english.isascii() and re.search("[\uac00-\ud7a3]", korean)


def _picture_cell(cell_id, output_alt=None, cell_alt=None):
    output = nbformat.v4.new_output("display_data", data={"image/svg+xml": "<svg/>",
                                                          "text/plain": "a graph"})
    if output_alt:
        output.metadata = {"image/svg+xml": {"alt": output_alt}}
    cell = nbformat.v4.new_code_cell("draw(y)", id=cell_id, outputs=[output])
    if cell_alt:
        cell.metadata["mystnb"] = {"image": {"alt": cell_alt}}
    return cell


def test_fill_prefers_what_the_picture_stores_then_the_table_then_the_cell(monkeypatch):
    monkeypatch.setitem(alt_text.AUTHORED, ("09", "plot"), ("A rising line.", "오르는 선."))
    notebook = nbformat.v4.new_notebook(cells=[
        _picture_cell("graph", output_alt="Autograd graph of y.", cell_alt="stale"),
        _picture_cell("plot", cell_alt="stale"),
        _picture_cell("by-hand", cell_alt="Written by the author."),
        _picture_cell("nothing"),
        nbformat.v4.new_code_cell("print(1)", id="no-picture"),
    ])
    assert alt_text.fill(notebook, "09", language=1) == ["nothing"]
    said = {cell.id: alt_text.cell_alt(cell) for cell in notebook.cells}
    assert said == {"graph": "Autograd graph of y.", "plot": "오르는 선.",
                    "by-hand": "Written by the author.", "nothing": None, "no-picture": None}


def test_the_command_names_the_cells_to_fix(tmp_path, capsys):
    path = tmp_path / "09_lesson.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[_picture_cell("nothing")]), path)
    assert alt_text.main([path]) == 1
    assert "cell nothing has a picture and no alt text" in capsys.readouterr().err
