"""Lesson 02's checkers: unanswered for None, correct for a right answer, a hint of its
own for each kind of wrong answer, and never a crash or a multi-line verdict on odd input."""
import re

import nbformat
import pytest
import torch

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from project import ROOT
from lesson_checks import lesson02
from lesson_checks.language import set_language
from solutions import solution

NOTEBOOK = ROOT / "notebooks" / "02_retain_graph.ipynb"
# The Korean edition shows the same exercises, in Korean (notebooks/ko).
NOTEBOOKS = {"en": NOTEBOOK, "ko": ROOT / "notebooks" / "ko" / NOTEBOOK.name}
EXERCISE_HEADING = {"en": "### Exercise {}", "ko": "### 연습 문제 {}"}

CHECKS = [lesson02.exercise_1, lesson02.exercise_2, lesson02.exercise_3]
ODD_INPUTS = ["ACE", 42, 2.5, {"Z"}, [1, 2], [["A"]], {"A": 1}, torch.tensor([1.0, 2.0]),
              object()]
SAMPLE_ANSWERS = [None, {"A"}, {"A", "B", "C", "D", "E", "F"}, set(), "A",
                  torch.ones(2, 3), [torch.zeros(4)], lambda a: None, 3.5, object()]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, SAMPLE_ANSWERS)


def exercise_markdown(number, language="en"):
    notebook = nbformat.read(NOTEBOOKS[language], as_version=4)
    heading = EXERCISE_HEADING[language].format(number)
    return next(c.source for c in notebook.cells if c.cell_type == "markdown"
                and heading in c.source)


@pytest.fixture
def speaking():
    """set_language for one test; English again afterwards, whatever happened."""
    yield set_language
    set_language("en")


# Exercise 1: which expressions survive a second backward without retain_graph.

SURVIVORS = solution("02", 1)  # the lesson's worked solution


def test_exercise_1_survivors_come_from_running_pytorch():
    assert {label for label in lesson02.EXPRESSIONS
            if lesson02._survives_second_backward(label)} == SURVIVORS


@pytest.mark.parametrize("language", NOTEBOOKS)
def test_exercise_1_notebook_lists_what_the_checker_runs(language):
    listed = dict(re.findall(r"^- ([A-Z]): `(.+)`$", exercise_markdown(1, language),
                             re.MULTILINE))
    assert listed == lesson02.EXPRESSIONS


@pytest.mark.parametrize("answer", [SURVIVORS, ["a", "c", "e"], ("E", "C", "A"),
                                    frozenset(SURVIVORS)])
def test_exercise_1_right(answer):
    assert is_correct(lesson02.exercise_1(answer))


@pytest.mark.parametrize("extra, words", [
    ("B", ["B,", "DivBackward0", "`other`"]),
    ("F", ["F,", "MulBackward0", "`other`"]),
    # a.sin() saves the leaf a itself: alive, yet out of the node's reach
    ("D", ["D,", "SinBackward0", "`a` itself", "still alive", "dropped its reference",
           "second backward needs it"]),
])
def test_exercise_1_a_failing_expression_gets_its_own_hint(extra, words):
    verdict = lesson02.exercise_1(SURVIVORS | {extra})
    assert is_not_yet(verdict, *words)
    others = [text for label, text in lesson02.EXPRESSIONS.items() if label != extra]
    assert not any(text in verdict.message for text in others)  # gives nothing else away


@pytest.mark.parametrize("left_out, node", [("A", "SubBackward0"), ("C", "TBackward0"),
                                            ("E", "AddBackward0")])
def test_exercise_1_a_missed_survivor_gets_its_own_hint(left_out, node):
    verdict = lesson02.exercise_1(SURVIVORS - {left_out})
    assert is_not_yet(verdict, f"{left_out},", "survives too", node)
    others = [text for label, text in lesson02.EXPRESSIONS.items() if label != left_out]
    assert not any(text in verdict.message for text in others)


@pytest.mark.parametrize("answer", [set(lesson02.EXPRESSIONS), set(), {"A", "B"}])
def test_exercise_1_other_wrong_answers(answer):
    assert is_not_yet(lesson02.exercise_1(answer))


def test_exercise_1_unknown_label_is_named():
    assert is_not_yet(lesson02.exercise_1({"A", "Z"}), "Z")


# Exercise 2: which saved tensors are still alive after the four calls.

ALIVE = solution("02", 2)


def test_exercise_2_alive_comes_from_running_pytorch():
    assert lesson02._alive_after_calls() == ALIVE
    # each hint explains the state PyTorch produces, for its own label
    assert set(lesson02.ALIVE_BECAUSE) == ALIVE
    assert set(lesson02.GONE_BECAUSE) == set(lesson02.SAVED_2) - ALIVE


def test_exercise_2_checker_follows_pytorch_not_a_key(monkeypatch):
    # one more call, t.backward(), and D goes too: the verdict follows what PyTorch does
    monkeypatch.setattr(lesson02, "CALLS_2", lesson02.CALLS_2 + "\nt.backward()")
    assert lesson02._alive_after_calls() == {"B"}
    assert is_correct(lesson02.exercise_2({"B"}))
    assert is_not_yet(lesson02.exercise_2(ALIVE))


@pytest.mark.parametrize("language", NOTEBOOKS)
def test_exercise_2_notebook_shows_what_the_checker_runs(language, speaking):
    text = exercise_markdown(2, language)
    assert lesson02.SETUP_2 in text and lesson02.CALLS_2 in text
    speaking(language)  # each description in the notebook's language
    for label, (words, _) in lesson02.SAVED_2.items():
        assert f"- {label}: {words()}" in text


@pytest.mark.parametrize("answer", [ALIVE, ["d", "b"], ("B", "D")])
def test_exercise_2_right(answer):
    assert is_correct(lesson02.exercise_2(answer))


TENSOR_WORDS = {"A": "`h * 3`", "B": "`h`", "C": "`h * 5`", "D": "`h / 4`"}


@pytest.mark.parametrize("answer, label, words", [
    (ALIVE | {"A"}, "A", ["A is gone", "p.backward()", "nothing else held"]),
    (ALIVE | {"C"}, "C", ["C is gone", "retain_graph=True", "s.backward()"]),
    ({"D"}, "B", ["B is still alive", "a name you still hold"]),
    ({"B"}, "D", ["D is still alive", "no backward ran through"]),
])
def test_exercise_2_each_wrong_label_gets_its_own_hint(answer, label, words):
    verdict = lesson02.exercise_2(answer)
    assert is_not_yet(verdict, *words, TENSOR_WORDS[label])
    others = [w for other, w in TENSOR_WORDS.items() if other != label]
    assert not any(w in verdict.message for w in others)  # gives nothing else away


@pytest.mark.parametrize("answer, label", [(ALIVE | {"A"}, "A"), (ALIVE | {"C"}, "C"),
                                           ({"D"}, "B"), ({"B"}, "D")])
def test_exercise_2_korean_hints_name_the_same_tensor(answer, label, speaking):
    speaking("ko")
    verdict = lesson02.exercise_2(answer)
    assert is_not_yet(verdict, TENSOR_WORDS[label]) and "텐서" in verdict.message
    others = [w for other, w in TENSOR_WORDS.items() if other != label]
    assert not any(w in verdict.message for w in others)


@pytest.mark.parametrize("answer", [set(), {"A", "B", "C", "D"}, {"A", "C"}])
def test_exercise_2_other_wrong_answers(answer):
    assert is_not_yet(lesson02.exercise_2(answer))


# Exercise 3: one graph, one backward, a.grad = 5a, nothing by hand.

one_pass = solution("02", 3)  # the lesson's worked solution


def list_of_outputs(a):
    c = (a ** 2) * 2
    torch.autograd.backward([c.mean(), c.sum()])


def named_outputs(a):
    b = a ** 2
    c = b * 2
    d, e = c.mean(), c.sum()
    (d + e).backward()


@pytest.mark.parametrize("answer", [one_pass, list_of_outputs, named_outputs])
def test_exercise_3_right(answer):
    assert is_correct(lesson02.exercise_3(answer))


def with_retain(a):
    c = (a ** 2) * 2
    c.mean().backward(retain_graph=True)
    c.sum().backward()


def the_broken_snippet(a):
    c = (a ** 2) * 2
    c.mean().backward()
    c.sum().backward()


def graph_per_loss(a):  # builds the graph twice: two forward and two backward passes
    (a ** 2 * 2).mean().backward()
    (a ** 2 * 2).sum().backward()


def c_built_twice(a):  # one backward call, but through two copies of c
    ((a ** 2 * 2).mean() + (a ** 2 * 2).sum()).backward()


def adds_4a_by_hand(a):
    (a ** 2 * 2).mean().backward()
    a.grad += 4 * a.detach()


def seeds_4a_before(a):
    a.grad = 4 * a.detach()
    (a ** 2 * 2).mean().backward()


def hand_made_gradient(a):
    c = (a ** 2) * 2
    c.backward(torch.full_like(c, 1 / 4 + 1))


def hand_derived_loss(a):
    (2.5 * a ** 2).sum().backward()


def only_the_mean(a):  # forgets c.sum()
    c = (a ** 2) * 2
    c.mean().backward()


def five_times_the_mean(a):  # the right number, from a weight worked out by hand
    c = (a ** 2) * 2
    (5 * c.mean()).backward()


def sum_weighted_by_hand(a):
    c = (a ** 2) * 2
    (1.25 * c.sum()).backward()


def via_autograd_grad(a):
    c = (a ** 2) * 2
    a.grad = torch.autograd.grad(c.mean() + c.sum(), a)[0]


def writes_5a(a):
    a.grad = 5 * a.detach()


def on_a_copy(a):
    copy = a.detach().clone().requires_grad_()
    c = (copy ** 2) * 2
    (c.mean() + c.sum()).backward()


def another_c(a):
    c = (a ** 2) * 3
    (c.mean() + c.sum()).backward()


def does_nothing(a):
    pass


def raises(a):
    raise ValueError("not today")


@pytest.mark.parametrize("answer, words", [
    (with_retain, ["retain_graph=True"]),
    (the_broken_snippet, ["freed", "one backward"]),
    (graph_per_loss, ["2 backward passes"]),
    (c_built_twice, ["two different c's"]),
    (adds_4a_by_hand, ["changed after the backward call"]),
    (seeds_4a_before, ["already held something"]),
    (hand_made_gradient, ["worked out by hand"]),
    (hand_derived_loss, ["worked out by hand"]),
    (only_the_mean, ["from no c.sum()"]),
    (five_times_the_mean, ["from no c.sum()", "worked out by hand"]),
    (sum_weighted_by_hand, ["from no c.mean()", "worked out by hand"]),
    (via_autograd_grad, ["torch.autograd.grad"]),
    (writes_5a, ["no backward call", "by hand"]),
    (on_a_copy, ["did not reach `a`"]),
    (another_c, ["(a ** 2) * 2"]),
    (does_nothing, ["no backward call"]),
    (raises, ["ValueError", "not today"]),
    (lambda: None, ["TypeError"]),
    ("one_pass", ["expected a function", "a str"]),
])
def test_exercise_3_each_loophole_gets_its_own_hint(answer, words):
    assert is_not_yet(lesson02.exercise_3(answer), *words)


@pytest.mark.parametrize("answer", [one_pass, with_retain, the_broken_snippet, raises,
                                    via_autograd_grad, adds_4a_by_hand])
def test_exercise_3_restores_autograd(answer):
    with autograd_left_alone():
        lesson02.exercise_3(answer)


def test_checkers_leave_the_global_rng_alone():
    with global_rng_left_alone():
        lesson02.exercise_1(SURVIVORS)
        lesson02.exercise_2(ALIVE)
        lesson02.exercise_3(one_pass)
