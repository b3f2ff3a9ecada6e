"""The static site (`make site`), read in a real browser as a learner reads it.

Each page: every image (graphs, plots, figures) loads; every maths formula is typeset by
MathJax; no request to the site's server fails, and no request leaves the machine (the
site is fully offline). A lesson page shows as many graphs and plots as the lesson
stores, and its stored errors. The landing page is the README, its lesson links lead to
the lesson pages, and the navigation lists the lessons in order. All of it in both
editions, English and Korean (under ko/): a Korean page is `lang="ko"`, draws its Hangul
in a Korean font, and links its English counterpart, as each English page links its. A full-page screenshot
of each page is saved in test-artifacts/screenshots/.
"""
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .conftest import fonts_drawing_korean, is_korean_font
from .stored_outputs import KOREAN_LESSONS, LESSONS, ROOT, read_lesson, squash


@dataclass
class Edition:
    """One language's site: English in html/, Korean in html/ko/ (docs/conf.py)."""
    lang: str
    index: str          # the folder's index.html, which leads to the README page
    readme: Path        # the README's source
    readme_page: str
    lessons: list
    lesson_folder: str  # where the lesson pages are, relative to the site's root
    slides: str
    guide: str          # the teacher's guide's page
    guide_source: Path

    def lesson_page(self, lesson):
        return f"{self.lesson_folder}/{lesson.stem}.html"


EDITIONS = [
    Edition("en", "index.html", ROOT / "README.md", "README.html", LESSONS, "notebooks",
            "slides", "docs/guide.html", ROOT / "docs" / "guide.md"),
    Edition("ko", "ko/index.html", ROOT / "README.ko.md", "ko/README.ko.html", KOREAN_LESSONS,
            "ko/notebooks/ko", "ko/slides", "ko/docs/guide.ko.html",
            ROOT / "docs" / "guide.ko.md"),
]
EDITION_IDS = [edition.lang for edition in EDITIONS]

WATCH = """() => window.MathJax && window.MathJax.startup && window.MathJax.startup.promise
    ? window.MathJax.startup.promise.then(() => true) : false"""

PAGE_STATE = """() => ({
    images: [...document.images].map(image => ({
        src: image.getAttribute('src'),
        ok: image.complete && image.naturalWidth > 0,
        inOutput: !!image.closest('.cell_output'),
    })),
    math: [...document.querySelectorAll('.math')].map(math => ({
        text: math.textContent.slice(0, 80),
        typeset: !!math.querySelector('mjx-container')
            && math.querySelector('mjx-container').getBoundingClientRect().width > 0,
    })),
    text: document.body.innerText,
})"""


class Visit:
    """Open one page and keep every request that went wrong, or went off the machine."""

    def __init__(self, page, site):
        self.page, self.site, self.problems = page, site, []
        self.start = len(site.requests)
        page.on("requestfailed", self._failed)
        page.on("response", lambda r: r.status >= 400 and self.problems.append(f"HTTP {r.status}: {r.url}"))
        page.on("request", self._offline)

    def _failed(self, request):
        # ERR_ABORTED: cut short by the page navigating on (index.html's redirect), not missing.
        if "ERR_ABORTED" not in (request.failure or ""):
            self.problems.append(f"request failed: {request.url} ({request.failure})")

    def _offline(self, request):
        if urlsplit(request.url).scheme in ("http", "https", "ws", "wss") and not request.url.startswith(self.site.url + "/"):
            self.problems.append(f"request leaves the machine: {request.url}")

    def open(self, path):
        self.page.goto(f"{self.site.url}/{path}", wait_until="load")
        self.page.wait_for_load_state("networkidle")
        self.page.wait_for_function("() => [...document.images].every(image => image.complete)")
        if self.page.locator(".math").count():
            try:
                self.page.wait_for_function(WATCH, timeout=30_000)
            except PlaywrightTimeout:
                self.problems.append("MathJax did not start within 30 s")
        return self.page.evaluate(PAGE_STATE)

    def server_problems(self):
        # What the server itself saw, including requests the page API does not report.
        return [f"server answered {status}: {path}" for path, status in self.site.failed_since(self.start)]


def _lesson_for(page_path):
    match = re.fullmatch(r"(ko/notebooks/ko|notebooks)/(.+)\.html", page_path)
    lessons = KOREAN_LESSONS if page_path.startswith("ko/") else LESSONS
    return next((lesson for lesson in lessons if match and lesson.stem == match[2]), None)


def test_site_page(site_page, site, page, screenshots):
    visit = Visit(page, site)
    state = visit.open(site_page)
    page.screenshot(path=screenshots / f"site-{site_page.removesuffix('.html').replace('/', '-')}.png",
                    full_page=True)
    problems = list(visit.problems)
    problems += [f"image did not load: {image['src']}" for image in state["images"] if not image["ok"]]
    problems += [f"maths not typeset: {math['text']!r}" for math in state["math"] if not math["typeset"]]

    lesson = _lesson_for(site_page)
    if lesson is not None:
        _, cells = read_lesson(lesson)
        shown = [image["src"] for image in state["images"] if image["inOutput"]]
        for suffix, kind, stored in ((".svg", "graphs", sum(c.svg for c in cells)),
                                     (".png", "plots", sum(c.png for c in cells))):
            count = sum(src.endswith(suffix) for src in shown)
            if count != stored:
                problems.append(f"{count} {kind} shown, the lesson stores {stored}")
        for cell in cells:
            for ename, evalue in cell.errors:
                if f"{ename}: " not in state["text"]:
                    problems.append(f"cell {cell.index}: stored error {ename} not shown")
    else:
        readme = next((e.readme for e in EDITIONS if e.readme_page == site_page), None)
        readme_images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", readme.read_text()) if readme else []
        if len(state["images"]) < len(readme_images):
            problems.append(f"{len(state['images'])} images shown, the README has {len(readme_images)}")
    if site_page.startswith("ko/"):  # a Korean page: says so, and draws Hangul in a Korean font
        if page.get_attribute("html", "lang") != "ko":
            problems.append(f"<html lang={page.get_attribute('html', 'lang')!r}>, not 'ko'")
        text, families = fonts_drawing_korean(page, "article")
        if text is None or not any(map(is_korean_font, families)):
            problems.append(f"Korean text {text!r} drawn with {families}, not a Korean font")
    problems += visit.server_problems()
    assert not problems, f"{site_page}:\n" + "\n".join(problems)


@pytest.mark.parametrize("edition", EDITIONS, ids=EDITION_IDS)
def test_landing_page_and_navigation(edition, site, page):
    """index.html leads to the README; its lesson links and the sidebar lead to the lessons, in order."""
    visit = Visit(page, site)
    visit.open(edition.index)
    assert page.url == f"{site.url}/{edition.readme_page}"
    readme = edition.readme.read_text()
    title = re.search(r"^# (.+)$", readme, re.M)[1]
    shown = page.locator("article h1, main h1").first.inner_text()
    assert squash(shown.replace("’", "'")).startswith(squash(title.replace("`", ""))[:20]), shown

    links = page.eval_on_selector_all("article a[href], main a[href]", "as => as.map(a => a.href)")
    folder = "notebooks/ko" if edition.lang == "ko" else "notebooks"
    readme_lessons = re.findall(rf"\]\({folder}/([^)\s/]+)\.ipynb\)", readme)
    problems = [f"README links {folder}/{stem}.ipynb, which is not a lesson"
                for stem in readme_lessons if not (ROOT / folder / f"{stem}.ipynb").is_file()]
    problems += [f"README's link to {stem} does not lead to its page"
                 for stem in readme_lessons
                 if f"{site.url}/{edition.lesson_folder}/{stem}.html" not in links]
    if len(readme_lessons) < len(edition.lessons):
        problems.append(f"the README links {len(readme_lessons)} of {len(edition.lessons)} lessons")

    sidebar = page.eval_on_selector_all("nav.bd-docs-nav a[href]", "as => as.map(a => a.href)")
    lesson_pages = [f"{site.url}/{edition.lesson_page(lesson)}" for lesson in edition.lessons]
    in_sidebar = [href for href in sidebar if href in lesson_pages]
    if in_sidebar != lesson_pages:
        problems.append(f"sidebar lists {in_sidebar}, expected the lessons in order {lesson_pages}")

    # Each lesson's "next" link leads to the following page, as a reader pages through.
    for here, after in zip(lesson_pages, lesson_pages[1:]):
        page.goto(here)
        following = page.eval_on_selector_all("a.right-next", "as => as.map(a => a.href)")
        if following[:1] != [after]:
            problems.append(f"the next link of {here} is {following}, expected {after}")
    problems += visit.problems + visit.server_problems()
    assert not problems, "\n".join(problems)


def test_every_local_link_works(site, page):
    """Crawl from the landing page: every link within the site answers (pages, downloads)."""
    seen, queue, problems = set(), deque([f"{site.url}/README.html", f"{site.url}/index.html"]), []
    while queue:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        if urlsplit(url).path.endswith((".html", "/")) and not url.endswith("/index.html"):
            response = page.goto(url, wait_until="domcontentloaded")
            if response is None or response.status >= 400:
                problems.append(f"{url}: {response.status if response else 'no response'}")
                continue
            for href in page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))"):
                target = urldefrag(urljoin(page.url, href)).url
                if target.startswith(site.url + "/") and target not in seen:
                    queue.append(target)
        else:
            response = page.request.get(url)
            if response.status >= 400:
                problems.append(f"{url}: {response.status}")
    pages = {urlsplit(url).path for url in seen}
    # Both editions are reached from the landing page (the Korean through its link "한국어").
    problems += [f"no link leads to /{edition.lesson_page(lesson)}" for edition in EDITIONS
                 for lesson in edition.lessons if f"/{edition.lesson_page(lesson)}" not in pages]
    assert not problems, "\n".join(problems)
    assert len(seen) >= len(LESSONS) + len(KOREAN_LESSONS) + 4


@pytest.mark.parametrize("edition", EDITIONS, ids=EDITION_IDS)
def test_teacher_links(edition, site, page):
    """Each lesson page links its slides and its part of the teacher's guide; the guide's
    links to lessons land on a section that exists (the guide's test checks the cells)."""
    assert edition.guide_source.is_file()
    visit, problems, ids = Visit(page, site), [], {}

    def anchors(url):
        path = urlsplit(url).path
        if path not in ids:
            page.goto(url.split("#")[0], wait_until="domcontentloaded")
            ids[path] = set(page.eval_on_selector_all("[id]", "es => es.map(e => e.id)"))
        return ids[path]

    for lesson in edition.lessons:
        page.goto(f"{site.url}/{edition.lesson_page(lesson)}", wait_until="domcontentloaded")
        links = page.eval_on_selector_all("p.for-teachers a[href]", "as => as.map(a => a.href)")
        slides = f"{site.url}/{edition.slides}/{lesson.stem}.html"
        guide = f"{site.url}/{edition.guide}#lesson-{lesson.name[:2]}"
        if links != [slides, guide]:
            problems.append(f"{lesson.stem}: teacher links {links}, expected {[slides, guide]}")
            continue
        if page.request.get(slides).status != 200:
            problems.append(f"{lesson.stem}: its slides {slides} do not answer")
        if f"lesson-{lesson.name[:2]}" not in anchors(guide):
            problems.append(f"{lesson.stem}: the guide has no #lesson-{lesson.name[:2]}")

    page.goto(f"{site.url}/{edition.guide}", wait_until="domcontentloaded")
    cited = page.eval_on_selector_all("article a[href*='notebooks/']", "as => as.map(a => a.href)")
    assert len(cited) >= 4 * len(edition.lessons), f"the guide links its lessons {len(cited)} times"
    if edition.lang == "ko":
        problems += [f"the Korean guide links {url}, not a Korean lesson" for url in cited
                     if "/ko/notebooks/ko/" not in url]
    for url in cited:
        fragment = urlsplit(url).fragment
        if fragment and fragment not in anchors(url):
            problems.append(f"the guide links {url}, whose page has no #{fragment}")
    problems += visit.problems + visit.server_problems()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("edition", EDITIONS, ids=EDITION_IDS)
def test_each_page_links_its_counterpart(edition, site, page):
    """Every lesson page, the README and the guide link the same page in the other language."""
    other = next(e for e in EDITIONS if e is not edition)
    pairs = [(edition.readme_page, other.readme_page), (edition.guide, other.guide)]
    pairs += [(edition.lesson_page(lesson), other.lesson_page(lesson))
              for lesson in edition.lessons]
    problems = []
    for here, there in pairs:
        page.goto(f"{site.url}/{here}", wait_until="domcontentloaded")
        links = page.eval_on_selector_all("p.counterpart a[href]", "as => as.map(a => a.href)")
        if links != [f"{site.url}/{there}"]:
            problems.append(f"{here} links {links} as its counterpart, expected {there}")
    assert not problems, "\n".join(problems)
