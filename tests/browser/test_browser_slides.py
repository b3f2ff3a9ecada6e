"""The lessons' slide decks, presented in a real browser, as a teacher clicks through them.

Two sets of decks, made by tools/classroom/slides.py: the teacher's, from the teacher
edition (build/classroom/slides, `make classroom`), and the site's, from the lessons as
stored (build/site/html/slides, `make site`); and both again for the Korean edition
(build/classroom/ko/slides, build/site/html/ko/slides). Each deck opens, goes from its first slide
to its last, every fragment shown; every picture (graph, plot) that the lesson shows on a
slide loads and is seen with a size, and so is every formula, typeset by MathJax; nothing
fails to load, no script fails, and no request leaves the machine (any that tries is
blocked and reported). Screenshots of lesson 01's graph and maths go to
test-artifacts/screenshots/, and so do the sub-slides that the old decks clipped (issue 20).

Every sub-slide fits the 1280×720 slide, at every step (every fragment shown so far): no
element of it ends past the slide's bottom or right edge, in reveal.js's own, un-scaled
coordinates (the page's size divided by Reveal.getScale()), and none hides part of its
content behind a scroll bar. No text on it is smaller than 14 px on that slide:

- text: the computed font size of every visible text node's element (inside an inline SVG,
  times the SVG's scale on the slide);
- SVG pictures (graphviz): the SVG's smallest font-size, times the scale of graphviz's
  group, times the width the picture is shown at over the width of its viewBox (the SVG
  is read from the picture's own data: slides.svg_text_units);
- PNG pictures: the PNG's dots per inch (its pHYs chunk; 96 for graphviz, which writes
  none) times the smallest default font size of matplotlib (its rcParams: tick labels,
  legend, axis labels; a PNG that matplotlib did not make is a torchviz graph, 10 pt), times
  the width it is shown at over its natural width (slides.png_text_px). Text that a plot
  sets smaller by hand (autograd_lens.memory_plot's 8-pt phase names) is not seen.

The speaker notes: every lesson section's first slide carries notes with its minutes from
the teacher's guide, and the speaker view (`s`) opens with them and with no network.
"""
import base64
import importlib.util
import re
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from .conftest import CLASSROOM, SCREENSHOTS, SITE
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
# What on the current slide runs past the slide, hides content, or has text below 14 px.
FIT = """(minimum) => {
    const width = Reveal.getConfig().width, height = Reveal.getConfig().height, scale = Reveal.getScale();
    const slide = Reveal.getCurrentSlide(), box = document.querySelector('.reveal .slides').getBoundingClientRect();
    const shown = item => !item.closest('.fragment:not(.visible), aside.notes');
    const name = item => `${item.tagName.toLowerCase()} "${(item.textContent || '').trim().slice(0, 50)}"`;
    const problems = [], reported = [];  // the outermost element at fault, not all inside it
    for (const item of slide.querySelectorAll('*')) {
        if (!shown(item) || item.closest('mjx-container') || item.closest('svg') && item.tagName !== 'svg'
            || reported.some(outer => outer.contains(item))) continue;
        const r = item.getBoundingClientRect();
        if (!r.width || !r.height) continue;
        const right = (r.right - box.left) / scale, bottom = (r.bottom - box.top) / scale;
        if (right > width + 1 || bottom > height + 1)
            { problems.push(`${name(item)} ends at ${Math.round(right)}×${Math.round(bottom)}, past the ${width}×${height} slide`);
              reported.push(item); }
        const style = getComputedStyle(item);
        if (/auto|scroll|hidden/.test(style.overflowX + style.overflowY)
            && (item.scrollHeight > item.clientHeight + 1 || item.scrollWidth > item.clientWidth + 1))
            { problems.push(`${name(item)} hides ${item.scrollWidth - item.clientWidth}×${item.scrollHeight - item.clientHeight} px of its content`);
              reported.push(item); }
    }
    const walker = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const item = node.parentElement;
        if (!node.textContent.trim() || !shown(item) || item.closest('mjx-container')) continue;
        const r = item.getBoundingClientRect();
        if (!r.width || !r.height) continue;
        let size = parseFloat(getComputedStyle(item).fontSize);
        if (item.closest('svg')) { const m = item.getScreenCTM(); size *= Math.hypot(m.a, m.b) / scale; }
        if (size < minimum - 0.05) problems.push(`text ${name(item)} at ${size.toFixed(1)} px`);
    }
    return problems;
}"""
# The pictures of the current slide that are shown, with what the text measure needs.
PICTURES = """(known) => [...Reveal.getCurrentSlide().querySelectorAll('img')]
    .filter(image => !image.closest('.fragment:not(.visible)') && image.complete && image.naturalWidth
                     && !known.includes(image.dataset.checkId))
    .map(image => ({id: image.dataset.checkId, src: image.src, naturalWidth: image.naturalWidth,
                    shownWidth: image.getBoundingClientRect().width / Reveal.getScale()}))"""
# Each section's slide (its heading "N. ...") -> the text of its speaker notes.
SECTION_NOTES = """() => Object.fromEntries([...document.querySelectorAll('.reveal .slides section')]
    .filter(section => !section.querySelector('section'))
    .flatMap(section => {
        const heading = section.querySelector('h2'), number = heading && heading.textContent.match(/^\\s*(\\d+)\\./);
        return number ? [[number[1], [...section.querySelectorAll('aside.notes')].map(n => n.textContent).join(' ')]] : [];
    }))"""
SETTLED = """() => [...Reveal.getCurrentSlide().querySelectorAll('img')].every(image => image.complete)"""


# The sub-slides that the old decks clipped (issue 20: 02 4/4 and 4/5, 04 2/1 and 3/0 with
# Figure 2, 05 3/0 and 7/2), found in the new decks by their text (and Figure 2, in parts,
# by its captions); a screenshot of each, every fragment shown.
WAS_CLIPPED = {"02_retain_graph": ["Exercise 3: "],
               "04_multi_task_losses": ["All 8:", "Without retain_graph, head 2", "(part "],
               "05_memory_cost_of_retained_graphs": ["Bytes against depth", "Depth and width, plotted"]}
SHOWS_TEXT = "(texts) => texts.some(text => Reveal.getCurrentSlide().textContent.includes(text))"


def stay_offline(target, server, report):
    """Let `target` (a page, or a context: all its windows) load only from `server` and data;
    block and report any other request."""
    def route(route):
        url = route.request.url
        if url.startswith(server.url + "/") or urlsplit(url).scheme in ("data", "blob", "about"):
            route.continue_()
        else:
            report(url)
            route.abort()

    target.route("**/*", route)


def picture_text_px(picture) -> float:
    """The smallest text of a picture as shown, in px of the 1280×720 slide."""
    header, data = picture["src"].split(",", 1)
    content = base64.b64decode(data) if header.endswith(";base64") else unquote(data).encode()
    if header.startswith("data:image/svg"):
        svg = content.decode("utf-8")
        units, box = slides.svg_text_units(svg), slides.svg_view_box(svg)
        return units * picture["shownWidth"] / box[2] if units and box else float("inf")
    return slides.png_text_px(content) * picture["shownWidth"] / picture["naturalWidth"]


def expected(notebook_path):
    """Pictures and formulas of the cells that the deck shows (not skipped), from the deck's
    copy of the lesson (a graph shown in parts counts once per part)."""
    notebook = nbformat.read(notebook_path, as_version=4)
    language = "ko" if "ko" in notebook_path.parts else "en"
    deck = slides.deck_notebook(notebook, notebook_path.name[:2], language=language)
    pictures = formulas = 0
    for cell in deck.cells:
        if cell.metadata["slideshow"]["slide_type"] == "skip":
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

    stay_offline(page, server, lambda url: problems.append(f"request leaves the machine (blocked): {url}"))
    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.goto(f"{base}/{stem}.html", wait_until="load")
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    page.evaluate("() => Reveal.configure({transition: 'none'})")
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise")
    counts = page.evaluate(NUMBER)

    seen, visited, shot, measured, clipped_before = set(), set(), set(), [], set()
    for _ in range(2000):
        page.wait_for_function(SETTLED)
        state = page.evaluate(CURRENT)
        seen.update(state["seen"])
        visited.add((state["h"], state["v"]))
        at = f"{state['h']}/{state['v']}"
        problems += [f"slide {at}: {problem}" for problem in page.evaluate(FIT, slides.MIN_TEXT_PX)]
        for picture in page.evaluate(PICTURES, measured):
            measured.append(picture["id"])
            size = picture_text_px(picture)
            if size < slides.MIN_TEXT_PX - 0.05:
                problems.append(f"slide {at}: a picture's smallest text shows at {size:.1f} px")
        # the sub-slide with the text, and the one after it (where what did not fit went)
        here = (state["h"], state["v"])
        if stem in WAS_CLIPPED and source in ("site", "classroom"):
            if page.evaluate(SHOWS_TEXT, WAS_CLIPPED[stem]):
                clipped_before.add(here)
            if here in clipped_before or (here[0], here[1] - 1) in clipped_before:
                page.screenshot(path=screenshots / f"slides-{source}-{stem}-was-clipped-{here[0]}-{here[1]}.png")
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
    problems += missing_notes(page.evaluate(SECTION_NOTES), source, stem)
    problems += [f"server answered {status}: {path}" for path, status in server.failed_since(start)]
    assert not problems, f"{source} deck {stem}:\n" + "\n".join(problems)


def section_minutes(source, stem):
    """Section number -> the minutes the teacher's guide gives it ("0–4 min", ...)."""
    guide = ROOT / "docs" / ("guide.ko.md" if source.endswith("-ko") else "guide.md")
    plan = slides.lesson_plan(guide.read_text(encoding="utf-8"), stem[:2])
    return {where[1:]: re.findall(r"\*\*(\S+ min)\*\*", " ".join(lines))
            for where, lines in plan.items() if where.startswith("§")}


def missing_notes(notes, source, stem):
    """Each section's first slide carries the guide's minutes for it in its speaker notes."""
    problems = []
    for number, minutes in section_minutes(source, stem).items():
        if number not in notes:
            problems.append(f"no slide for section {number}, which the guide plans")
            continue
        problems += [f"section {number}'s speaker notes lack the guide's {m}"
                     for m in minutes if m not in notes[number]]
    return problems


def test_speaker_view_opens_offline_with_the_guides_notes(page, site):
    """`s` opens reveal.js's speaker view; it shows the current slide's notes (the guide's
    minutes for section 1 of lesson 02) and nothing it loads leaves the machine."""
    left = []
    stay_offline(page.context, site, left.append)  # the context: the speaker view's window too
    page.goto(f"{site.url}/slides/02_retain_graph.html", wait_until="load")
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    first = page.evaluate("""() => [...document.querySelectorAll('.reveal .slides > section')]
        .findIndex(s => /^\\s*1\\./.test((s.querySelector('h2') || {}).textContent || ''))""")
    page.evaluate("(h) => Reveal.slide(h, 0)", first)
    with page.expect_popup() as opened:
        page.keyboard.press("s")
    speaker = opened.value
    minutes = section_minutes("site", "02_retain_graph")["1"][0]
    speaker.wait_for_function("""(minutes) => {
        const notes = document.querySelector('.speaker-controls-notes .value');
        return notes && notes.textContent.includes(minutes);
    }""", arg=minutes)
    speaker.wait_for_function("() => document.querySelector('#current-slide iframe')")
    speaker.wait_for_load_state("load")
    speaker.screenshot(path=SCREENSHOTS / "slides-speaker-view-02_retain_graph.png")
    assert not left, f"the speaker view asked the network for: {left}"
