"""The Korean edition (notebooks/ko/) is the English series, in step, in Korean.

- every English lesson has a Korean one, with the same cells and the same code (only
  comments and string texts differ), synced since the English last changed
  (tools/korean_edition.py, which also brings a lesson back in step);
- its outputs equal the English ones wherever they are not Korean text;
- it is Korean where a reader reads: its markdown, its verdicts, its structure, in the
  glossary's terms (notebooks/ko/GLOSSARY.md), each shown with its English at first use.
"""
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import nbformat
import pytest

from project import KOREAN_NOTEBOOKS, NOTEBOOKS, ROOT

sys.path.insert(0, str(ROOT))
from tools.korean_edition import english_of, sync_problems  # noqa: E402
from tools.run_notebooks import coalesce_streams  # noqa: E402

GLOSSARY = ROOT / "notebooks" / "ko" / "GLOSSARY.md"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# A number as a reader reads it: 3, -0.5, 1,234, 2.1e-05 (not the 0 of ExpBackward0).
NUMBER = re.compile(r"(?<![A-Za-z_\d.])[-+]?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:e[-+]?\d+)?")
STATED_TIME = {"en": re.compile(r"\*\*Time:\*\*\s+about\s+(\d+)\s+minutes"),
               "ko": re.compile(r"\*\*시간:\*\*\s+(?:핵심 부분은\s+)?약\s+(\d+)분")}
STATED_EXERCISE_TIME = {"en": re.compile(r"about\s+(\d+)\s+(?:minutes\s+)?for\s+the\s+\w+\s+exercises"),
                        "ko": re.compile(r"연습 문제[^.\n]*?약\s+(\d+)분")}
IDS = [path.name for path in KOREAN_NOTEBOOKS]


@pytest.fixture(params=KOREAN_NOTEBOOKS, ids=IDS)
def pair(request):
    """(English notebook, Korean notebook, Korean path) for one lesson."""
    korean = request.param
    return (nbformat.read(english_of(korean), as_version=4),
            nbformat.read(korean, as_version=4), korean)


def test_every_english_lesson_has_its_korean_lesson():
    assert [p.name for p in KOREAN_NOTEBOOKS] == [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("korean", KOREAN_NOTEBOOKS, ids=IDS)
def test_in_step_with_the_english(korean):
    problems = sync_problems(korean)
    assert not problems, "\n".join(problems)


# Outputs -------------------------------------------------------------------------------

def output_text(output):
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return f"{output.ename}: {output.evalue}"
    data = output.get("data", {})
    for kind in ("text/plain", "image/svg+xml", "text/html", "text/markdown"):
        if kind in data:
            return data[kind]
    return None  # an image/png: its pixels hold the fonts, not compared


def line_differences(english, korean):
    """Lines of one output that differ beyond Korean text: a line without Hangul must be
    the same; a line with Hangul must hold the same numbers."""
    en_lines, ko_lines = english.splitlines(), korean.splitlines()
    if len(en_lines) != len(ko_lines):
        return [f"{len(en_lines)} lines in English, {len(ko_lines)} in Korean"]
    problems = []
    for en, ko in zip(en_lines, ko_lines):
        if HANGUL.search(ko):
            if Counter(NUMBER.findall(en)) != Counter(NUMBER.findall(ko)):
                problems.append(f"numbers differ: {en!r} / {ko!r}")
        elif en != ko:
            problems.append(f"{en!r} / {ko!r}")
    return problems


def test_outputs_equal_the_english_where_not_korean_text(pair):
    english, korean, _ = pair
    coalesce_streams(english)  # a print cut in two pieces by the kernel is one output
    coalesce_streams(korean)
    problems = []
    for index, (en, ko) in enumerate(zip(english.cells, korean.cells)):
        if en.cell_type != "code" or "nbval-ignore-output" in en.metadata.get("tags", []):
            continue
        en_kinds = [(o.output_type, sorted(o.get("data", {}))) for o in en.outputs]
        ko_kinds = [(o.output_type, sorted(o.get("data", {}))) for o in ko.outputs]
        if en_kinds != ko_kinds:
            problems.append(f"cell {index}: outputs {en_kinds} in English, {ko_kinds} in Korean")
            continue
        for en_output, ko_output in zip(en.outputs, ko.outputs):
            en_text, ko_text = output_text(en_output), output_text(ko_output)
            if en_text is not None:
                problems += [f"cell {index}: {p}" for p in line_differences(en_text, ko_text)]
    assert not problems, "\n".join(problems[:20])


def test_the_verdicts_are_korean(pair):
    """Each check cell's stored verdict is in Korean: set_language("ko") took effect."""
    _, korean, _ = pair
    checks = [c for c in korean.cells
              if c.cell_type == "code" and re.search(r"\bexercise_\d+\(", c.source)]
    assert checks
    for cell in checks:
        shown = "".join(output_text(o) or "" for o in cell.outputs)
        assert HANGUL.search(shown), f"a check cell shows no Korean: {shown[:80]!r}"


def test_the_set_up_cell_chooses_korean(pair):
    _, korean, _ = pair
    first = next(c for c in korean.cells if c.cell_type == "code")
    assert 'set_language("ko")' in first.source


# What the reader reads -----------------------------------------------------------------

def markdown(notebook):
    return "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")


def test_the_markdown_is_korean(pair):
    english, korean, _ = pair
    for index, (en, ko) in enumerate(zip(english.cells, korean.cells)):
        if en.cell_type == "markdown" and HANGUL.search(en.source) is None:
            prose = re.sub(r"`[^`]*`|\$[^$]*\$|\([^)]*\)", "", ko.source)
            if re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}\s+[A-Za-z]{3,}", en.source):
                assert HANGUL.search(prose), f"markdown cell {index} is not translated"


def test_the_worked_solutions_are_korean(pair):
    """The teacher edition's worked solutions explain in Korean: each comment of three
    or more English words is translated."""
    _, korean, _ = pair
    english_only = [line for cell in korean.cells for line in solution_lines(cell)
                    if "#" in line and not HANGUL.search(line.split("#", 1)[1])
                    and re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}\s+[A-Za-z]{3,}", line.split("#", 1)[1])]
    assert not english_only, english_only


SECTION = re.compile(r"^(#{1,6})\s+(\d+\.)?", re.MULTILINE)


def test_same_headings_and_section_numbers(pair):
    """Each heading at the same place, level and number ("## 3."): a reference such as
    "lesson 04, section 7" (explain's notes, the guide) means the same in both editions."""
    english, korean, _ = pair
    for index, (en, ko) in enumerate(zip(english.cells, korean.cells)):
        if en.cell_type == "markdown":
            assert SECTION.findall(ko.source) == SECTION.findall(en.source), f"cell {index}"


def test_states_the_same_time_as_the_english(pair):
    english, korean, _ = pair
    en = STATED_TIME["en"].search(markdown(english))
    ko = STATED_TIME["ko"].search(markdown(korean))
    assert ko, "no '**시간:** 약 N분' line"
    assert ko.group(1) == en.group(1)
    en, ko = (STATED_EXERCISE_TIME[lang].search(markdown(notebook))
              for lang, notebook in (("en", english), ("ko", korean)))
    assert en and ko, "no time for the exercises ('연습 문제 ... 약 N분')"
    assert ko.group(1) == en.group(1)


def glossary_rows():
    """(English, Korean, words not to use, gloss policy) for each row of the glossary's table.

    The policy (its "영어 병기" column) says where the English follows the term:
    "강의마다" at its first use in every lesson, "01강에서만" in lesson 01 only, "안 함" never.
    """
    rows = []
    for line in GLOSSARY.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) in (4, 5) and HANGUL.search(cells[1]) and cells[0] != "영어":
            avoid = [word.strip() for word in cells[3].split(",") if word.strip()]
            policy = cells[4] if len(cells) == 5 else "강의마다"
            rows.append((cells[0], cells[1], avoid, policy))
    return rows


def solution_lines(cell) -> list:
    """The worked solution's lines (the teacher edition shows them; metadata classroom.solution)."""
    solution = cell.get("metadata", {}).get("classroom", {}).get("solution", [])
    return solution.splitlines() if isinstance(solution, str) else list(solution)


def korean_texts():
    """(name, text) of everything in the Korean edition a reader reads."""
    texts = []
    for path in KOREAN_NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        comments = [line for c in notebook.cells if c.cell_type == "code"
                    for line in c.source.splitlines() + solution_lines(c) if "#" in line]
        texts.append((path.name, markdown(notebook) + "\n" + "\n".join(comments)))
    for path in (ROOT / "README.ko.md", ROOT / "docs" / "guide.ko.md"):
        if path.exists():
            texts.append((path.name, path.read_text()))
    return texts


def test_the_glossary_has_terms():
    assert len(glossary_rows()) >= 30


def bridges_the_seed_word(line: str) -> bool:
    """Lesson 01's one line that says the seed's 기울기 is the series' 변화도."""
    return "기울기" in line and "변화도" in line and "원글" in line


def test_no_word_the_glossary_rules_out():
    found = [(name, word) for name, text in korean_texts()
             for _, _, avoid, _ in glossary_rows() for word in avoid
             for line in text.splitlines()
             if word in line and not (name.startswith("01_") and bridges_the_seed_word(line))]
    assert not found, f"use the glossary's term instead of: {found}"


# Words of the lesson's frame (its headings) and everyday words ("출력합니다": prints).
NOT_TERMS = {"exercise", "Going further", "worked solution", "output"}


def first_use_terms(lesson_01: bool):
    """Translated glossary terms of one Korean word or phrase that this lesson glosses; a
    row of paired terms ("train mode / eval mode", "학습 모드 / 평가 모드") gives each pair."""
    glossed_here = {"강의마다", "01강에서만"} if lesson_01 else {"강의마다"}
    terms = []
    for english, korean, _, policy in glossary_rows():
        if policy not in glossed_here or english in NOT_TERMS:
            continue
        pairs = list(zip(english.split(" / "), korean.split(" / ")))
        if len(english.split(" / ")) != len(korean.split(" / ")):
            pairs = [(english, korean)]
        terms += [(en, ko) for en, ko in pairs
                  if HANGUL.search(ko) and not re.search(r"[(),/`]", ko)
                  and not re.search(r"[()/,]", en)]
    return terms


def test_first_use_of_a_term_shows_the_english(pair):
    _, korean, path = pair
    # prose only: a heading names a term, the text introduces it
    text = "\n".join(line for line in markdown(korean).splitlines() if not line.startswith("#"))
    text = re.sub(r"\s+", " ", text)  # a term may wrap onto the next line
    missing = []
    for english, term in first_use_terms(path.name.startswith("01_")):
        at = text.find(term)
        if at < 0:
            continue
        after = text[at + len(term):at + len(term) + 60]
        # 변화도(gradient), or the longer term it starts: 변화도 누적(gradient accumulation)
        shown = re.match(r"[^()]{0,12}\(([^)]*)\)", after)
        if not shown or english.split()[-1].lower() not in shown.group(1).lower():
            missing.append(f"{term}({english})")
    assert not missing, f"{path.name}: first use without the English: {missing}"


# Around the lessons -----------------------------------------------------------------

def test_the_readmes_link_each_other_and_the_korean_lessons():
    english, korean = (ROOT / "README.md").read_text(), (ROOT / "README.ko.md").read_text()
    assert "](README.ko.md)" in english and "](README.md)" in korean
    linked = set(re.findall(r"\]\(notebooks/ko/([0-9]{2}_\w+\.ipynb)\)", korean))
    assert linked == {path.name for path in KOREAN_NOTEBOOKS}


def test_make_lab_ko_opens_the_korean_lesson_01():
    run = subprocess.run(["make", "-n", "--no-print-directory", "lab-ko"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "jupyter lab" in run.stdout
    assert "notebooks/ko/01_backward_and_the_graph.ipynb" in run.stdout.splitlines()[-1]


def test_korean_plots_find_every_glyph():
    """A plot with Hangul, drawn in notebooks/ko (whose matplotlibrc the lessons' kernels
    read): matplotlib's "Glyph ... missing" warning is an error here, so a machine without
    the Korean font (make setup installs it) fails."""
    draw = ("import matplotlib; matplotlib.use('agg'); import matplotlib.pyplot as plt\n"
            "figure, axes = plt.subplots(); axes.set_title('변화도 누적: 저장된 텐서')\n"
            "axes.set_xlabel('역전파 단계'); figure.canvas.draw()\n"
            "from matplotlib.font_manager import FontProperties, findfont\n"
            "print(findfont(FontProperties(family=['sans-serif'])))")
    # matplotlib's own font list, as the lessons' kernels read it (make setup remakes it
    # when it was made before the font came: tools/korean_font.py)
    run = subprocess.run([sys.executable, "-W", "error", "-c", draw], cwd=ROOT / "notebooks" / "ko",
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "NotoSansCJK" in run.stdout, run.stdout
    assert "findfont" not in run.stderr, run.stderr


# The same plot from a folder without a matplotlibrc (Colab, a copied notebook): the
# Korean lessons' set-up cell, set_language("ko"), gives matplotlib the Hangul font.
# matplotlib's own defaults stand in for any matplotlibrc of the user's (MATPLOTLIBRC).
DRAW_ANYWHERE = """
import sys, warnings
import matplotlib; matplotlib.use("agg"); import matplotlib.pyplot as plt
import lesson_checks
if sys.argv[1] == "ko":
    lesson_checks.set_language("ko")
warnings.simplefilter("error")
figure, axes = plt.subplots(); axes.set_title("메모리"); axes.set_xlabel("역전파 단계")
figure.savefig("plot.png")
"""


def draw_anywhere(tmp_path, language):
    import matplotlib

    assert not (tmp_path / "matplotlibrc").exists()
    env = {**os.environ, "MATPLOTLIBRC": str(Path(matplotlib.get_data_path()) / "matplotlibrc")}
    return subprocess.run([sys.executable, "-c", DRAW_ANYWHERE, language], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)


def test_set_language_ko_gives_plots_the_korean_font_in_any_folder(tmp_path):
    run = draw_anywhere(tmp_path, "ko")
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "plot.png").stat().st_size > 0


def test_without_set_language_ko_the_plot_lacks_hangul(tmp_path):
    """The test above can fail: in that folder, matplotlib's default font has no Hangul."""
    run = draw_anywhere(tmp_path, "en")
    assert run.returncode != 0
    assert re.search(r"Glyph \d+ .* missing from font", run.stderr), run.stderr[-2000:]


def test_the_korean_fonts_are_the_matplotlibrc_ones():
    """One list: lesson_checks.language.KOREAN_RC, which notebooks/ko/matplotlibrc (read by
    tools/korean_font.py) repeats."""
    from lesson_checks.language import KOREAN_FONTS, KOREAN_RC
    from tools.korean_font import wanted

    rc = dict(re.findall(r"^([\w.-]+):\s*(.+)$",
                         (ROOT / "notebooks" / "ko" / "matplotlibrc").read_text(), re.M))
    assert {key: [name.strip() for name in value.split(",")] for key, value in rc.items()} \
        == KOREAN_RC
    assert wanted() == list(KOREAN_FONTS)


def test_set_language_en_puts_the_fonts_back():
    import matplotlib

    from lesson_checks.language import KOREAN_RC, set_language
    before = {key: matplotlib.rcParams[key] for key in KOREAN_RC}
    try:
        set_language("ko")  # (make setup installs the font: this machine has it)
        assert {key: matplotlib.rcParams[key] for key in KOREAN_RC} == KOREAN_RC
    finally:
        set_language("en")
    assert {key: matplotlib.rcParams[key] for key in KOREAN_RC} == before


@pytest.fixture
def font_list_without_korean(monkeypatch):
    """matplotlib's font list as a cache made before the Korean font was installed."""
    import importlib

    from matplotlib import font_manager

    language_module = importlib.import_module("lesson_checks.language")
    monkeypatch.setattr(font_manager.fontManager, "ttflist",
                        [font for font in font_manager.fontManager.ttflist
                         if font.name not in language_module.KOREAN_FONTS])
    monkeypatch.setattr(language_module, "_warned", False)
    yield font_manager
    language_module.set_language("en")


def test_set_language_ko_finds_a_font_installed_after_the_cache(font_list_without_korean):
    import warnings

    from lesson_checks.language import KOREAN_FONTS, set_language
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        set_language("ko")
    names = {font.name for font in font_list_without_korean.fontManager.ttflist}
    assert names & set(KOREAN_FONTS)


def test_set_language_ko_without_a_korean_font_warns_once(font_list_without_korean, monkeypatch):
    import matplotlib

    from lesson_checks.language import KOREAN_RC, set_language
    monkeypatch.setattr(font_list_without_korean, "findSystemFonts", lambda *args, **kw: [])
    before = {key: matplotlib.rcParams[key] for key in KOREAN_RC}
    with pytest.warns(UserWarning, match="fonts-noto-cjk") as warned:
        set_language("ko")
        set_language("en")
        set_language("ko")
    assert len(warned) == 1 and "Colab" in str(warned[0].message), warned
    assert {key: matplotlib.rcParams[key] for key in KOREAN_RC} == before  # left alone


def test_set_language_refuses_an_unknown_language():
    from lesson_checks import language, set_language
    with pytest.raises(ValueError, match="one of \\('en', 'ko'\\); got 'kr'"):
        set_language("kr")
    assert language() == "en"


def unrendered_emphasis(source):
    """Bold or italic marks a Markdown renderer leaves as text: CommonMark does not close
    `**` between punctuation and a letter, as in **약한 참조(weak reference)**로."""
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(source)
    html = re.sub(r"<code>.*?</code>|<pre>.*?</pre>", "", html, flags=re.S)
    return re.findall(r".{0,30}(?:\*\*|__).{0,30}", html)


def test_bold_and_italic_render(pair):
    _, korean, _ = pair
    problems = [f"cell {index}: {found}" for index, cell in enumerate(korean.cells)
                if cell.cell_type == "markdown"
                and (found := unrendered_emphasis(cell.source))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", ["README.ko.md", "docs/guide.ko.md", "notebooks/ko/GLOSSARY.md"])
def test_bold_and_italic_render_in_the_korean_pages(name):
    assert not unrendered_emphasis((ROOT / name).read_text())


def test_the_emphasis_check_can_fail():
    assert unrendered_emphasis("**약한 참조(weak reference)**로 바꿉니다")
    assert not unrendered_emphasis("**약한 참조**(weak reference)로 바꿉니다")
