"""The static site (`make site`), read in a real browser as a learner reads it.

Each page: every image (graphs, plots, figures) loads; every maths formula is typeset by
MathJax; no request to the site's server fails, and no request leaves the machine (the
site is fully offline). A lesson page shows as many graphs and plots as the lesson
stores, and its stored errors. The landing page is the README, its lesson links lead to
the lesson pages, and the navigation lists the lessons in order. A full-page screenshot
of each page is saved in test-artifacts/screenshots/.
"""
import re
from collections import deque
from urllib.parse import urldefrag, urljoin, urlsplit

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .stored_outputs import LESSONS, ROOT, read_lesson, squash

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
    match = re.fullmatch(r"notebooks/(.+)\.html", page_path)
    return next((lesson for lesson in LESSONS if match and lesson.stem == match[1]), None)


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
    elif site_page == "README.html":
        readme_images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)", (ROOT / "README.md").read_text())
        if len(state["images"]) < len(readme_images):
            problems.append(f"{len(state['images'])} images shown, the README has {len(readme_images)}")
    problems += visit.server_problems()
    assert not problems, f"{site_page}:\n" + "\n".join(problems)


def test_landing_page_and_navigation(site, page):
    """index.html leads to the README; its lesson links and the sidebar lead to the lessons, in order."""
    visit = Visit(page, site)
    visit.open("index.html")
    assert page.url == f"{site.url}/README.html"
    title = re.search(r"^# (.+)$", (ROOT / "README.md").read_text(), re.M)[1]
    shown = page.locator("article h1, main h1").first.inner_text()
    assert squash(shown.replace("’", "'")).startswith(squash(title.replace("`", ""))[:20]), shown

    links = page.eval_on_selector_all("article a[href], main a[href]", "as => as.map(a => a.href)")
    readme_lessons = re.findall(r"\]\(notebooks/([^)\s]+)\.ipynb\)", (ROOT / "README.md").read_text())
    problems = [f"README links notebooks/{stem}.ipynb, which is not a lesson"
                for stem in readme_lessons if not (ROOT / "notebooks" / f"{stem}.ipynb").is_file()]
    problems += [f"README's link to {stem} does not lead to its page"
                 for stem in readme_lessons if f"{site.url}/notebooks/{stem}.html" not in links]

    sidebar = page.eval_on_selector_all("nav.bd-docs-nav a[href]", "as => as.map(a => a.href)")
    lesson_pages = [f"{site.url}/notebooks/{lesson.stem}.html" for lesson in LESSONS]
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
    problems += [f"no link leads to /notebooks/{lesson.stem}.html" for lesson in LESSONS
                 if f"/notebooks/{lesson.stem}.html" not in pages]
    assert not problems, "\n".join(problems)
    assert len(seen) >= len(LESSONS) + 2


def test_teacher_links(site, page):
    """Each lesson page links its slides and its part of the teacher's guide; the guide's
    links to lessons land on a section that exists (the guide's test checks the cells)."""
    if not (ROOT / "docs" / "guide.md").is_file():
        return
    visit, problems, ids = Visit(page, site), [], {}

    def anchors(url):
        path = urlsplit(url).path
        if path not in ids:
            page.goto(url.split("#")[0], wait_until="domcontentloaded")
            ids[path] = set(page.eval_on_selector_all("[id]", "es => es.map(e => e.id)"))
        return ids[path]

    for lesson in LESSONS:
        page.goto(f"{site.url}/notebooks/{lesson.stem}.html", wait_until="domcontentloaded")
        links = page.eval_on_selector_all("p.for-teachers a[href]", "as => as.map(a => a.href)")
        slides = f"{site.url}/slides/{lesson.stem}.html"
        guide = f"{site.url}/docs/guide.html#lesson-{lesson.name[:2]}"
        if links != [slides, guide]:
            problems.append(f"{lesson.stem}: teacher links {links}, expected {[slides, guide]}")
            continue
        if page.request.get(slides).status != 200:
            problems.append(f"{lesson.stem}: its slides {slides} do not answer")
        if f"lesson-{lesson.name[:2]}" not in anchors(guide):
            problems.append(f"{lesson.stem}: the guide has no #lesson-{lesson.name[:2]}")

    page.goto(f"{site.url}/docs/guide.html", wait_until="domcontentloaded")
    cited = page.eval_on_selector_all("article a[href*='notebooks/']", "as => as.map(a => a.href)")
    assert len(cited) >= 4 * len(LESSONS), f"the guide links its lessons {len(cited)} times"
    for url in cited:
        fragment = urlsplit(url).fragment
        if fragment and fragment not in anchors(url):
            problems.append(f"the guide links {url}, whose page has no #{fragment}")
    problems += visit.problems + visit.server_problems()
    assert not problems, "\n".join(problems)
