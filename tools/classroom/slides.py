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

The deck is made from a copy of each lesson (deck_notebook; the lesson is never changed):

- A markdown cell with a `##` or `###` heading in its middle is cut there, so that every
  heading starts a slide (`##`) or a sub-slide (`###`), wherever it sits.
- Every picture is given the size at which its smallest text shows at MIN_TEXT_PX or more
  on the 1280×720 slide (readable_svg, png_text_px); a graph too big for one slide at that
  size is shown in parts, each an SVG with its own viewBox, captioned "part 1 of 2".
- The guide's plan for the lesson (docs/guide.md, or guide.ko.md) becomes speaker notes
  (lesson_plan, add_speaker_notes): on each section's first slide its minutes and part,
  and the misconceptions and discussion prompts that cite it; on the Exercises slide the
  exercises' minutes; on the Summary slide the prompts that cite no section. Press `s`.
- What still does not fit a slide (long text, code and output) is moved to the next
  sub-slide by the deck itself, in the browser, where it is measured (paginate.js).
"""
from __future__ import annotations

import base64
import copy
import json
import math
import re
import shutil
import struct
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "docs" / "node_modules"
TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "classroom_slides"
LESSONS = "[0-9][0-9]_*.ipynb"

LONG_CELL = 22          # lines of source and output above which a code cell gets its own slide
WIDTH, HEIGHT = 1280, 720  # the slide's size in pixels, before reveal.js scales it to the screen

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
PREDICT = re.compile(r"\bpredict\b|예측(?::|해 보|하기|하고)", re.IGNORECASE)  # "**예측:**"; not 예측값, 예측합니다
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


# --- the deck's copy of a lesson -----------------------------------------------------

MIN_TEXT_PX = 14          # the smallest text a picture may show, on the 1280×720 slide
PICTURE_ROOM = (1180, 600)  # the most a picture may take on a sub-slide of its own, in px
SUBHEADING = re.compile(r"^#{2,3}\s")
SVG_ROOT = re.compile(r"<svg\b[^>]*>", re.I)
INLINE_SVG = re.compile(r"<svg\b.*?</svg>", re.I | re.S)
PART_CAPTION = {"en": "(part {n} of {total})", "ko": "(전체 {total}쪽 중 {n}쪽)"}


def split_at_headings(source: str) -> list[str]:
    """A markdown cell's text, cut before each `##`/`###` heading that is not its first line
    (outside code blocks), so that the heading starts a slide of its own."""
    parts, current, fenced = [], [], False
    for line in source.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and SUBHEADING.match(line) and "".join(current).strip():
            parts.append("".join(current).rstrip("\n"))
            current = []
        current.append(line)
    parts.append("".join(current).rstrip("\n"))
    return [part for part in parts if part.strip()] or [source]


def _attribute(tag: str, name: str) -> str | None:
    found = re.search(rf'(?<![\w-]){name}="([^"]*)"', tag, re.I)  # not stroke-width
    return found[1] if found else None


def _with_attribute(tag: str, name: str, value: str) -> str:
    if _attribute(tag, name) is not None:
        return re.sub(rf'(?<![\w-]){name}="[^"]*"', f'{name}="{value}"', tag, count=1, flags=re.I)
    return tag[:-1].rstrip("/") + f' {name}="{value}"' + tag[-1]


def _pixels(length: str | None) -> float | None:
    """An SVG length in CSS pixels ("461pt", "340", "340px")."""
    found = re.fullmatch(r"\s*([\d.]+)\s*(pt|px)?\s*", length or "")
    if not found:
        return None
    return float(found[1]) * (4 / 3 if found[2] == "pt" else 1)


def svg_text_units(svg: str) -> float | None:
    """The SVG's smallest text, in its own units (its viewBox's): the smallest font-size,
    times the scale of the group graphviz draws in (it shrinks a graph that way)."""
    sizes = [float(size) for size in re.findall(r'font-size(?:="|:\s*)([\d.]+)', svg)]
    if not sizes:
        return None
    scale = re.search(r'<g\b[^>]*transform="scale\(([\d.]+)', svg)
    return min(sizes) * (float(scale[1]) if scale else 1.0)


def svg_view_box(svg: str) -> tuple[float, float, float, float] | None:
    root = SVG_ROOT.search(svg)
    box = _attribute(root[0], "viewBox") if root else None
    return tuple(float(v) for v in box.replace(",", " ").split()) if box else None


def readable_svg(svg: str, room=PICTURE_ROOM, parts_allowed: bool = True) -> list[str]:
    """The SVG at the size at which its smallest text shows at MIN_TEXT_PX (or at the size it
    was drawn, if larger): in parts (each its own viewBox, top to bottom, left to right) when
    that is larger than `room`."""
    root, box, units = SVG_ROOT.search(svg), svg_view_box(svg), svg_text_units(svg)
    if not root or not box or not units:
        return [svg]
    left, top, width, height = box
    drawn = _pixels(_attribute(root[0], "width"))
    per_unit = max(MIN_TEXT_PX / units, drawn / width if drawn else 0)
    columns = math.ceil(width * per_unit / room[0]) if parts_allowed else 1
    rows = math.ceil(height * per_unit / room[1]) if parts_allowed else 1
    parts = []
    for row in range(rows):
        for column in range(columns):
            view = (left + column * width / columns, top + row * height / rows,
                    width / columns, height / rows)
            tag = _with_attribute(root[0], "viewBox", " ".join(f"{v:.2f}" for v in view))
            tag = _with_attribute(tag, "width", f"{view[2] * per_unit:.0f}px")
            tag = _with_attribute(tag, "height", f"{view[3] * per_unit:.0f}px")
            parts.append(svg[:root.start()] + tag + svg[root.end():])
    return parts


def png_size(png: bytes) -> tuple[int, int]:
    return struct.unpack(">II", png[16:24])


def png_text_px(png: bytes) -> float:
    """The PNG's smallest text, in pixels at its natural size: its dots per inch times the
    smallest font size, in points, of the program that drew it.

    Dots per inch: the PNG's pHYs chunk (matplotlib writes it); graphviz writes none and
    draws at 96. Points: a PNG that says it comes from matplotlib (its Software text) has
    text no smaller than matplotlib's smallest default size (tick labels, legend, axis
    labels, from its rcParams); any other is a torchviz graph, whose labels are 10 pt.
    Text that a plot sets smaller by hand is not seen here.
    """
    at = png.find(b"pHYs")
    dpi = struct.unpack(">I", png[at + 4:at + 8])[0] * 0.0254 if at > 0 and png[at + 12] == 1 else 96
    return _smallest_plot_points(png) * dpi / 72


def _smallest_plot_points(png: bytes) -> float:
    if b"Software\x00Matplotlib" not in png[:2000]:
        return 10.0  # torchviz.make_dot's node_attr fontsize
    import matplotlib
    from matplotlib.font_manager import FontProperties

    keys = ["xtick.labelsize", "ytick.labelsize", "legend.fontsize", "axes.labelsize", "axes.titlesize"]
    return min(FontProperties(size=matplotlib.rcParams[key]).get_size_in_points() for key in keys)


def _readable_outputs(cell, language: str):
    """The cell's pictures at readable sizes: PNGs a width, SVGs a size or parts, and the
    SVGs inside HTML outputs (a replay) a size."""
    outputs = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "image/svg+xml" in data:
            parts = readable_svg(data["image/svg+xml"])
            for n, part in enumerate(parts, 1):
                outputs.append(nbformat.v4.new_output(output.output_type, data={"image/svg+xml": part}))
                if len(parts) > 1:
                    caption = PART_CAPTION[language].format(n=n, total=len(parts))
                    outputs.append(nbformat.v4.new_output(
                        "display_data", data={"text/html": f'<p class="deck-part-caption">{caption}</p>'}))
            continue
        if "image/png" in data:
            png = base64.b64decode(data["image/png"])
            width = png_size(png)[0] * max(1.0, MIN_TEXT_PX / png_text_px(png))
            output.setdefault("metadata", {})["image/png"] = {"width": math.ceil(width)}
        elif "text/html" in data:
            data["text/html"] = INLINE_SVG.sub(
                lambda svg: readable_svg(svg[0], parts_allowed=False)[0], data["text/html"])
        outputs.append(output)
    if "outputs" in cell:
        cell.outputs = outputs


def deck_notebook(notebook, lesson: str = "", guide: str | None = None, language: str = "en"):
    """The copy of a lesson that its deck is made from (the lesson is not changed): headings
    cut out of the middle of cells, pictures at readable sizes, slideshow metadata set, and
    the guide's plan (the guide's text, if given) as speaker notes."""
    deck = copy.deepcopy(notebook)
    cells = []
    for cell in deck.cells:
        if cell.cell_type != "markdown":
            _readable_outputs(cell, language)
            cells.append(cell)
            continue
        for n, part in enumerate(split_at_headings(cell.source)):
            piece = copy.deepcopy(cell)
            piece.source = part
            if n:
                piece["id"] = f"{cell.get('id', 'cell')}-{n}"
            cells.append(piece)
    deck.cells = cells
    mark(deck, lesson)
    if guide:
        add_speaker_notes(deck, lesson_plan(guide, lesson))
    return deck


# --- speaker notes, from the teacher's guide ----------------------------------------

GUIDE_LESSON = re.compile(r"^## (?:Lesson (\d\d)|(\d\d)강)\b.*$", re.M)
SECTION = re.compile(r"^##\s+(\d+)\.\s")                     # "## 2. What freed means"
EXERCISES = re.compile(r"^##\s+(Exercises|연습 문제)\s*$", re.M)
SUMMARY = re.compile(r"^##\s+(Summary|요약)\s*$", re.M)
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _lesson_text(guide: str, lesson: str) -> str:
    starts = [(m.start(), m[1] or m[2]) for m in GUIDE_LESSON.finditer(guide)]
    for (start, number), (end, _) in zip(starts, starts[1:] + [(len(guide), "")]):
        if number == lesson:
            return guide[start:end]
    return ""


def _list_after(text: str, label: str, item: str) -> list[str]:
    """The items of the list that follows the bold label ("**Misconceptions**")."""
    found = re.search(rf"^\*\*(?:{label})\*\*\s*\n\n?((?:(?:{item}).*\n(?:[ \t]+\S.*\n)*)+)", text, re.M)
    if not found:
        return []
    items = re.split(rf"^(?:{item})", found[1], flags=re.M)
    return [" ".join(LINK.sub(r"\1", piece).split()) for piece in items if piece.strip()]


def lesson_plan(guide: str, lesson: str) -> dict[str, list[str]]:
    """The guide's notes for a lesson, by where they go: "§N" (a section), "exercises",
    "summary" -> the lines of markdown for that slide's notes."""
    text = _lesson_text(guide, lesson)
    plan: dict[str, list[str]] = {}
    for minutes, part in re.findall(r"^\|\s*(\d+[–-]\d+)\s*\|\s*(.+?)\s*\|\s*$", text, re.M):
        section = re.match(r"§(\d+)", part)
        where = f"§{section[1]}" if section else "exercises" if re.match(r"(Exercises|연습 문제)", part) else None
        if where:
            plan.setdefault(where, []).append(f"**{minutes} min** · {part}")
    korean = "강" in text[:40]
    for label, item, title in ((r"Misconceptions|오개념", r"\d+\.\s", "오개념" if korean else "Misconception"),
                               (r"Discussion|토론", r"-\s", "토론" if korean else "Discuss")):
        for entry in _list_after(text, label, item):
            cited = re.search(r"§(\d+)", entry)
            plan.setdefault(f"§{cited[1]}" if cited else "summary", []).append(f"**{title}:** {entry}")
    return plan


def add_speaker_notes(deck, plan: dict[str, list[str]]):
    """After each section's first cell, a notes cell (reveal.js speaker notes) with its plan."""
    cells = []
    for cell in deck.cells:
        cells.append(cell)
        if cell.cell_type != "markdown":
            continue
        section = SECTION.match(cell.source)
        where = (f"§{section[1]}" if section else "exercises" if EXERCISES.match(cell.source)
                 else "summary" if SUMMARY.match(cell.source) else None)
        if where in plan:
            notes = nbformat.v4.new_markdown_cell("\n\n".join(plan.pop(where)))
            notes.metadata["slideshow"] = {"slide_type": "notes"}
            cells.append(notes)
    deck.cells = cells


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
    config.SlidesExporter.extra_template_paths = [str(TEMPLATES / "shared")]  # mathjax3, alt_text
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
    in out_dir/mathjax. The speaker notes come from the teacher's guide in the lessons'
    language (docs/guide.ko.md for notebooks/ko or build/classroom/ko/teacher, else docs/guide.md).
    """
    teacher_dir, out_dir = Path(teacher_dir), Path(out_dir)
    lessons = sorted(teacher_dir.glob(LESSONS))
    if not lessons:
        raise FileNotFoundError(f"no lessons (NN_name.ipynb) in {teacher_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    copy_assets(out_dir, mathjax=mathjax_url is None)
    slides = exporter(mathjax_url or "mathjax/tex-mml-chtml.js")
    language = "ko" if "ko" in (teacher_dir.name, teacher_dir.parent.name) else "en"
    guide = ROOT / "docs" / ("guide.ko.md" if language == "ko" else "guide.md")
    guide_text = guide.read_text(encoding="utf-8") if guide.is_file() else None
    decks = []
    for path in lessons:
        notebook = nbformat.read(path, as_version=4)
        marked = mark(copy.deepcopy(notebook), lesson_number(path))
        if mark_notebooks and marked != notebook:
            nbformat.write(marked, path)
        deck_copy = deck_notebook(notebook, lesson_number(path), guide_text, language)
        body, _ = slides.from_notebook_node(deck_copy, resources={"metadata": {"name": _title(marked, path)}})
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
