"""The teacher's guides stay true to the lessons they plan.

There is one guide per edition: docs/guide.md plans the English lessons (notebooks/),
docs/guide.ko.md the Korean ones (notebooks/ko/); every test here runs on both.
Every cell a guide cites, as a link `[§N › "first words"](../notebooks/NN_name.ipynb#section)`
(`../notebooks/ko/NN_name.ipynb#section` in Korean), must exist: the lesson, in the guide's
own edition, a heading of it whose anchor is `#section` (as the site's pages name them),
and, in that section, a line of a cell that starts with the quoted words (backticks and
bold marks aside). So a lesson edited under the guide fails here, and the guide is
updated with it. Each lesson's part also keeps its shape: objectives, a plan of exactly
50 minutes with predictions and a discussion, three misconceptions, each with its cell,
and discussion questions.
"""
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Edition:
    """A guide, the folder of the lessons it plans, and the words that mark its parts."""
    language: str
    guide: Path
    lessons_folder: Path
    objectives: str   # how each part's objectives start
    predict: str      # the plan's marks for a prediction and a discussion
    discuss: str
    misconceptions: str
    discussion: str

    @property
    def lessons(self):
        return sorted(self.lessons_folder.glob("[0-9][0-9]_*.ipynb"))


ENGLISH = Edition("en", ROOT / "docs" / "guide.md", ROOT / "notebooks",
                  "**Students will be able to**", "▶ predict", "◆ discuss",
                  "**Misconceptions**", "**Discussion**")
KOREAN = Edition("ko", ROOT / "docs" / "guide.ko.md", ROOT / "notebooks" / "ko",
                 "**이 강의를 마치면 학생들은**", "▶ 예측", "◆ 토론",
                 "**오개념**", "**토론**")
EDITIONS = [ENGLISH, KOREAN]

REFERENCE = re.compile(r"\[([^\]]*)\]\((\.\./notebooks/([^)#\s]+\.ipynb))(?:#([^)\s]+))?\)")
QUOTED = re.compile(r'"([^"]+)"')
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


def slugify(title: str) -> str:
    """The anchor myst gives a heading (myst_heading_anchors in docs/conf.py)."""
    from myst_parser.mdit_to_docutils.base import default_slugify

    return default_slugify(plain(title))


def plain(text: str) -> str:
    """Text as read: no backticks, no bold or italic marks, no link targets; spaces squashed."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "").replace("**", "")
    return re.sub(r"\s+", " ", text).strip()


def sections(path: Path):
    """{anchor: [(cell index, text from one line of the cell to the cell's end)]}.

    A section runs from its heading to the next heading of the same or a higher level;
    anchors repeated in a lesson get -1, -2 as myst gives them.
    """
    notebook = nbformat.read(path, as_version=4)
    found, open_sections, seen = {}, [], {}
    for index, cell in enumerate(notebook.cells):
        lines = cell.source.splitlines()
        for number, line in enumerate(lines):
            heading = HEADING.match(line) if cell.cell_type == "markdown" else None
            if heading:
                level, slug = len(heading[1]), slugify(heading[2])
                if slug in seen:
                    seen[slug] += 1
                    slug = f"{slug}-{seen[slug]}"
                else:
                    seen[slug] = 0
                open_sections = [(lvl, s) for lvl, s in open_sections if lvl < level] + [(level, slug)]
                found[slug] = []
                continue
            rest = re.sub(r"^\s*(?:[-*+]|\d+\.|>)\s+", "", "\n".join(lines[number:]))
            for _, slug in open_sections:
                found[slug].append((index, plain(rest)))
    return found


def guide_parts(edition=ENGLISH):
    text = edition.guide.read_text(encoding="utf-8")
    pieces = re.split(r'<a id="lesson-(\d\d)"></a>', text)
    return dict(zip(pieces[1::2], pieces[2::2]))


def references(edition=ENGLISH):
    found = []
    for number, part in guide_parts(edition).items():
        for match in REFERENCE.finditer(part):
            found.append((number, match[1], match[3], match[4]))
    return found


def prefix(edition):
    """Test ids: the English tests keep the names they had; the Korean ones start "ko-"."""
    return "" if edition is ENGLISH else f"{edition.language}-"


@pytest.mark.parametrize("edition", EDITIONS, ids=lambda edition: edition.language)
def test_every_lesson_has_its_part(edition):
    assert sorted(guide_parts(edition)) == [lesson.name[:2] for lesson in edition.lessons]


CITED, CITED_IDS = [], []
for _edition in EDITIONS:
    for _index, (_number, _text, _notebook, _anchor) in enumerate(references(_edition)):
        CITED.append((_edition, _number, _text, _notebook, _anchor))
        CITED_IDS.append(f"{prefix(_edition)}{_number}-{_anchor or 'lesson'}-{_index}")


@pytest.mark.parametrize("edition, number, text, notebook, anchor", CITED, ids=CITED_IDS)
def test_cited_cell_exists(edition, number, text, notebook, anchor):
    path = ROOT / "notebooks" / notebook
    name = edition.guide.name
    assert path.is_file(), f"{name}'s part {number} cites {notebook}, which is not a lesson"
    assert path.parent == edition.lessons_folder, (
        f"{name}'s part {number} cites {notebook}, a lesson of another edition "
        f"(its lessons are in {edition.lessons_folder.relative_to(ROOT)}/)")
    assert path.name.startswith(number), f"{name}'s part {number} cites another lesson, {notebook}"
    if anchor is None:
        return
    found = sections(path)
    assert anchor in found, (f"{notebook} has no heading with the anchor #{anchor}; "
                             f"its anchors: {sorted(found)}")
    for words in QUOTED.findall(text):
        wanted = plain(words)
        assert any(rest.startswith(wanted) for _, rest in found[anchor]), (
            f"no cell of {notebook}#{anchor} has a line starting with {wanted!r}")


PARTS = [(edition, number) for edition in EDITIONS for number in sorted(guide_parts(edition))]


@pytest.mark.parametrize("edition, number", PARTS,
                         ids=[f"{prefix(edition)}{number}" for edition, number in PARTS])
def test_part_has_the_shape_of_a_lesson_plan(edition, number):
    part = guide_parts(edition)[number]
    lesson = next(lesson for lesson in edition.lessons if lesson.name.startswith(number))
    assert edition.objectives in part
    assert f"../slides/{lesson.stem}.html" in part, "no link to the lesson's slides"

    rows = re.findall(r"^\| (\d+)–(\d+) \| (.*) \|$", part, re.M)
    assert rows, "no plan (rows `| start–end | part |`)"
    assert rows[0][0] == "0" and rows[-1][1] == "50", "the plan does not fill 0 to 50 minutes"
    assert all(a[1] == b[0] for a, b in zip(rows, rows[1:])), "the plan's minutes leave a gap"
    assert all(int(start) < int(end) for start, end, _ in rows)
    plan = " ".join(row[2] for row in rows)
    assert edition.predict in plan and edition.discuss in plan

    misconceptions = part.split(edition.misconceptions)[1].split(edition.discussion)[0]
    items = re.findall(r"^\d+\. \*", misconceptions, re.M)
    assert len(items) == 3, "three misconceptions"
    assert len(REFERENCE.findall(misconceptions)) == 3, "each misconception cites its cell"

    questions = re.findall(r"^- \*(.+?)\*", part.split(edition.discussion)[1], re.M)
    assert len(questions) >= 2 and all(q.endswith("?") for q in questions)


@pytest.mark.parametrize("edition", EDITIONS, ids=lambda edition: edition.language)
def test_guide_is_concise(edition):
    # Korean joins a particle to its word, but code spans and numbers keep a Korean part
    # at about nine tenths of the English one's words: the same bounds hold.
    for number, part in guide_parts(edition).items():
        words = len(re.sub(r"\]\([^)]*\)", "]", part).split())
        assert 200 <= words <= 450, (f"{edition.guide.name}, part {number}: {words} words "
                                     f"(about 250 to 400 wanted)")
