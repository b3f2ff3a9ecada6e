"""Sphinx configuration of the static site (`make site`).

The source directory is the repository itself (`sphinx-build -c docs . build/site/html`),
so the site shows the files as they are, with nothing copied by hand:

- README.md is the landing page (README.html; index.html sends the reader there). Its
  links work unchanged: notebooks/NN_*.ipynb are the lesson pages, CONTRIBUTING.md is a
  page, LICENSE a download, figures/*.svg an image.
- The lessons, notebooks/[0-9]*.ipynb, are rendered from their stored outputs by myst-nb
  (never executed here), in file-name order, with the book theme's navigation. Their
  worked solutions (answer cells' `classroom` metadata) are dropped as they are read: no
  file of the site holds one (tests/test_classroom.py searches them all).
- Maths is rendered by MathJax 3 from docs/node_modules (npm, docs/package.json), copied
  into the site's _static/mathjax/, so the site needs no network.
- For teachers: docs/guide.md, the teacher's guide, is a page (docs/guide.html), and
  slides/NN_name.html is a reveal.js deck of each lesson, made from the lessons as stored
  (tools/classroom/slides.py, reveal.js from npm too). Each lesson page links to both.
  (`make classroom` makes the teacher's decks, with the worked solutions, from the teacher
  edition; the site shows the lessons as a self-learner reads them, exercises unanswered.)
- In Korean: `sphinx-build -t ko ... build/site/html/ko` builds the Korean edition
  (README.ko.md, notebooks/ko/, docs/guide.ko.md, the glossary) as a site of its own
  under ko/, with its own navigation and decks (ko/slides/). Each page that has a
  counterpart in the other language links to it, at its top.
"""
from pathlib import Path
import importlib.util
import json
import re
import shutil

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
MATHJAX = DOCS / "node_modules" / "mathjax"
SLIDES_TOOL = ROOT / "tools" / "classroom" / "slides.py"
# `-t ko`: the Korean edition (`tags` is Sphinx's; conf.py is read with it defined).
KOREAN = tags.has("ko")  # noqa: F821
# the teacher's guide; each lesson's part starts at <a id="lesson-NN">
GUIDE = "docs/guide.ko" if KOREAN else "docs/guide"
LESSONS = ROOT / "notebooks" / "ko" if KOREAN else ROOT / "notebooks"

project = "autograd의 메모리, 실행하며 배우기" if KOREAN else "Autograd's memory, executed"
language = "ko" if KOREAN else "en"
author = "The autograd-lens contributors"
copyright = "2026 The autograd-lens contributors (MIT licence)"  # as in LICENSE

extensions = ["myst_nb"]

root_doc = "README.ko" if KOREAN else "README"
# Only these files are pages; the rest of the repository is not walked into.
if KOREAN:
    include_patterns = ["README.ko.md", "notebooks/ko/[0-9]*.ipynb", "notebooks/ko/GLOSSARY.md",
                        f"{GUIDE}.md"]
else:
    include_patterns = ["README.md", "CONTRIBUTING.md", "notebooks/[0-9]*.ipynb", f"{GUIDE}.md"]
exclude_patterns = [".*", "**/.*", "build", "docs/_static", "docs/_templates", "src", "tests", "tools",
                    "figures", "test-artifacts", "**/.ipynb_checkpoints", "**/node_modules"]

# The lessons as stored: outputs of a clean "Restart & Run All", never re-executed.
nb_execution_mode = "off"
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# MathJax from npm, served by the site itself (relative to _static/).
mathjax_path = "mathjax/tex-mml-chtml.js"

html_theme = "sphinx_book_theme"
html_title = project
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_static_path = ["_static"]
# search-button-field.html: the theme's search button, named by what it shows.
templates_path = ["_templates"]
html_css_files = ["site.css"]
html_favicon = "_static/favicon.svg"  # else browsers ask for a /favicon.ico that isn't there
html_theme_options = {
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "navigation_with_keys": False,
}

# Lessons in order, after the landing page, then the authors' guide. The README is
# GitHub's landing page too, so the toctree that gives the site its navigation is added
# to it here, when Sphinx reads it, rather than written into the file.
TOCTREE = """

```{toctree}
:hidden:
:caption: Lessons
:glob:

notebooks/[0-9]*
```

```{toctree}
:hidden:
:caption: For teachers

docs/guide
```

```{toctree}
:hidden:
:caption: For authors

CONTRIBUTING
```
"""
TOCTREE_KO = """

```{toctree}
:hidden:
:caption: 강의
:glob:

notebooks/ko/[0-9]*
```

```{toctree}
:hidden:
:caption: 참고

notebooks/ko/GLOSSARY
```

```{toctree}
:hidden:
:caption: 교사용

docs/guide.ko
```
"""

# Put under each lesson's title: its slides and its part of the teacher's guide.
if KOREAN:  # a lesson page is ko/notebooks/ko/NN_name.html: two folders below ko/
    FOR_TEACHERS = ('<p class="for-teachers">교사용: <a href="../../slides/{stem}.html">'
                    '이 강의의 슬라이드</a> · <a href="../../{guide}.html#lesson-{number}">'
                    "교사용 안내서의 수업 계획</a></p>")
else:
    FOR_TEACHERS = ('<p class="for-teachers">For teachers: <a href="../slides/{stem}.html">'
                    "this lesson's slides</a> · <a href=\"../{guide}.html#lesson-{number}\">"
                    "its plan in the teacher's guide</a></p>")

# Each page's counterpart in the other language: the READMEs, the guides, and each lesson
# that is in both editions (same file names), as docnames: English -> Korean.
COUNTERPARTS = {"README": "README.ko", "docs/guide": "docs/guide.ko"} | {
    f"notebooks/{lesson.stem}": f"notebooks/ko/{lesson.stem}"
    for lesson in sorted((ROOT / "notebooks" / "ko").glob("[0-9]*.ipynb"))
    if (ROOT / "notebooks" / lesson.name).is_file()}
if KOREAN:
    COUNTERPARTS = {korean: english for english, korean in COUNTERPARTS.items()}
COUNTERPART_LINK = ('<p class="counterpart"><a href="{href}" hreflang="{lang}" lang="{lang}">'
                    "{label}</a></p>")


def counterpart_href(docname):
    """The relative link from this page to the same page in the other language, or None.
    English pages are in html/, Korean ones in html/ko/ (their docnames keep their folders)."""
    other = COUNTERPARTS.get(docname)
    if other is None:
        return None
    if KOREAN:  # up out of ko/ too
        return "../" * (docname.count("/") + 1) + f"{other}.html"
    return "../" * docname.count("/") + f"ko/{other}.html"


def _counterpart_html(docname):
    href = counterpart_href(docname)
    if href is None:
        return None
    lang, label = ("en", "English") if KOREAN else ("ko", "한국어")
    return COUNTERPART_LINK.format(href=href, lang=lang, label=label)


# The READMEs link to each other for GitHub's readers; on the site the counterpart link
# above does that, and the other README is not a page of this build.
OTHER_README = re.compile(r"^.*\]\((README\.md|README\.ko\.md)\).*\n", re.MULTILINE)


def _add_toctree(app, docname, source):
    if docname == root_doc:
        source[0] = OTHER_README.sub("", source[0]) + (TOCTREE_KO if KOREAN else TOCTREE)


def _add_counterpart_link(app, docname, source):
    """Under a Markdown page's title: a link to the same page in the other language."""
    link = _counterpart_html(docname)
    if link is None or docname.startswith("notebooks/"):
        return  # lessons get theirs with the teacher links, in their first cell
    lines = source[0].split("\n")
    title = next(i for i, line in enumerate(lines) if line.startswith("# "))
    source[0] = "\n".join(lines[:title + 1] + ["", link, ""] + lines[title + 1:])


def _drop_solutions(app, docname, source):
    """A lesson's answer cells hold the worked solutions in their metadata ("classroom",
    tools/classroom/exercises.py): drop it as Sphinx reads the lesson, so that no page, no
    doctree and no notebook myst-nb writes out carries them."""
    if not re.fullmatch(r"notebooks/(?:ko/)?[0-9]{2}_\w+", docname):
        return
    notebook = json.loads(source[0])
    for cell in notebook["cells"]:
        cell.get("metadata", {}).pop("classroom", None)
    source[0] = json.dumps(notebook)


def _keep_notebook_copies_out_of_the_site(app):
    """myst-nb writes each lesson it reads, and its outputs' images, to jupyter_execute/
    beside the output folder: for the Korean site (html/ko) that is html/, which is served.
    Move it beside the English one's (build/site/jupyter_execute), out of the site; the
    pages use their images from _images/."""
    if KOREAN:
        folder = Path(app.outdir).parents[1] / "jupyter_execute-ko"
        app.env.mystnb_config = app.env.mystnb_config.copy(output_folder=str(folder))


def _add_teacher_links(app, docname, source):
    match = re.fullmatch(r"notebooks/(?:ko/)?(([0-9]{2})_\w+)", docname)
    if not match:
        return
    notebook = json.loads(source[0])
    title = notebook["cells"][0]
    lines = "".join(title["source"]).split("\n")
    links = [FOR_TEACHERS.format(stem=match[1], number=match[2], guide=GUIDE)]
    counterpart = _counterpart_html(docname)
    if counterpart:
        links.insert(0, counterpart)
    title["source"] = "\n".join([lines[0], ""] + links + [""] + lines[1:])
    source[0] = json.dumps(notebook)


# Parts of MathJax's es5/ bundle that tex-mml-chtml.js loads, now or on demand (TeX
# extensions, fonts, the right-click menu and its accessibility tools). The other
# combined bundles in es5/ are not needed.
MATHJAX_PARTS = ["tex-mml-chtml.js", "input", "output", "ui", "a11y", "sre", "adaptors"]


def _copy_mathjax(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    source = MATHJAX / "es5"
    if not source.is_dir():
        raise RuntimeError(f"MathJax is missing at {source}: run `make site` (it runs npm ci in docs/)")
    version = json.loads((MATHJAX / "package.json").read_text())["version"]
    target = Path(app.outdir) / "_static" / "mathjax"
    stamp = target / ".version"
    if stamp.is_file() and stamp.read_text() == version:
        return
    shutil.rmtree(target, ignore_errors=True)
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)
    stamp.write_text(version)


def _build_slides(app, exception):
    """A deck per lesson in slides/, from the lessons as stored; MathJax: the site's copy."""
    if exception is not None or app.builder.format != "html":
        return
    spec = importlib.util.spec_from_file_location("classroom_slides", SLIDES_TOOL)
    slides = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(slides)
    slides.build_slides(LESSONS, Path(app.outdir) / "slides", mark_notebooks=False,
                        mathjax_url="../_static/mathjax/tex-mml-chtml.js")


REDIRECT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<meta http-equiv="refresh" content="0; url={target}">
<link rel="canonical" href="{target}">
<link rel="icon" href="_static/favicon.svg">
</head><body><p><a href="{target}">{title}</a></p></body></html>
"""


def _write_index(app, exception):
    """index.html, for servers and browsers that open a folder's index: go to the README."""
    if exception is not None or app.builder.format != "html" or root_doc == "index":
        return
    target = app.builder.get_target_uri(root_doc)
    (Path(app.outdir) / "index.html").write_text(REDIRECT.format(title=project, target=target),
                                                  encoding="utf-8")


def setup(app):
    app.connect("source-read", _add_toctree)
    app.connect("source-read", _add_counterpart_link)
    app.connect("source-read", _add_teacher_links)
    app.connect("source-read", _drop_solutions)
    app.connect("builder-inited", _keep_notebook_copies_out_of_the_site, priority=900)  # after myst-nb's
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _build_slides)
    app.connect("build-finished", _write_index)
