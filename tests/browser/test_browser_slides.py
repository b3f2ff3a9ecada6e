"""The lessons' slide decks, presented in a real browser, as a teacher clicks through them.

Two sets of decks, made by tools/classroom/slides.py: the teacher's, from the teacher
edition (build/classroom/slides, `make classroom`), and the site's, from the lessons as
stored (build/site/html/slides, `make site`); and both again for the Korean edition
(build/classroom/ko/slides, build/site/html/ko/slides). Each deck opens, goes from its first slide
to its last, every fragment shown; every picture (graph, plot) that the lesson shows on a
slide loads and is seen with a size, and so is every formula, typeset by MathJax; nothing
fails to load, no script fails, and no request leaves the machine (any that tries is
blocked and reported). Screenshots of lesson 01's graph and maths go to
test-artifacts/screenshots/.
"""
import importlib.util
import re
from urllib.parse import urlsplit

import nbformat
import pytest

from .conftest import CLASSROOM, SITE
from .stored_outputs import KOREAN_LESSONS, LESSONS, ROOT

spec = importlib.util.spec_from_file_location("classroom_slides", ROOT / "tools" / "classroom" / "slides.py")
slides = importlib.util.module_from_spec(spec)
spec.loader.exec_module(slides)

SOURCES = {"classroom": (CLASSROOM / "slides", CLASSROOM / "teacher"),
           "site": (SITE / "slides", ROOT / "notebooks"),
           # the Korean edition's decks, the same way
           "classroom-ko": (CLASSROOM / "ko" / "slides", CLASSROOM / "ko" / "teacher"),
           "site-ko": (SITE / "ko" / "slides", ROOT / "notebooks" / "ko")}
DECKS = [(source, lesson.stem) for source in SOURCES
         for lesson in (KOREAN_LESSONS if source.endswith("-ko") else LESSONS)]
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)

# Give every picture and formula a number, then report those of the current slide that
# are visible (not in a fragment still to come) and shown with a size.
NUMBER = """() => {
    const items = [...document.querySelectorAll('.reveal .slides img, .reveal .slides mjx-container')];
    items.forEach((item, i) => item.dataset.checkId = i);
    return {
        pictures: document.querySelectorAll('.reveal .slides img').length,
        formulas: document.querySelectorAll('.reveal .slides mjx-container').length,
        errors: document.querySelectorAll('mjx-merror').length,
    };
}"""
CURRENT = """() => {
    const slide = Reveal.getCurrentSlide();
    const shown = item => !item.closest('.fragment:not(.visible)');
    const sized = item => { const r = item.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
    const seen = [...slide.querySelectorAll('img, mjx-container')]
        .filter(item => shown(item) && sized(item)
                && (item.tagName !== 'IMG' || (item.complete && item.naturalWidth > 0)))
        .map(item => Number(item.dataset.checkId));
    const at = Reveal.getIndices();
    return {h: at.h, v: at.v || 0, seen: seen,
            graph: !!slide.querySelector('img[src^="data:image/svg"]'),
            maths: !!slide.querySelector('mjx-container'),
            last: Reveal.isLastSlide() && !Reveal.availableFragments().next};
}"""
SETTLED = """() => [...Reveal.getCurrentSlide().querySelectorAll('img')].every(image => image.complete)"""


def expected(notebook_path):
    """Pictures and formulas of the cells that the deck shows (not skipped)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    pictures = formulas = 0
    for cell, kind in zip(notebook.cells, slides.slide_types(notebook, notebook_path.name[:2])):
        if kind == "skip":
            continue
        if cell.cell_type == "markdown":
            text = re.sub(r"```.*?```|`[^`\n]*`", "", cell.source, flags=re.S)
            formulas += len(MATH.findall(text))
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            pictures += "image/svg+xml" in data or "image/png" in data
    return pictures, formulas


@pytest.mark.parametrize("source, stem", DECKS, ids=[f"{source}-{stem}" for source, stem in DECKS])
def test_deck_presents_offline(source, stem, request, page, screenshots):
    server = request.getfixturevalue("classroom" if source == "classroom" else "site")
    folder, notebooks = SOURCES[source]
    assert (folder / f"{stem}.html").is_file(), f"no deck {stem}.html in {folder.relative_to(ROOT)}"
    base = server.url + "/slides"  # both servers serve a folder that holds slides/
    problems, start = [], len(server.requests)

    def route(route):
        url = route.request.url
        if url.startswith(server.url + "/") or urlsplit(url).scheme in ("data", "blob", "about"):
            route.continue_()
        else:
            problems.append(f"request leaves the machine (blocked): {url}")
            route.abort()

    page.route("**/*", route)
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.goto(f"{base}/{stem}.html", wait_until="load")
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise")
    counts = page.evaluate(NUMBER)

    seen, visited, shot = set(), set(), set()
    for _ in range(2000):
        page.wait_for_function(SETTLED)
        state = page.evaluate(CURRENT)
        seen.update(state["seen"])
        visited.add((state["h"], state["v"]))
        if stem == LESSONS[0].stem:
            for kind in ("graph", "maths"):
                if state[kind] and kind not in shot:
                    shot.add(kind)
                    page.screenshot(path=screenshots / f"slides-{source}-{stem}-{kind}.png")
        if state["last"]:
            break
        page.evaluate("() => Reveal.next()")
    else:
        problems.append("did not reach the last slide in 2000 steps")

    total = page.evaluate("() => Reveal.getTotalSlides()")
    if len(visited) != total:
        problems.append(f"{len(visited)} of {total} slides shown")
    pictures, formulas = expected(notebooks / f"{stem}.ipynb")
    if counts["pictures"] != pictures:
        problems.append(f"{counts['pictures']} pictures in the deck, the lesson shows {pictures}")
    if counts["formulas"] != formulas:
        problems.append(f"{counts['formulas']} typeset formulas, the lesson has {formulas}")
    if counts["errors"]:
        problems.append(f"{counts['errors']} formulas that MathJax could not typeset")
    unseen = set(range(counts["pictures"] + counts["formulas"])) - seen
    if unseen:
        problems.append(f"{len(unseen)} pictures or formulas never shown with a size on their slide")
    problems += [f"server answered {status}: {path}" for path, status in server.failed_since(start)]
    assert not problems, f"{source} deck {stem}:\n" + "\n".join(problems)
