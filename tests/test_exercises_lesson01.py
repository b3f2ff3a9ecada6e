"""Lesson 01's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint specific to the mistake), and never a crash on odd input."""
import nbformat
import numpy as np
import pytest
import torch

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from project import ROOT
from lesson_checks import lesson01
from solutions import solution

CHECKS = [lesson01.exercise_1, lesson01.exercise_2, lesson01.exercise_3]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42j, True, 3, object(), {"a": 1}, {1, 2}, [[1, 2], [3]],
              lambda: None, torch.tensor([True, False]), torch.tensor([1j, 2j]),
              torch.ones(2, 3)]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, sample_answers=[
        None, "self", [[1.0]], 3, torch.rand(4, 4), {"w", "loss"},
        [("SplitBackward0", 2), ("SplitBackward0", 0)]])


# Both editions show the exercises' code as the checkers run it: it has no comments, so
# the Korean lesson shows the very same text under its Korean headings.
LESSON = "01_backward_and_the_graph.ipynb"
EDITIONS = {"en": (ROOT / "notebooks" / LESSON, "### Exercise"),
            "ko": (ROOT / "notebooks" / "ko" / LESSON, "### 연습 문제")}


def exercise_markdown(edition):
    path, heading = EDITIONS[edition]
    notebook = nbformat.read(path, 4)
    return "\n".join(c.source for c in notebook.cells
                     if c.cell_type == "markdown" and heading in c.source)


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_notebook_shows_the_code_the_checkers_run(edition):
    shown = exercise_markdown(edition)
    assert lesson01.EXERCISE_2_CODE in shown
    assert lesson01.EXERCISE_3_CODE in shown


# Exercise 1: y = a.exp() saves its output, `result`, not its input.

def test_exercise_1_reads_a_real_node():
    assert lesson01._saved_by_exp() == [solution("01", 1)]


@pytest.mark.parametrize("answer", [solution("01", 1), "result", " Result ", "'result'", "_saved_result"])
def test_exercise_1_right(answer):
    assert is_correct(lesson01.exercise_1(answer))


@pytest.mark.parametrize("answer", ["self", "other", "exponent", "", "y", "ExpBackward0"])
def test_exercise_1_wrong(answer):
    assert is_not_yet(lesson01.exercise_1(answer))


def test_exercise_1_hints_are_specific():
    assert is_not_yet(lesson01.exercise_1("self"), "derivative of exp")
    assert is_not_yet(lesson01.exercise_1("other"), "single input")
    assert is_not_yet(lesson01.exercise_1(torch.ones(1)), "not a tensor")


# Exercise 2: y = last * first, both chunks of x: (SplitBackward0, 2), (SplitBackward0, 0).

RIGHT_PAIRS = solution("01", 2)  # the lesson's worked solution: [("SplitBackward0", 2), ...]


def test_exercise_2_expected_comes_from_autograd():
    assert lesson01._exercise_2_expected() == RIGHT_PAIRS


def test_exercise_2_accepts_what_names_prints():
    namespace = {"torch": torch}
    exec(lesson01.EXERCISE_2_CODE, namespace)
    assert is_correct(lesson01.exercise_2(lesson01._named_pairs(namespace["y"].grad_fn)))


@pytest.mark.parametrize("answer", [
    RIGHT_PAIRS,
    tuple(RIGHT_PAIRS),
    [["SplitBackward0", 2], ["SplitBackward0", 0]],
    [(" splitbackward0 ", 2), ("SPLITBACKWARD0", 0)],
    [("SplitBackward0", np.int64(2)), ("SplitBackward0", 0)],
])
def test_exercise_2_right(answer):
    assert is_correct(lesson01.exercise_2(answer))


@pytest.mark.parametrize("answer, words", [
    ([("SplitBackward0", 0), ("SplitBackward0", 2)], ["which input comes first"]),
    ([("SplitBackward0", 0), ("SplitBackward0", 0)], ["not an input number"]),
    ([("SplitBackward0", 3), ("SplitBackward0", 1)], ["numbered from 0"]),
    ([("SplitBackward0", 2), ("SplitBackward0", 1)], ["counted from 0"]),
    ([("SplitBackward0", 1), ("SplitBackward0", 0)], ["counted from 0"]),
    ([("SplitBackward0", 2)], ["one pair per input", "yours has 1"]),
    ([("SplitBackward0", 2), ("SplitBackward0", 0), (None, 0)], ["yours has 3"]),
    ([("AccumulateGrad", 0), ("AccumulateGrad", 0)], ["AccumulateGrad", "not leaves"]),
    ([("torch::autograd::AccumulateGrad", 2), ("SplitBackward0", 0)], ["AccumulateGrad"]),
    ([("SplitBackward0", 2), (None, 0)], ["needs no gradient"]),
    ([("MulBackward0", 2), ("MulBackward0", 0)], ["MulBackward0 itself"]),
    ([("ChunkBackward0", 2), ("ChunkBackward0", 0)], ["section 3"]),
    ([("SliceBackward0", 0), ("SliceBackward0", 0)], ["section 3"]),
])
def test_exercise_2_wrong_answers_get_their_own_hint(answer, words):
    verdict = lesson01.exercise_2(answer)
    assert is_not_yet(verdict, *words), verdict


def test_exercise_2_hints_never_give_the_numbers_away():
    for answer in ([("SplitBackward0", 0), ("SplitBackward0", 0)],
                   [("SplitBackward0", 0), ("SplitBackward0", 2)],
                   [("ChunkBackward0", 2), ("ChunkBackward0", 0)]):
        message = lesson01.exercise_2(answer).message
        assert "SplitBackward0" not in message and "2" not in message, message


@pytest.mark.parametrize("answer, words", [
    ("SplitBackward0", ["list of (node name, number) pairs"]),
    ([("SplitBackward0", 2, 0)], ["two parts"]),
    ([("SplitBackward0", "2"), ("SplitBackward0", 0)], ["whole number"]),
    ([("SplitBackward0", 2.0), ("SplitBackward0", 0)], ["whole number"]),
    ([("SplitBackward0", True), ("SplitBackward0", 0)], ["whole number"]),
    ([(3, 2), ("SplitBackward0", 0)], ["a string"]),
])
def test_exercise_2_answers_of_the_wrong_shape_get_a_hint(answer, words):
    assert is_not_yet(lesson01.exercise_2(answer), *words)


def test_exercise_2_node_objects_are_not_names():
    namespace = {"torch": torch}
    exec(lesson01.EXERCISE_2_CODE, namespace)
    raw = namespace["y"].grad_fn.next_functions  # pairs of (Node, int)
    assert is_not_yet(lesson01.exercise_2(raw), "not the node object")


# Exercise 3: after the code, w, u (zeros) and h (retain_grad) have a .grad.

RIGHT_NAMES = solution("01", 3)


def test_exercise_3_truth_comes_from_the_tensors():
    assert lesson01._with_grad() == RIGHT_NAMES


def test_exercise_3_has_a_hint_for_every_name():
    truth = lesson01._with_grad()
    assert set(lesson01.why_grad()) == truth
    assert set(lesson01.why_no_grad()) == set(lesson01.TENSOR_NAMES) - truth


@pytest.mark.parametrize("answer", [
    RIGHT_NAMES, ["h", "u", "w"], ("W", "U", " h "), frozenset({"w", "u", "h"}),
    ["w", "u", "h", "w"],
])
def test_exercise_3_right(answer):
    assert is_correct(lesson01.exercise_3(answer))


@pytest.mark.parametrize("answer, words", [
    ({"w", "u", "h", "x"}, ["x was computed", "require grad"]),
    ({"w", "u", "h", "g"}, ["g.retain_grad() came after"]),
    ({"w", "u", "h", "loss"}, ["loss is not a leaf"]),
    ({"w", "h"}, ["0 * u.sum()"]),
    ({"u", "h"}, ["w is a leaf"]),
    ({"w", "u"}, ["h is not a leaf", "before loss.backward()"]),
    (set(), ["w is a leaf"]),
    ({"w", "u", "h", "z"}, ["unknown name(s) z"]),
])
def test_exercise_3_wrong_answers_get_their_own_hint(answer, words):
    verdict = lesson01.exercise_3(answer)
    assert is_not_yet(verdict, *words), verdict


def test_exercise_3_hint_is_about_the_first_mistake_only():
    message = lesson01.exercise_3({"x", "loss"}).message  # two wrong, three missing
    assert "x was computed" in message
    assert "loss" not in message and "u.sum" not in message


def test_exercise_3_tensors_are_not_names():
    w = torch.ones(3, requires_grad=True)
    assert is_not_yet(lesson01.exercise_3({w}), "names", "as strings")
    assert is_not_yet(lesson01.exercise_3("w, u, h"), "set of names")


def test_checkers_leave_the_rng_and_autograd_alone():
    with global_rng_left_alone(), autograd_left_alone():
        lesson01.exercise_1(solution("01", 1))
        lesson01.exercise_2(RIGHT_PAIRS)
        lesson01.exercise_3(RIGHT_NAMES)
