"""Lesson 04's check cells: unanswered for None, correct for right answers, not yet (with a
hint) for wrong or odd ones, and never an exception. They run on the lesson's own
TwoHeadNet, taken from the notebook, as the check cells pass it in."""
import inspect
import re
import textwrap
from functools import partial

import nbformat
import pytest
import torch
from torch import nn

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet, is_unanswered)
from lesson_checks import lesson04
from lesson_checks.errors import FREED_BUFFER
from lesson_checks.language import set_language
from lesson_checks.lesson04 import exercise_1, exercise_2
from solutions import solution
from test_multitask_gradients import LESSON, lesson_definition

TwoHeadNet = lesson_definition("TwoHeadNet")
# The Korean edition shows the same exercises, in Korean (notebooks/ko).
NOTEBOOKS = {"en": LESSON, "ko": LESSON.parent / "ko" / LESSON.name}
EXERCISE_MARK = {"en": "**Exercise {}.", "ko": "**연습 문제 {}."}

CHECKS = [partial(exercise_1, model_class=TwoHeadNet), partial(exercise_2, model_class=TwoHeadNet)]
ODD_INPUTS = [3, 0.5, "C", torch.tensor([1.0, 2.0]), object(), [None], {"A": 1}, print]
test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS,
                        sample_answers=[None, 7, torch.eye(3), {"A": "none"}, {"C"}, {"Z": "x"}])


# Exercise 1: which error each sequence raises --------------------------------------------

RIGHT_ERRORS = solution("04", 1)  # the lesson's worked solution


@pytest.mark.parametrize("answer", [
    RIGHT_ERRORS,
    {"a": "Freed buffer", "b": " none ", "c": "NONE", "d": "version counter"},
    dict(reversed(list(RIGHT_ERRORS.items()))),
])
def test_exercise_1_correct(answer):
    assert is_correct(exercise_1(answer, TwoHeadNet))


@pytest.mark.parametrize("label, given, words", [
    ("A", "none", "what did loss2.backward(), without retain_graph"),
    ("A", "version counter", "no version moves"),
    ("B", "freed buffer", "does optimizer.zero_grad() touch the graph"),
    ("B", "version counter", "does it change a parameter"),
    ("C", "freed buffer", "is the trunk between loss1 and the regression head's parameters"),
    ("C", "version counter", "updates no tensor"),
    ("D", "freed buffer", "what did optimizer.step() do"),
    ("D", "none", "does loss1's backward need any of them"),
])
def test_exercise_1_each_wrong_answer_gets_its_own_hint(label, given, words):
    verdict = exercise_1({**RIGHT_ERRORS, label: given}, TwoHeadNet)
    assert is_not_yet(verdict, "3 of 4 right", f"{label}: ", words)
    assert RIGHT_ERRORS[label] not in verdict.message.split(f"{label}: ", 1)[1]  # no giveaway


def test_exercise_1_names_the_first_wrong_sequence():
    verdict = exercise_1({"A": "none", "B": "none", "C": "freed buffer", "D": "none"}, TwoHeadNet)
    assert is_not_yet(verdict, "1 of 4 right", "A: ")


@pytest.mark.parametrize("answer, words", [
    ({"A": "freed buffer", "B": "none", "C": "none"}, "say what sequence D raises"),
    ({**RIGHT_ERRORS, "E": "none"}, "'E' is not a sequence"),
    ({**RIGHT_ERRORS, 1: "none"}, "1 is not a sequence"),
    ({**RIGHT_ERRORS, "B": "freed"}, "sequence B: 'freed' is not one of"),
    ({**RIGHT_ERRORS, "B": None}, "sequence B: None is not one of"),
    (list(RIGHT_ERRORS.values()), "expected a dict"),
    ("freed buffer", "expected a dict"),
])
def test_exercise_1_odd_answers(answer, words):
    assert is_not_yet(exercise_1(answer, TwoHeadNet), words)


class NotTheLessonsModel(nn.Module):
    def forward(self, x):
        return x


@pytest.mark.parametrize("model_class, words", [
    (None, "second argument"), (int, "second argument"), (TwoHeadNet(), "second argument"),
    (NotTheLessonsModel, "does not run as the lesson's TwoHeadNet"),
])
def test_exercise_1_and_2_without_the_lessons_model(model_class, words):
    assert is_not_yet(exercise_1(RIGHT_ERRORS, model_class), words)
    assert is_not_yet(exercise_2({"C", "E"}, model_class), words)


def test_the_usage_hint_names_the_exercise_checked():
    assert is_not_yet(exercise_1(RIGHT_ERRORS, None), "exercise_1(answer, TwoHeadNet)")
    assert is_not_yet(exercise_2({"C", "E"}, None), "exercise_2(answer, TwoHeadNet)")


@pytest.fixture
def in_korean():
    """The checkers speak Korean for one test; English again afterwards, whatever happened."""
    set_language("ko")
    yield
    set_language("en")


def test_each_wrong_answer_gets_its_own_hint_in_korean_too(in_korean):
    """Every hint of exercise 1 exists in Korean, and no two wrong answers share one."""
    hints = []
    for label, by_answer in lesson04.sequence_hints().items():
        for given in by_answer:
            verdict = exercise_1({**RIGHT_ERRORS, label: given}, TwoHeadNet)
            assert is_not_yet(verdict, "4개 중 3개 정답", f"순서 {label}: ")
            hints.append(verdict.message.split(f"{label}: ", 1)[1])
    assert len(set(hints)) == len(hints) == 8
    assert all(re.search("[가-힣]", hint) for hint in hints)


class BiasTrunk(nn.Module):
    """A trunk that saves no tensor: x + bias."""

    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(8))

    def forward(self, x):
        return x + self.bias


class TwoHeadsOnABiasTrunk(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = BiasTrunk()
        self.regression_head = nn.Linear(8, 1)
        self.classification_head = nn.Linear(8, 3)

    def forward(self, x):
        features = self.trunk(x)
        return self.regression_head(features).squeeze(-1), self.classification_head(features)


def test_exercise_1_runs_pytorch_rather_than_reading_a_key():
    """On a trunk that saves nothing, the second walk through it needs nothing freed."""
    assert is_not_yet(exercise_1(RIGHT_ERRORS, TwoHeadsOnABiasTrunk), "A: ")
    assert is_correct(exercise_1({"A": "none", "B": "none", "C": "none", "D": "none"},
                                 TwoHeadsOnABiasTrunk))


# Exercise 2: which changes fix the broken loop -------------------------------------------

def test_the_loop_of_exercise_2_is_broken():
    error, _, _ = lesson04._train(TwoHeadNet, lesson04.the_broken_loop)
    assert error == FREED_BUFFER


RIGHT_FIXES = solution("04", 2)


@pytest.mark.parametrize("answer", [RIGHT_FIXES, ["E", "C"], ("c", " e "), frozenset("CE")])
def test_exercise_2_correct(answer):
    assert is_correct(exercise_2(answer, TwoHeadNet))


@pytest.mark.parametrize("answer, words", [
    ({"A"}, "A: it trains right, but walks the trunk backward 2 times a step"),
    ({"A", "C", "E"}, "A: it trains right"),
    ({"B"}, "B: the loop still raises the freed buffer error"),
    ({"C", "D", "E"}, "D: it runs, but the parameters never move"),
    ({"C"}, "not the only ones"),
    ({"E"}, "not the only ones"),
    (set(), "at least one of the changes works"),
])
def test_exercise_2_wrong_answers(answer, words):
    assert is_not_yet(exercise_2(answer, TwoHeadNet), words)


@pytest.mark.parametrize("answer, words", [
    ({"F"}, "unknown label(s) F"), ("CE", "expected a set of labels"),
    ({"C": True}, "expected a set of labels"), ([3], "expected a set of labels"),
])
def test_exercise_2_odd_answers(answer, words):
    assert is_not_yet(exercise_2(answer, TwoHeadNet), words)


def test_exercise_2_judges_the_update_not_just_the_error():
    """A change that runs but steps on loss1 alone is not the loop's intent."""
    changes = {**lesson04.CHANGES, "F": lambda model, loss1, loss2: loss1.backward()}
    intended = lesson04._intended(TwoHeadNet)
    start = torch.nn.utils.parameters_to_vector(lesson04._fresh(TwoHeadNet)[0].parameters())
    outcome = lesson04._outcome(TwoHeadNet, changes["F"], intended, start.detach())
    assert outcome == "it runs, but its update is not one SGD step on loss1 + loss2"


# Both ------------------------------------------------------------------------------------

def test_the_checks_leave_the_readers_random_state_and_autograd_alone():
    with global_rng_left_alone(), autograd_left_alone():
        exercise_1(RIGHT_ERRORS, TwoHeadNet)
        exercise_2(RIGHT_FIXES, TwoHeadNet)
        exercise_2({"B"}, TwoHeadNet)  # raises inside the check


def body_lines(function):
    """The lines of a function's body, dedented: the code the exercise text shows."""
    source = textwrap.dedent(inspect.getsource(function))
    body = source.split(":\n", 1)[1]
    return [line for line in textwrap.dedent(body).splitlines() if line.strip()]


def exercise_text(number, language="en"):
    notebook = nbformat.read(NOTEBOOKS[language], as_version=4)
    mark = EXERCISE_MARK[language].format(number)
    return next(c.source for c in notebook.cells
                if c.cell_type == "markdown" and mark in c.source)


@pytest.mark.parametrize("language", NOTEBOOKS)
@pytest.mark.parametrize("number, snippets", [
    (1, lesson04.SEQUENCES), (2, lesson04.CHANGES)])
def test_the_notebook_shows_the_code_the_checker_runs(number, snippets, language):
    text = exercise_text(number, language)
    for label, function in snippets.items():
        block = "\n".join([f"# {label}"] + body_lines(function))
        assert block in text, \
            f"exercise {number}'s text no longer shows {label} as the check runs it"


@pytest.mark.parametrize("language", NOTEBOOKS)
def test_the_notebook_shows_the_broken_loop_the_checker_repairs(language):
    text = exercise_text(2, language)
    assert f"for step in range({lesson04.STEPS}):" in text
    for line in body_lines(lesson04.the_broken_loop):
        assert f"    {line}\n" in text
