"""One reveal.js slide deck per lesson, for presenting in class (`make classroom`).

build_slides(teacher_dir, out_dir) marks every cell of the teacher edition's notebooks
with `slideshow.slide_type` metadata, by the rules below (the same metadata that
JupyterLab's slide tools read, so the teacher notebooks present the same way there),
then converts each with nbconvert's SlidesExporter (`jupyter nbconvert --to slides`)
into out_dir/NN_name.html.

The decks work offline: reveal.js and MathJax come from npm (docs/package.json,
installed in docs/node_modules by `make`), copied next to the decks (out_dir/reveal.js,
out_dir/mathjax), and nbconvert's URL options point there. Our template
(templates/classroom_slides) drops what nbconvert's reveal template would load from a
CDN and does not need (require.js, jQuery, Mermaid) and configures MathJax 3.

The rules, in order, for each cell (a per-lesson override table, OVERRIDES, can set a
cell's type by its id):

- The set-up cell (the first code cell: imports, seed) is skipped, and so is a markdown
  cell headed "Set-up" just before it.
- A markdown cell that opens with a `#` or `##` heading starts a slide (a column of
  reveal.js's grid); with a `###` heading, or a bold "**Exercise N.**" line, a sub-slide.
- Any other markdown cell starts a sub-slide, unless it follows another markdown cell.
- A code cell that follows a markdown cell asking for a prediction ("Predict ...") is a
  fragment: its code and output appear on the next click, after the class has answered.
  So is an exercise's answer cell (the worked solution): the class tries first.
- A long code cell (source and output over LONG_CELL lines) starts a sub-slide of its own;
  any other code cell stays on the slide of the text before it.
- Graphs and plots are shown as pictures (SVG and PNG images); maths is typeset by MathJax.
"""
from __future__ import annotations

import copy
import json
import re
import shutil
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "docs" / "node_modules"
TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "classroom_slides"
LESSONS = "[0-9][0-9]_*.ipynb"

LONG_CELL = 22          # lines of source and output above which a code cell gets its own slide
WIDTH, HEIGHT = 1280, 800  # the slide's size in pixels, before reveal.js scales it to the screen

# Per-lesson exceptions to the rules: lesson number -> {cell id: slide_type}. Every id
# must exist in its lesson (tests/test_classroom_slides.py checks).
OVERRIDES: dict[str, dict[str, str]] = {
    # Prediction moments that the text asks for without the word "predict":
    "01": {"a8267fdf": "fragment"},  # "Derive the gradient by hand first": then d.backward()
    "02": {"dca117f0": "fragment"},  # "Then, as in the post, e.backward()": the error
}

# What the decks load, copied from docs/node_modules next to them.
REVEAL_PARTS = ["dist/reveal.css", "dist/reveal.js", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js", "LICENSE"]
MATHJAX_PARTS = ["tex-mml-chtml.js", "input", "output", "ui", "a11y", "sre", "adaptors"]

# Each in English and in Korean (notebooks/ko), so both editions' decks are cut alike.
PREDICT = re.compile(r"\bpredict\b|예측[해한하합]", re.IGNORECASE)  # not 예측값
HEADING = re.compile(r"^(#{1,6})\s")
EXERCISE = re.compile(r"^\*\*(Exercise|연습 문제)\s+\d+\b")
SET_UP = re.compile(r"#+\s+((The\s+)?set-up|준비)\s*$", re.IGNORECASE)


# --- which cell is which slide ----------------------------------------------------

def _lines(cell) -> int:
    """Lines the cell takes on a slide: its source, its text outputs, about 15 per picture."""
    count = len(cell.source.splitlines())
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            count += len(output.text.splitlines())
        elif output.output_type == "error":
            count += 2
        else:
            data = output.get("data", {})
            if "image/svg+xml" in data or "image/png" in data:
                count += 15
            elif "text/html" in data:
                count += data["text/html"].count("<tr")
            else:
                count += len(data.get("text/plain", "").splitlines())
    return count


def is_answer_cell(cell) -> bool:
    """An exercise's answer cell: nbgrader's solution flag, or our own classroom marks."""
    meta = cell.get("metadata", {})
    return (bool(meta.get("nbgrader", {}).get("solution"))
            or "solution" in meta.get("classroom", {})
            or bool(re.search(r"^answer = None\b", cell.source, re.M)))


def slide_types(notebook, lesson: str = "") -> list[str]:
    """The slide_type of each cell: 'slide', 'subslide', 'fragment', '-' or 'skip'."""
    cells = notebook.cells
    setup = next((i for i, cell in enumerate(cells) if cell.cell_type == "code"), None)
    types = []
    previous = None  # the last cell shown on a slide
    for index, cell in enumerate(cells):
        source = cell.source.lstrip()
        if index == setup:
            kind = "skip"
        elif (cell.cell_type == "markdown" and setup is not None and index == setup - 1
              and SET_UP.match(source.splitlines()[0] if source else "")
              and len(source.split("\n\n")) <= 2):
            kind = "skip"
        elif cell.cell_type == "markdown":
            heading = HEADING.match(source)
            if heading and len(heading[1]) <= 2:
                kind = "slide"
            elif heading or EXERCISE.match(source):
                kind = "subslide"
            elif previous is not None and previous.cell_type == "markdown":
                kind = "-"
            else:
                kind = "subslide"
        elif cell.cell_type == "code":
            asks = (previous is not None and previous.cell_type == "markdown"
                    and PREDICT.search(previous.source))
            if is_answer_cell(cell) or asks:
                kind = "fragment"
            elif _lines(cell) > LONG_CELL:
                kind = "subslide"
            else:
                kind = "-"
        else:  # raw cells are not shown
            kind = "skip"
        kind = OVERRIDES.get(lesson, {}).get(cell.get("id"), kind)
        types.append(kind)
        if kind != "skip":
            previous = cell
    return types


def mark(notebook, lesson: str = ""):
    """Set each cell's slideshow.slide_type (in place) and return the notebook."""
    for cell, kind in zip(notebook.cells, slide_types(notebook, lesson)):
        cell.metadata["slideshow"] = {"slide_type": kind}
    return notebook


# --- the files the decks load -------------------------------------------------------

def _copy(source: Path, target: Path):
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _version(package: str) -> str:
    return json.loads((NODE_MODULES / package / "package.json").read_text())["version"]


def copy_assets(out_dir: Path, mathjax: bool = True):
    """reveal.js (and MathJax, unless the decks use another copy) into out_dir."""
    for package, parts, source_dir in (("reveal.js", REVEAL_PARTS, ""),
                                       ("mathjax", MATHJAX_PARTS if mathjax else [], "es5")):
        if not parts:
            continue
        source = NODE_MODULES / package / source_dir
        if not source.is_dir():
            raise RuntimeError(f"{package} is missing from {NODE_MODULES}: run `make classroom` "
                               "or `cd docs && npm ci` (it installs docs/package.json)")
        target = out_dir / package
        stamp = target / ".version"
        if stamp.is_file() and stamp.read_text() == _version(package):
            continue
        shutil.rmtree(target, ignore_errors=True)
        for part in parts:
            _copy(source / part, target / part)
        stamp.write_text(_version(package))


# --- the decks ---------------------------------------------------------------------

def exporter(mathjax_url: str = "mathjax/tex-mml-chtml.js"):
    from nbconvert import SlidesExporter
    from traitlets.config import Config

    config = Config()
    config.SlidesExporter.extra_template_basedirs = [str(TEMPLATES)]
    config.SlidesExporter.template_name = TEMPLATE
    config.SlidesExporter.reveal_url_prefix = "reveal.js"
    config.SlidesExporter.reveal_theme = "white"
    config.SlidesExporter.reveal_width = str(WIDTH)
    config.SlidesExporter.reveal_height = str(HEIGHT)
    config.SlidesExporter.reveal_number = "c/t"
    config.SlidesExporter.mathjax_url = mathjax_url
    # Not loaded by our template; set anyway, so nothing would go to a CDN if it were.
    config.SlidesExporter.require_js_url = ""
    config.SlidesExporter.jquery_url = ""
    config.SlidesExporter.mermaid_js_url = ""
    config.SlidesExporter.font_awesome_url = ""
    return SlidesExporter(config=config)


def lesson_number(path: Path) -> str:
    return path.name[:2]


def build_slides(teacher_dir, out_dir, *, mark_notebooks: bool = True,
                 mathjax_url: str | None = None) -> list[Path]:
    """A deck per lesson of teacher_dir in out_dir (NN_name.html), and the files they load.

    mark_notebooks: also write the slideshow metadata into teacher_dir's notebooks, so
    that JupyterLab's slide tools show them as the decks do (False for notebooks/, which
    the build never changes). mathjax_url: MathJax's URL relative to the decks, when
    they use a copy of it that is already there (the site's); by default a copy is made
    in out_dir/mathjax.
    """
    teacher_dir, out_dir = Path(teacher_dir), Path(out_dir)
    lessons = sorted(teacher_dir.glob(LESSONS))
    if not lessons:
        raise FileNotFoundError(f"no lessons (NN_name.ipynb) in {teacher_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    copy_assets(out_dir, mathjax=mathjax_url is None)
    slides = exporter(mathjax_url or "mathjax/tex-mml-chtml.js")
    decks = []
    for path in lessons:
        notebook = nbformat.read(path, as_version=4)
        marked = mark(copy.deepcopy(notebook), lesson_number(path))
        if mark_notebooks and marked != notebook:
            nbformat.write(marked, path)
        body, _ = slides.from_notebook_node(marked, resources={"metadata": {"name": _title(marked, path)}})
        deck = out_dir / f"{path.stem}.html"
        deck.write_text(body, encoding="utf-8")
        decks.append(deck)
    return decks


def _title(notebook, path: Path) -> str:
    for cell in notebook.cells:
        match = re.match(r"#\s+(.+)", cell.source) if cell.cell_type == "markdown" else None
        if match:
            return match[1].replace("`", "").strip()
    return path.stem


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", type=Path, help="folder of the lessons' notebooks (the teacher edition)")
    parser.add_argument("out", type=Path, help="folder for the decks")
    parser.add_argument("--no-mark", action="store_true", help="leave the notebooks unchanged")
    args = parser.parse_args(argv)
    for deck in build_slides(args.lessons, args.out, mark_notebooks=not args.no_mark):
        print(deck)


if __name__ == "__main__":
    sys.exit(main())
