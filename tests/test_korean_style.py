"""The Korean edition reads as Korean technical writing (notebooks/ko/GLOSSARY.md's rules).

What a rule can check, it checks here, on everything a Korean reader reads: the lessons'
prose and code comments, the README, the guide, the exam, and the Korean side of every
checker message (the second argument of `say(english, korean)` in course/lesson_checks):
- no colon joining two finished sentences ("…입니다: …");
- English in parentheses only after translated terms: the glossary's "영어 병기" column says
  which terms get it in every lesson, which only in lesson 01, and which never;
- the seed's word 기울기 bridged to 변화도 once, in lesson 01;
- one particle form after a node name: `MulBackward0`은 ("…백워드 영"), not `MulBackward0`는;
- the time line states minutes only.
Code comments count as prose, the worked solutions' (in the cells' metadata) too.
"""
import ast
import re
import sys

import nbformat
import pytest

from project import KOREAN_NOTEBOOKS, ROOT

sys.path.insert(0, str(ROOT / "tests"))
from test_korean_edition import (bridges_the_seed_word, glossary_rows, markdown,  # noqa: E402
                                 solution_lines)

CHECKERS = sorted((ROOT / "course" / "lesson_checks").glob("*.py"))
DOCUMENTS = [ROOT / "README.ko.md", ROOT / "docs" / "guide.ko.md", ROOT / "docs" / "exam.ko.md"]
IDS = [path.name for path in KOREAN_NOTEBOOKS]


def prose(text: str) -> str:
    """Text without code blocks, code spans, math and link targets: the sentences only."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "CODE", text)
    text = re.sub(r"\$[^$\n]*\$", "MATH", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def lesson_text(path) -> str:
    notebook = nbformat.read(path, as_version=4)
    comments = [line.split("#", 1)[1] for c in notebook.cells if c.cell_type == "code"
                for line in c.source.splitlines() + solution_lines(c) if "#" in line]
    return markdown(notebook) + "\n" + "\n".join(comments)


def korean_messages(path) -> list[str]:
    """The Korean side of each say(english, korean) in a checker module, as written."""
    source = path.read_text()
    messages = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "say"
                and len(node.args) == 2):
            messages.append(ast.get_source_segment(source, node.args[1]))
    return messages


def everything(as_prose=True):
    """(name, text) of every Korean text a reader reads; as prose, without code."""
    texts = [(path.name, lesson_text(path)) for path in KOREAN_NOTEBOOKS]
    texts += [(path.name, path.read_text()) for path in DOCUMENTS if path.exists()]
    texts += [(f"{path.name}: say()", "\n".join(korean_messages(path))) for path in CHECKERS]
    return [(name, prose(text) if as_prose else text) for name, text in texts]


FINISHED_THEN_COLON = re.compile(r"(?:니다|어요|에요|해요|세요|이다|한다)\s*:")


def colon_after_sentence(text: str) -> list[str]:
    return [text[max(0, m.start() - 30):m.end() + 20].replace("\n", " ")
            for m in FINISHED_THEN_COLON.finditer(text)]


@pytest.mark.parametrize("name,text", everything(), ids=[name for name, _ in everything()])
def test_no_colon_after_a_finished_sentence(name, text):
    found = colon_after_sentence(text)
    assert not found, f"{name}: end the sentence with a full stop instead: {found[:5]}"


def test_the_colon_rule_can_fail():
    assert colon_after_sentence("이것이 이유입니다: 그래프가 남습니다.")
    assert not colon_after_sentence("다음 세 가지입니다.\n- 하나: 설명")


def gloss_policy():
    """(English, Korean term, policy) for the glossary's terms of one plain word or phrase."""
    return [(english, korean, policy) for english, korean, _, policy in glossary_rows()
            if re.fullmatch(r"[가-힣 \-]+", korean)]


def glossed(text: str, term: str) -> list[str]:
    """Places where `term` is followed by English in parentheses: 노드(node); not where the
    term ends a longer glossary term (계층 in 공유 계층(trunk))."""
    longer = [other for _, other, _ in gloss_policy() if other != term and other.endswith(term)]
    found = []
    for m in re.finditer(re.escape(term) + r"\(([A-Za-z][^)]*)\)", text):
        if not any(text[max(0, m.start() - len(other) + len(term)):m.start() + len(term)] == other
                   for other in longer):
            found.append(m.group(1))
    return found


@pytest.mark.parametrize("path", KOREAN_NOTEBOOKS, ids=IDS)
def test_english_only_after_translated_terms(path):
    text = re.sub(r"\s+", " ", prose(lesson_text(path)))
    lesson_01 = path.name.startswith("01_")
    wrong = []
    for english, term, policy in gloss_policy():
        if policy == "안 함" or (policy == "01강에서만" and not lesson_01):
            wrong += [f"{term}({shown})" for shown in glossed(text, term)]
    assert not wrong, f"{path.name}: no English after a transliterated or basic term: {wrong}"


def test_the_glossary_says_how_each_term_is_glossed():
    policies = {policy for _, _, policy in gloss_policy()}
    assert policies == {"강의마다", "01강에서만", "안 함"}
    assert ("node", "노드", "안 함") in gloss_policy()


def test_no_gloss_inside_a_gloss():
    nested = re.compile(r"\([^()]*[가-힣]\([A-Za-z][^()]*\)[^()]*\)")
    found = [(name, m.group()) for name, text in everything() for m in nested.finditer(text)]
    assert not found, found


def test_lesson_01_bridges_the_seed_word():
    text = prose(lesson_text(KOREAN_NOTEBOOKS[0]))
    lines = [line for line in text.splitlines() if "기울기" in line]
    assert len(lines) == 1 and bridges_the_seed_word(lines[0]), lines


NODE_PARTICLE = re.compile(r"Backward\d`(는|가|를|와|로)(?![가-힣])")


def test_one_particle_form_after_a_node_name():
    """Read `…Backward0` as "…백워드 영": 은, 이, 을, 과, 으로."""
    found = [(name, m.group()) for name, text in everything(as_prose=False)
             for m in NODE_PARTICLE.finditer(text)]
    assert not found, found


def test_the_time_line_states_minutes_only():
    for path in KOREAN_NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        line = next(line for line in markdown(notebook).splitlines() if "**시간:**" in line)
        assert "단어" not in line and "영어" not in line, f"{path.name}: {line}"
