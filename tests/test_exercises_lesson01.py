"""Lesson 01's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint), and never a crash on odd input."""
import numpy as np
import pytest
import torch

from checks import every_checker_tests, global_rng_left_alone, is_correct, is_not_yet
from lesson_checks import lesson01

CHECKS = [lesson01.exercise_1, lesson01.exercise_2, lesson01.exercise_3]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42j, True, object(), {"a": 1}, {1, 2}, [[1, 2], [3]],
              lambda: None, torch.tensor([True, False]), torch.tensor([1j, 2j])]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, sample_answers=[None, "self", [[1.0]], 3])


# Exercise 1: y = a.exp() saves its output, `result`, not its input.

def test_exercise_1_reads_a_real_node():
    assert lesson01._saved_by_exp() == ["result"]


@pytest.mark.parametrize("answer", ["result", " Result ", "'result'", "_saved_result"])
def test_exercise_1_right(answer):
    assert is_correct(lesson01.exercise_1(answer))


@pytest.mark.parametrize("answer", ["self", "other", "exponent", "", "y", "ExpBackward0"])
def test_exercise_1_wrong(answer):
    assert is_not_yet(lesson01.exercise_1(answer))


def test_exercise_1_hints_are_specific():
    assert "derivative of exp" in lesson01.exercise_1("self").message
    assert "single input" in lesson01.exercise_1("other").message
    assert "not a tensor" in lesson01.exercise_1(torch.ones(1)).message


# Exercise 2: x = [[1, 2, 3, 4]], x.grad after (x ** 3).mean().backward() is 3x²/4.

X = torch.tensor(lesson01.X_VALUES)


@pytest.mark.parametrize("answer", [
    torch.tensor([[0.75, 3.0, 6.75, 12.0]]),
    [[0.75, 3, 6.75, 12]],
    np.array([[0.75, 3.0, 6.75, 12.0]]),
    3 * X ** 2 / 4,
    (3 * X ** 2 / 4).double(),
    torch.tensor([[0.75, 3.0, 6.75, 12.0]], requires_grad=True),
])
def test_exercise_2_right(answer):
    assert is_correct(lesson01.exercise_2(answer))


@pytest.mark.parametrize("answer", [
    3 * X ** 2,                       # forgot mean's 1/4
    X ** 3 / 4,                       # the terms, not their derivatives
    X,
    torch.zeros(1, 4),
    torch.full((1, 4), float("nan")),
    [0.75, 3.0, 6.75, 12.0],          # right numbers, wrong shape
    torch.tensor(0.75),               # a scalar
    torch.ones(4, 4),
])
def test_exercise_2_wrong(answer):
    assert is_not_yet(lesson01.exercise_2(answer))


def test_exercise_2_hints_are_specific():
    assert "divides by" in lesson01.exercise_2(3 * X ** 2).message
    assert "second pair of brackets" in lesson01.exercise_2([0.75, 3.0, 6.75, 12.0]).message
    assert "(1, 4)" in lesson01.exercise_2(torch.tensor(0.75)).message


def test_exercise_2_expected_comes_from_autograd():
    assert torch.allclose(lesson01._exercise_2_expected(), 3 * X ** 2 / 4)


# Exercise 3: c.backward(gradient=full_like(c, 1/4)) leaves what d.backward() leaves.

@pytest.mark.parametrize("answer", [
    torch.full((1, 4), 0.25),
    torch.ones(1, 4) / 4,
    [[0.25, 0.25, 0.25, 0.25]],
    torch.full((1, 4), 0.25, dtype=torch.float64),
])
def test_exercise_3_right(answer):
    assert is_correct(lesson01.exercise_3(answer))


@pytest.mark.parametrize("answer", [
    torch.ones(1, 4),                 # that is e = c.sum()
    torch.full((1, 4), 4.0),
    torch.tensor(0.25),               # the seed's kind of mistake: wrong shape
    torch.tensor([1.0]),
    torch.full((4,), 0.25),
    torch.zeros(1, 4),
    [[1, 1, 1, 1]],
    torch.tensor([[0.25, 0.25, 0.25, 1.0]]),
])
def test_exercise_3_wrong(answer):
    assert is_not_yet(lesson01.exercise_3(answer))


def test_exercise_3_hints_are_specific():
    assert "c.sum()" in lesson01.exercise_3(torch.ones(1, 4)).message
    assert "c's shape" in lesson01.exercise_3(torch.tensor(0.25)).message


def test_checkers_leave_the_global_rng_alone():
    with global_rng_left_alone():
        lesson01.exercise_1("result")
        lesson01.exercise_2([[0.75, 3, 6.75, 12]])
        lesson01.exercise_3(torch.full((1, 4), 0.25))
