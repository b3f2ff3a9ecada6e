"""The exam items (docs/exam.md, docs/exam.ko.md) say what their code really does.

Each item is a `### NN.k` heading, a question, one ```python block and, after the
answer, one ```text block: what the code prints, and, if it raises, a last line
"ErrorType: message" (a line ending in "…" stands for a message that goes on). Every
item's code runs here, on the pinned PyTorch, and must print exactly its text block.
Both languages hold the same items with the same code and the same outputs.
"""
import contextlib
import io
import re
from pathlib import Path

import pytest
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
EXAMS = {"en": ROOT / "docs" / "exam.md", "ko": ROOT / "docs" / "exam.ko.md"}
LESSONS = sorted(path.name[:2] for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ITEM = re.compile(r"^### (\d\d)\.(\d)\b", re.M)
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


def items(path: Path) -> dict[str, tuple[str, str]]:
    """{"01.1": (code, expected output)} for each item of an exam file."""
    text = path.read_text(encoding="utf-8")
    found = {}
    heads = list(ITEM.finditer(text))
    for head, after in zip(heads, heads[1:] + [None]):
        body = text[head.end():after.start() if after else len(text)]
        blocks = BLOCK.findall(body)
        assert [kind for kind, _ in blocks] == ["python", "text"], \
            f"{path.name} {head[0]}: needs one python block, then one text block"
        found[f"{head[1]}.{head[2]}"] = (blocks[0][1], blocks[1][1])
    return found


def run(code: str) -> str:
    """What the code prints, then "ErrorType: first line of the message" if it raises."""
    printed = io.StringIO()
    torch.manual_seed(0)
    with contextlib.redirect_stdout(printed):
        try:
            exec(compile(code, "<exam item>", "exec"), {"torch": torch, "nn": nn})
        except Exception as error:  # the item's answer is the error
            print(f"{type(error).__name__}: {str(error).splitlines()[0]}")
    return printed.getvalue()


def matches(printed: str, expected: str) -> bool:
    got, want = printed.splitlines(), expected.splitlines()
    return len(got) == len(want) and all(
        line.startswith(w[:-1]) if w.endswith("…") else line == w for line, w in zip(got, want))


ENGLISH = items(EXAMS["en"])


def test_three_items_for_every_lesson():
    numbers = sorted(ENGLISH)
    assert numbers == [f"{lesson}.{k}" for lesson in LESSONS for k in (1, 2, 3)]


def test_korean_items_are_the_same_items():
    korean = items(EXAMS["ko"])
    assert korean == ENGLISH, "the Korean exam must hold the same code and the same outputs"


@pytest.mark.parametrize("number", sorted(ENGLISH))
def test_item_prints_its_answer(number):
    code, expected = ENGLISH[number]
    printed = run(code)
    assert matches(printed, expected), f"item {number} prints:\n{printed}\nits answer says:\n{expected}"


def test_a_wrong_answer_is_caught():
    code, expected = ENGLISH["01.1"]
    assert matches(run(code), expected)
    assert not matches(run(code), expected.replace("7.", "6."))
    assert not matches(run("raise RuntimeError('other error')"),
                       "RuntimeError: Trying to backward…")
