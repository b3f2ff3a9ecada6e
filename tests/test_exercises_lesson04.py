"""Lesson 04's check cells: unanswered for None, correct for right answers, not yet (with a
hint) for wrong or odd ones, and never an exception. They run on the lesson's own
TwoHeadNet, taken from the notebook, as the check cells pass it in."""
import inspect
import itertools
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


WRONG_VERDICTS = [(label, given) for label, right in RIGHT_ERRORS.items()
                  for given in ("freed buffer", "version counter", "none") if given != right]


@pytest.mark.parametrize("label, given", WRONG_VERDICTS)
def test_exercise_1_hints_at_the_reasoning_without_naming_the_sequence(label, given):
    """One wrong verdict: the hint is about the reasoning; it names no sequence and gives no
    count."""
    verdict = exercise_1({**RIGHT_ERRORS, label: given}, TwoHeadNet)
    assert is_not_yet(verdict, "A hint: ")
    hint = verdict.message.split("A hint: ", 1)[1]
    assert not re.search(r"\b[ABCD]\b|\bof 4\b|\d+ right", hint), verdict.message


def every_exercise_1_answer():
    """Every dict of verdicts, right or wrong (3 ** 4 of them)."""
    verdicts = ("freed buffer", "version counter", "none")
    for choice in itertools.product(verdicts, repeat=len(RIGHT_ERRORS)):
        yield dict(zip(RIGHT_ERRORS, choice))


def test_exercise_1_toggling_verdicts_learns_nothing():
    """The loophole: change one verdict at a time and watch the hint. Every wrong answer gets
    the same message, so the hint tells neither which verdict is wrong nor what the right
    one is (before, all "none" drew a hint that said which error the first wrong sequence
    raises). Only the right answer is told apart."""
    messages = {}
    for answer in every_exercise_1_answer():
        verdict = exercise_1(answer, TwoHeadNet)
        if answer == {label: value.strip().lower() for label, value in RIGHT_ERRORS.items()}:
            assert is_correct(verdict)
        else:
            messages.setdefault(verdict.message, []).append(answer)
    assert len(messages) == 1, list(messages)
    assert len(next(iter(messages.values()))) == 3 ** 4 - 1


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
    assert is_not_yet(exercise_2({"B", "D"}, model_class), words)


def test_the_usage_hint_names_the_exercise_checked():
    assert is_not_yet(exercise_1(RIGHT_ERRORS, None), "exercise_1(answer, TwoHeadNet)")
    assert is_not_yet(exercise_2({"B", "D"}, None), "exercise_2(answer, TwoHeadNet)")


@pytest.fixture
def in_korean():
    """The checkers speak Korean for one test; English again afterwards, whatever happened."""
    set_language("ko")
    yield
    set_language("en")


def test_every_hint_exists_in_korean_too(in_korean):
    """The one hint of each exercise exists in Korean."""
    verdict = exercise_1({**RIGHT_ERRORS, "A": "none"}, TwoHeadNet)
    assert is_not_yet(verdict, "틀린 판정이 있습니다. 힌트: ")
    assert re.search("[가-힣]", verdict.message.split("힌트: ", 1)[1])
    verdict = exercise_2({"A"}, TwoHeadNet)
    assert is_not_yet(verdict, "이 조합은 아닙니다. 힌트: ")
    assert re.search("[가-힣]", verdict.message.split("힌트: ", 1)[1])


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


def test_the_checkers_copy_of_the_model_is_the_lessons():
    mine, theirs = lesson04._fresh(lesson04._LessonModel)[0], lesson04._fresh(TwoHeadNet)[0]
    assert [(name, p.shape) for name, p in mine.named_parameters()] == \
        [(name, p.shape) for name, p in theirs.named_parameters()]
    data = lesson04._data()
    for a, b in zip(lesson04._losses(mine, data), lesson04._losses(theirs, data)):
        assert torch.equal(a, b)


def test_exercise_1_runs_pytorch_rather_than_reading_a_key():
    """The right answers are what the sequences raise on the lesson's model, run here."""
    from lesson_checks.errors import error_raised_by

    for label, sequence in lesson04.SEQUENCES.items():
        model, optimizer = lesson04._fresh(TwoHeadNet)
        loss1, loss2 = lesson04._losses(model, lesson04._data())
        raised = error_raised_by(lambda: sequence(model, optimizer, loss1, loss2))
        assert raised == RIGHT_ERRORS[label].strip().lower()


def test_a_model_whose_trunk_saves_nothing_is_refused():
    """The loophole: on a trunk that saves no tensor, nothing is freed, so "none" everywhere
    (exercise 1) and the broken loop's change B (exercise 2) would pass."""
    assert is_correct(exercise_1(RIGHT_ERRORS, TwoHeadNet))
    everything_none = {label: "none" for label in RIGHT_ERRORS}
    for verdict in (exercise_1(everything_none, TwoHeadsOnABiasTrunk),
                    exercise_1(RIGHT_ERRORS, TwoHeadsOnABiasTrunk),
                    exercise_2({"B", "C", "E"}, TwoHeadsOnABiasTrunk),
                    exercise_2(RIGHT_FIXES, TwoHeadsOnABiasTrunk)):
        assert is_not_yet(verdict, "does not behave as the lesson's TwoHeadNet")


class WiderTwoHeadNet(nn.Module):
    """The lesson's model with another width: it runs, and behaves the same way."""

    def __new__(cls):
        return TwoHeadNet(hidden=16)


def test_a_model_that_behaves_the_same_is_accepted():
    assert is_correct(exercise_1(RIGHT_ERRORS, WiderTwoHeadNet))


# Exercise 2: which changes fix the broken loop -------------------------------------------

def test_the_loop_of_exercise_2_is_broken():
    error, _, _ = lesson04._train(TwoHeadNet, lesson04.the_broken_loop)
    assert error == FREED_BUFFER


RIGHT_FIXES = solution("04", 2)


@pytest.mark.parametrize("answer", [RIGHT_FIXES, ["D", "B"], ("b", " d "), frozenset("BD")])
def test_exercise_2_correct(answer):
    assert is_correct(exercise_2(answer, TwoHeadNet))


def test_each_wrong_change_makes_the_mistake_it_is_there_for():
    """A steps on loss2's gradients alone, C still raises, E takes two passes; B and D work."""
    assert lesson04._outcomes(TwoHeadNet) == {
        "A": lesson04.WRONG_UPDATE, "B": None, "C": lesson04.RAISES, "D": None,
        "E": lesson04.TWO_PASSES}
    assert lesson04._train(TwoHeadNet, lesson04.change_c)[0] == FREED_BUFFER


def every_subset(labels):
    return [set(chosen) for size in range(len(labels) + 1)
            for chosen in itertools.combinations(labels, size)]


def test_exercise_2_elimination_and_toggling_learn_nothing():
    """The loophole: try the changes one at a time, or add and drop one from a set, and
    read the hint. Before, the hint named the change ("A: it trains right, but ...") and
    said "not the only ones" of a right but short set. Now every wrong set but the empty
    one gets the same message, whichever changes it holds or misses."""
    messages = {}
    for answer in every_subset(lesson04.CHANGES):
        verdict = exercise_2(answer, TwoHeadNet)
        if answer == RIGHT_FIXES:
            assert is_correct(verdict)
        elif answer:
            messages.setdefault(verdict.message, []).append(answer)
    assert len(messages) == 1, list(messages)
    hint = next(iter(messages)).split("A hint: ", 1)[1]
    assert not re.search(r"\b[ABCDE]\b|\b\d", hint), hint


def test_exercise_2_the_empty_set_is_told_that_one_works():
    assert is_not_yet(exercise_2(set(), TwoHeadNet), "at least one of the changes works")


@pytest.mark.parametrize("answer, words", [
    ({"F"}, "unknown label(s) 'F'"), ("BD", "expected a set of labels"),
    ({"B": True}, "expected a set of labels"), ([3], "expected a set of labels"),
])
def test_exercise_2_odd_answers(answer, words):
    assert is_not_yet(exercise_2(answer, TwoHeadNet), words)


def test_exercise_2_judges_the_update_not_just_the_error():
    """A change that runs but steps on loss1 alone is not the loop's intent."""
    intended = lesson04._intended(TwoHeadNet)
    start = torch.nn.utils.parameters_to_vector(lesson04._fresh(TwoHeadNet)[0].parameters())
    outcome = lesson04._outcome(TwoHeadNet, lambda model, optimizer, loss1, loss2:
                                loss1.backward(), intended, start.detach())
    assert outcome == lesson04.WRONG_UPDATE


def code_cells(language):
    notebook = nbformat.read(NOTEBOOKS[language], as_version=4)
    return "\n".join(c.source for c in notebook.cells if c.cell_type == "code")


@pytest.mark.parametrize("language", NOTEBOOKS)
def test_exercise_2_s_changes_are_not_on_the_page(language):
    """Recall is not the exercise: no change is code the lesson's cells already run."""
    code = code_cells(language)
    for label, change in lesson04.CHANGES.items():
        assert "\n".join(body_lines(change)) not in code, label


# Both ------------------------------------------------------------------------------------

def test_the_checks_leave_the_readers_random_state_and_autograd_alone():
    with global_rng_left_alone(), autograd_left_alone():
        exercise_1(RIGHT_ERRORS, TwoHeadNet)
        exercise_2(RIGHT_FIXES, TwoHeadNet)
        exercise_2({"C"}, TwoHeadNet)  # raises inside the check


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


# Korean names of the errors ------------------------------------------------------------

KOREAN = {"freed buffer": ["해제된 버퍼 오류", "해제된 버퍼", "해제된버퍼"],
          "version counter": ["버전 오류", "버전 카운터", " 버전 카운터 오류 "],
          "none": ["없음", "오류 없음"]}


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("spelling", range(2))
def test_exercise_1_accepts_the_glossarys_korean_names(language, spelling):
    """The right answer given with the Korean names (용어집: 해제된 버퍼 오류, 버전 오류, 없음)
    is right in both languages' runs."""
    answer = {label: KOREAN[name][spelling] for label, name in RIGHT_ERRORS.items()}
    set_language(language)
    try:
        assert is_correct(exercise_1(answer, TwoHeadNet))
        mixed = {**RIGHT_ERRORS, "A": KOREAN[RIGHT_ERRORS["A"]][-1]}
        assert is_correct(exercise_1(mixed, TwoHeadNet))
    finally:
        set_language("en")


@pytest.mark.parametrize("language, hint", [("en", "A hint: "),
                                            ("ko", "틀린 판정이 있습니다. 힌트: ")])
def test_exercise_1_refuses_a_wrong_answer_in_korean(language, hint):
    wrong = next(name for name in KOREAN if name != RIGHT_ERRORS["A"])
    answer = {**{label: KOREAN[name][0] for label, name in RIGHT_ERRORS.items()},
              "A": KOREAN[wrong][0]}
    set_language(language)
    try:
        assert is_not_yet(exercise_1(answer, TwoHeadNet), hint)
        # a Korean word that names no error is no answer: the hint lists the names
        odd = exercise_1({**RIGHT_ERRORS, "A": "해제"}, TwoHeadNet)
        assert is_not_yet(odd, "'해제'", '"freed buffer"')
    finally:
        set_language("en")


ENGLISH = {"freed buffer": ["freed-buffer", "Freed buffer error", "freed-buffer error"],
           "version counter": ["version-counter", "version error", "Version-counter error"],
           "none": ["None", "no error", " none "]}


@pytest.mark.parametrize("spelling", range(3))
def test_exercise_1_accepts_the_names_as_the_lesson_writes_them(spelling):
    """"the freed-buffer error, the version-counter error, or none": hyphens, a trailing
    "error", "no error" all name the same three; a half name ("freed", "buffer error") does not."""
    answer = {label: ENGLISH[name][spelling] for label, name in RIGHT_ERRORS.items()}
    assert is_correct(exercise_1(answer, TwoHeadNet))
    for half in ("freed", "buffer error", "error"):
        assert is_not_yet(exercise_1({**RIGHT_ERRORS, "A": half}, TwoHeadNet), f"'{half}'")
