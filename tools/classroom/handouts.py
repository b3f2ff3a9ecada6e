"""A printable handout per lesson (`make classroom`): out_dir/NN_name.pdf.

A handout is the student edition on paper: the lesson's text and code, exercises
unanswered, with the outputs the lesson stores (a clean "Restart & Run All"), so its
graphs and plots are printed too. The worked solutions, which the lesson keeps in its
answer cells' metadata, are dropped first.

Each lesson goes through nbconvert's HTML exporter with our template
(templates/classroom_handout: no script from elsewhere, MathJax 3 from docs/node_modules,
a print style sheet that wraps long lines and fits pictures to an A4 page), then Chromium
prints it, through Playwright, once MathJax has typeset the page.
tests/test_classroom_handouts.py checks the PDFs: pages, text, headings, no clipped code.
"""
from __future__ import annotations

import copy
import os
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
MATHJAX = ROOT / "docs" / "node_modules" / "mathjax" / "es5" / "tex-mml-chtml.js"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE_WIDTH = 794  # an A4 page at 96 px per inch, in CSS pixels (210 mm)


def without_solutions(notebook):
    """A copy of the notebook with no worked solution in any cell's metadata."""
    notebook = copy.deepcopy(notebook)
    for cell in notebook.cells:
        cell.metadata.pop("classroom", None)
        cell.metadata.pop("nbgrader", None)
    return notebook


def handout_html(lesson: Path) -> str:
    """The lesson as one HTML page for print (pictures inline, MathJax from a local copy)."""
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    config.HTMLExporter.extra_template_paths = [str(TEMPLATES / "shared")]
    config.HTMLExporter.template_name = "classroom_handout"
    config.HTMLExporter.mathjax_url = MATHJAX.as_uri()
    notebook = without_solutions(nbformat.read(lesson, as_version=4))
    language = "ko" if lesson.parent.name == "ko" else "en"
    body, _ = HTMLExporter(config=config).from_notebook_node(
        notebook, resources={"metadata": {"name": lesson.stem}, "language_code": language})
    return body


def print_pdf(page, html_file: Path, pdf: Path):
    """Print a page to PDF once its maths is typeset and its pictures are loaded."""
    page.goto(html_file.as_uri(), wait_until="load")
    page.wait_for_function("() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)")
    page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
    page.emulate_media(media="print")
    page.pdf(path=str(pdf), format="A4", print_background=True, prefer_css_page_size=True)


def build_handouts(lessons, out_dir) -> list[Path]:
    """out_dir/NN_name.pdf for each lesson; needs Chromium (CHROMIUM) and MathJax from npm."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        raise FileNotFoundError(f"no Chromium at {CHROMIUM}: install Debian's chromium "
                                "(make test does) or set CHROMIUM")
    if not MATHJAX.is_file():
        raise FileNotFoundError(f"no MathJax at {MATHJAX.relative_to(ROOT)}: run `cd docs && npm ci`")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as scratch:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": PAGE_WIDTH, "height": 1123})
        for lesson in lessons:
            html_file = Path(scratch) / f"{lesson.stem}.html"
            html_file.write_text(handout_html(lesson), encoding="utf-8")
            pdf = out_dir / f"{lesson.stem}.pdf"
            print_pdf(page, html_file, pdf)
            written.append(pdf)
        browser.close()
    return written


if __name__ == "__main__":
    from .exercises import lesson_paths

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "classroom" / "handouts"
    for path in build_handouts(lesson_paths(), target):
        print(path)
