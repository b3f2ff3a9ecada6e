"""Browser tests: the lessons run in JupyterLab, and the static site, each checked in a
real browser, Debian's Chromium (/usr/bin/chromium, or $CHROMIUM) driven by Playwright.

- `jupyterlab`: a JupyterLab server from this venv on 127.0.0.1, a random free port and a
  token, serving a throwaway copy of the student editions that `make classroom` made
  (build/classroom/student and build/classroom/ko/student: the lessons without outputs or
  solutions), with its own config, data and runtime folders.
- `site`: build/site/html (made by `make site`) served by http.server on 127.0.0.1,
  recording the status of every request the browser makes.
- `classroom`: build/classroom (made by `make classroom`: the slide decks, the guide)
  served the same way.
- Screenshots go to test-artifacts/screenshots/ (ignored by git).

Without a browser or a built site these tests skip, except under CI, where they fail.
"""
import functools
import http.server
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from .stored_outputs import KOREAN_LESSONS, LESSONS, ROOT, lesson_id

SITE = ROOT / "build" / "site" / "html"
CLASSROOM = ROOT / "build" / "classroom"
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# As root Chromium needs --no-sandbox; the rest keep it from calling home (this machine
# has no network beyond its package registries) and from first-run chores.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}


def unavailable(reason):
    """Skip on a learner's machine; fail under CI, where a skip would hide a missing set-up."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (not skipped under CI)")
    pytest.skip(reason)


def site_pages():
    """The site's pages: the landing page (README), each lesson, the authors' guide, the
    teacher's guide."""
    guide = ["CONTRIBUTING.html"] if (ROOT / "CONTRIBUTING.md").is_file() else []
    teachers = ["docs/guide.html"] if (ROOT / "docs" / "guide.md").is_file() else []
    korean = (["ko/README.ko.html", "ko/notebooks/ko/GLOSSARY.html"]
              + [f"ko/notebooks/ko/{lesson.stem}.html" for lesson in KOREAN_LESSONS]
              + (["ko/docs/guide.ko.html"] if (ROOT / "docs" / "guide.ko.md").is_file() else []))
    return (["README.html"] + guide + [f"notebooks/{lesson.stem}.html" for lesson in LESSONS]
            + teachers + korean)


def pytest_generate_tests(metafunc):
    if "lesson" in metafunc.fixturenames:
        lessons = LESSONS + KOREAN_LESSONS
        metafunc.parametrize("lesson", lessons, ids=[lesson_id(lesson) for lesson in lessons])
    if "site_page" in metafunc.fixturenames:
        pages = site_pages()
        metafunc.parametrize("site_page", pages, ids=[p.removesuffix(".html") for p in pages])


@pytest.fixture(scope="session")
def screenshots():
    """Where to save screenshots: test-artifacts/screenshots/ (ignored by git)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


# --- the browser -------------------------------------------------------------------

@pytest.fixture(scope="session")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        unavailable(f"no Chromium at {CHROMIUM} (make test installs Debian's chromium as "
                    "root; or set CHROMIUM to a Chrome/Chromium binary)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                             headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(60_000)
    page = context.new_page()
    yield page
    context.close()


# Which fonts the browser drew an element's own text with: Chromium's DevTools protocol
# (CSS.getPlatformFontsForNode) tells, glyph by glyph, so a Hangul glyph that no Korean
# font drew shows up as another family.
MARK_KOREAN_TEXT = """(selector) => {
    const hangul = /[\uac00-\ud7a3]/;
    const walker = document.createTreeWalker(document.querySelector(selector) || document.body,
                                             NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (hangul.test(node.textContent) && node.parentElement.offsetParent !== null) {
            node.parentElement.setAttribute('data-korean-text', '');
            return node.textContent.trim().slice(0, 40);
        }
    }
    return null;
}"""


def fonts_drawing_korean(page, within="body"):
    """(the first visible Korean text in `within`, the font families that drew it)."""
    text = page.evaluate(MARK_KOREAN_TEXT, within)
    if text is None:
        return None, []
    client = page.context.new_cdp_session(page)
    try:
        client.send("DOM.enable")
        client.send("CSS.enable")
        root = client.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = client.send("DOM.querySelector", {"nodeId": root, "selector": "[data-korean-text]"})
        fonts = client.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]
    finally:
        client.detach()
    return text, [font["familyName"] for font in fonts]


def is_korean_font(family: str) -> bool:
    return "CJK" in family or "KR" in family or "Gothic" in family


# --- JupyterLab --------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _lab_setting(config_dir: Path, plugin: str, values: dict):
    package, name = plugin.split(":")
    path = config_dir / "lab" / "user-settings" / package / f"{name}.jupyterlab-settings"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(values))


class JupyterLab:
    def __init__(self, url, token, root, process, log):
        self.url, self.token, self.root, self.process, self.log = url, token, root, process, log

    def api(self, path, method="GET"):
        request = urllib.request.Request(f"{self.url}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def lab_url(self, notebook: str, folder: str) -> str:
        # ?reset: start from an empty workspace, not the previous test's layout.
        return f"{self.url}/lab/tree/{folder}/{notebook}?reset&token={self.token}"

    def kernel_state(self, notebook: str, folder: str):
        for session in self.api("sessions"):
            if session["path"] == f"{folder}/{notebook}":
                return session["kernel"]["execution_state"]
        return None

    def shutdown_kernels(self):
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", method="DELETE")

    def log_tail(self, lines=40):
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory):
    editions = [CLASSROOM / "student", CLASSROOM / "ko" / "student"]
    if not all(edition.is_dir() for edition in editions):
        unavailable("no student editions in build/classroom: run `make classroom` first")
    home = tmp_path_factory.mktemp("jupyterlab")
    work = home / "work"
    for edition in editions:  # student/ and ko/student/, as `make classroom` made them
        shutil.copytree(edition, work / edition.relative_to(CLASSROOM),
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))

    config = home / "config"
    # Every cell in the DOM (no virtual scrolling), so that the test can read them all;
    # no news or update checks (no network); no autosave (a throwaway copy anyway).
    _lab_setting(config, "@jupyterlab/notebook-extension:tracker", {"windowingMode": "none"})
    _lab_setting(config, "@jupyterlab/apputils-extension:notification",
                 {"fetchNews": "false", "checkForUpdates": False})
    _lab_setting(config, "@jupyterlab/docmanager-extension:plugin", {"autosave": False})

    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config), JUPYTER_DATA_DIR=str(home / "data"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"), IPYTHONDIR=str(home / "ipython"))
    for name in ("JUPYTER_PATH", "MPLBACKEND"):  # the lessons' own kernels, inline plots
        env.pop(name, None)
    port, token = _free_port(), secrets.token_hex(24)
    log = home / "jupyterlab.log"
    command = [sys.executable, "-m", "jupyterlab", "--ip=127.0.0.1", f"--port={port}",
               "--ServerApp.port_retries=0", "--ServerApp.open_browser=False",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
               "--ServerApp.allow_root=True",  # CI runs as root
               "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    with open(log, "wb") as log_file:
        process = subprocess.Popen(command, cwd=work, env=env, stdout=log_file,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    lab = JupyterLab(f"http://127.0.0.1:{port}", token, work, process, log)
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {process.returncode}:\n{lab.log_tail()}")
            try:
                lab.api("status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer within 120 s:\n{lab.log_tail()}")
                time.sleep(0.3)
        yield lab
    finally:
        if process.poll() is None:
            try:  # shuts the kernels down too
                lab.api("shutdown", method="POST")
                process.wait(timeout=30)
            except Exception:
                pass
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# --- the static site ---------------------------------------------------------------

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    requests = None  # set per server: list of (path, status)

    def log_request(self, code="-", size="-"):
        self.requests.append((self.path, int(getattr(code, "value", code))))

    def log_message(self, format, *args):
        pass


class Site:
    def __init__(self, url, requests):
        self.url, self.requests = url, requests

    def failed_since(self, start: int):
        return [(path, status) for path, status in self.requests[start:] if status >= 400]


def _serve(directory: Path):
    """Serve a folder on 127.0.0.1 (a random free port), recording every request."""
    requests = []
    handler = type("Handler", (_QuietHandler,), {"requests": requests})
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Site(f"http://127.0.0.1:{server.server_address[1]}", requests)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def site():
    if not (SITE / "index.html").is_file():
        unavailable(f"no built site in {SITE.relative_to(ROOT)}: run `make site` first")
    yield from _serve(SITE)


@pytest.fixture(scope="session")
def classroom():
    """build/classroom, served: its slides/ and guide/ as a teacher's browser opens them."""
    if not (CLASSROOM / "slides").is_dir():
        unavailable(f"no slides in {(CLASSROOM / 'slides').relative_to(ROOT)}: run `make classroom` first")
    yield from _serve(CLASSROOM)
