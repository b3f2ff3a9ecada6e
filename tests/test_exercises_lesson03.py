"""Lesson 03's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint that fits the mistake), and no crash on odd input."""
import numpy as np
import pytest
import torch
from torch.nn import functional as F

from checks import global_rng_left_alone, is_correct, is_not_yet, is_unanswered
from lesson_checks.lesson03 import exercise_1, exercise_2, exercise_3


# Exercise 1: w.grad after three backward() calls ---------------------------

def test_exercise_1_unanswered():
    assert is_unanswered(exercise_1(None))


@pytest.mark.parametrize("answer", [[6.0, -3.0], (6, -3), torch.tensor([6.0, -3.0]),
                                    np.array([6.0, -3.0])])
def test_exercise_1_correct(answer):
    assert is_correct(exercise_1(answer))


def test_exercise_1_matches_running_the_calls():
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    (w ** 2).sum().backward()
    (3 * w).sum().backward()
    (w ** 2).mean().backward()
    assert is_correct(exercise_1(w.grad))


@pytest.mark.parametrize("answer, hint", [
    ([1.0, -2.0], "call 3 alone"),   # the last call only
    ([2.0, -4.0], "call 1 alone"),   # the first call only
    ([2.0, -1.0], "average"),        # averaged instead of added
    ([4.0, 1.0], "call 1 also"),     # forgot the first call
    ([0.0, 0.0], "add the three"),
])
def test_exercise_1_wrong(answer, hint):
    assert is_not_yet(exercise_1(answer), hint)


@pytest.mark.parametrize("answer", ["6, -3", 6.0, [6.0], [6.0, -3.0, 0.0], {"a": 1},
                                    [float("nan"), 1.0], [[6.0], [-3.0, 1.0]], object()])
def test_exercise_1_odd_input(answer):
    assert is_not_yet(exercise_1(answer), "two numbers")


# Exercise 2: weights for micro-batches of 8, 8, 16 and 32 ------------------

def test_exercise_2_unanswered():
    assert is_unanswered(exercise_2(None))


@pytest.mark.parametrize("answer", [
    [8 / 64, 8 / 64, 16 / 64, 32 / 64],
    [0.125, 0.125, 0.25, 0.5],
    torch.tensor([0.125, 0.125, 0.25, 0.5]),
    lambda size, total: size / total,
])
def test_exercise_2_correct(answer):
    assert is_correct(exercise_2(answer))


@pytest.mark.parametrize("answer, hint", [
    ([1.0, 1.0, 1.0, 1.0], "unscaled"),
    ([0.25, 0.25, 0.25, 0.25], "same size"),
    (lambda size, total: 1 / 4, "same size"),
    ([8.0, 8.0, 16.0, 32.0], "add up to 64"),
    ([0.5, 0.25, 0.125, 0.125], "What share"),
])
def test_exercise_2_wrong(answer, hint):
    assert is_not_yet(exercise_2(answer), hint)


@pytest.mark.parametrize("answer, hint", [
    ("size / total", "four numbers"),
    ([0.125, 0.25], "four numbers"),
    (3, "four numbers"),
    (lambda size: size / 64, "raised TypeError"),
    (lambda size, total: "a quarter", "one number per call"),
    (lambda size, total: 1 / 0, "raised ZeroDivisionError"),
])
def test_exercise_2_odd_input(answer, hint):
    assert is_not_yet(exercise_2(answer), hint)


# Exercise 3: a micro-batch accumulation function ---------------------------

def accumulate_right(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) / n_micro).backward()


def accumulate_unscaled(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        F.mse_loss(model(X_micro), y_micro).backward()


def accumulate_without_zeroing(model, X, y, n_micro):
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) / n_micro).backward()


def accumulate_whole_batch(model, X, y, n_micro):
    model.zero_grad()
    F.mse_loss(model(X), y).backward()


def accumulate_fixed_four(model, X, y, n_micro):
    accumulate_right(model, X, y, 4)


def accumulate_sum_loss(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        F.mse_loss(model(X_micro), y_micro, reduction="sum").backward()


def accumulate_forgets_backward(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        F.mse_loss(model(X_micro), y_micro)


def accumulate_split_by_size(model, X, y, n_micro):
    # X.split(n) cuts pieces of n samples, not n pieces
    model.zero_grad()
    for X_micro, y_micro in zip(X.split(n_micro), y.split(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) / n_micro).backward()


def accumulate_crashes(model, X, y, n_micro):
    raise ValueError("not written yet")


def test_exercise_3_unanswered():
    assert is_unanswered(exercise_3(None))


def test_exercise_3_correct():
    assert is_correct(exercise_3(accumulate_right))


def test_exercise_3_correct_with_tensor_split_and_autograd_grad():
    def accumulate(model, X, y, n_micro):
        for p in model.parameters():
            p.grad = None
        params = list(model.parameters())
        for X_micro, y_micro in zip(X.tensor_split(n_micro), y.tensor_split(n_micro)):
            grads = torch.autograd.grad(F.mse_loss(model(X_micro), y_micro) / n_micro, params)
            for p, g in zip(params, grads):
                p.grad = g if p.grad is None else p.grad + g
    assert is_correct(exercise_3(accumulate))


@pytest.mark.parametrize("answer, hint", [
    (accumulate_unscaled, "times the full batch's"),
    (accumulate_without_zeroing, "clear them first"),
    (accumulate_whole_batch, "forward passes"),
    (accumulate_fixed_four, "forward passes"),
    (accumulate_split_by_size, "saw 24 batches, of sizes [2, 2, 2, 2, 2, 2, ...]"),
    (accumulate_sum_loss, "differ from the full batch's"),
    (accumulate_forgets_backward, "is None"),
    (accumulate_crashes, "raised ValueError: not written yet"),
    ([0.25, 0.25, 0.25, 0.25], "should be a function"),
])
def test_exercise_3_wrong(answer, hint):
    assert is_not_yet(exercise_3(answer), hint)


def test_checkers_leave_the_global_random_state_alone():
    with global_rng_left_alone():
        exercise_2([0.125, 0.125, 0.25, 0.5])
        exercise_3(accumulate_right)
