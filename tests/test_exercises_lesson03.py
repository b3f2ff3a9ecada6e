"""Lesson 03's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint that fits the mistake), and no crash on odd input."""
import numpy as np
import pytest
import torch
from torch.nn import functional as F

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from lesson_checks import lesson03
from lesson_checks.lesson03 import exercise_1, exercise_2, exercise_3
from solutions import solution

CHECKS = [exercise_1, exercise_2, exercise_3]
ODD_INPUTS = ["6, -3", 3.5, {"a": 1}, object(), b"AB"]
SAMPLE_ANSWERS = [torch.eye(3), torch.tensor([6.0, -3.0]), {"A", "Z"}, "A",
                  [float("nan"), 1.0], lambda *args: None]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, SAMPLE_ANSWERS)


# Exercise 1: w.grad after three backward() calls ---------------------------

@pytest.mark.parametrize("answer", [solution("03", 1), [6.0, -3.0], (6, -3), torch.tensor([6.0, -3.0]),
                                    np.array([6.0, -3.0]), torch.tensor([[6.0, -3.0]])])
def test_exercise_1_correct(answer):
    assert is_correct(exercise_1(answer))


def test_exercise_1_right_answer_is_what_running_the_calls_leaves():
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    (w ** 2).sum().backward()
    (3 * w).sum().backward()
    (w ** 2).mean().backward()
    assert is_correct(exercise_1(w.grad))
    assert not is_correct(exercise_1(w.grad + 0.01))


@pytest.mark.parametrize("answer, hint", [
    ([2.0, -4.0], "call 1's gradient alone"),
    ([3.0, 3.0], "call 2's gradient alone"),
    ([1.0, -2.0], "call 3's gradient alone"),
    ([2.0, -1.0], "average"),
    ([4.0, 1.0], "call 1's gradient is missing"),
    ([3.0, -6.0], "call 2's gradient is missing"),
    ([5.0, -1.0], "call 3's gradient is missing"),
    ([7.0, -5.0], "mean over w's 2 elements"),
    ([0.0, 0.0], "on its own"),
])
def test_exercise_1_wrong(answer, hint):
    verdict = exercise_1(answer)
    assert is_not_yet(verdict, hint)
    assert "6.0" not in verdict.message and "-3.0" not in verdict.message  # no giveaway


@pytest.mark.parametrize("answer", ["6, -3", 6.0, [6.0], [6.0, -3.0, 0.0], {"a": 1},
                                    [float("nan"), 1.0], [[6.0], [-3.0, 1.0]], object(),
                                    [True, False]])
def test_exercise_1_odd_input(answer):
    assert is_not_yet(exercise_1(answer), "two numbers")


# Exercise 2: which layers keep the micro-batch equality --------------------

def test_exercise_2_the_key_comes_from_running_pytorch():
    assert [lesson03.keeps_the_equality(label) for label in "ABCD"] == [True, True, False, False]


@pytest.mark.parametrize("answer", [solution("03", 2), ["b", "a"], ("A", "B"), frozenset("AB")])
def test_exercise_2_correct(answer):
    assert is_correct(exercise_2(answer))


@pytest.mark.parametrize("answer, hint", [
    ({"B"}, "look again at A"),
    (set(), "look again at A"),
    ({"A"}, "look again at B"),
    ({"A", "B", "C"}, "look again at C"),
    ({"A", "B", "D"}, "look again at D"),
    ({"A", "C", "D"}, "look again at B"),
    ({"C", "D"}, "look again at A"),
])
def test_exercise_2_wrong(answer, hint):
    verdict = exercise_2(answer)
    assert is_not_yet(verdict, hint)
    others = set("ABCD") - {hint[-1]}
    assert not any(f"at {label}" in verdict.message for label in others)  # one label only


@pytest.mark.parametrize("answer, hint", [
    ("AB", "set of labels"),
    ({"A": True}, "set of labels"),
    ([1, 2], "set of labels"),
    ({"A", "E"}, "unknown label(s) E"),
])
def test_exercise_2_odd_input(answer, hint):
    assert is_not_yet(exercise_2(answer), hint)


# Exercise 3: accumulation over micro-batches of unequal sizes --------------

def share_of(X_micro, X):
    return len(X_micro) / len(X)


accumulate_right = solution("03", 3)  # the lesson's worked solution


def accumulate_with_sums(model, X, y, n_micro):
    for p in model.parameters():
        p.grad = None
    for X_micro, y_micro in zip(X.tensor_split(n_micro), y.tensor_split(n_micro)):
        (F.mse_loss(model(X_micro), y_micro, reduction="sum") / len(X)).backward()


def accumulate_with_autograd_grad(model, X, y, n_micro):
    params = list(model.parameters())
    totals = [torch.zeros_like(p) for p in params]
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        loss = F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)
        totals = [t + g for t, g in zip(totals, torch.autograd.grad(loss, params))]
    for p, total in zip(params, totals):
        p.grad = total


def accumulate_sums_then_divide(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        F.mse_loss(model(X_micro), y_micro, reduction="sum").backward()
    for p in model.parameters():
        p.grad /= len(X)  # one factor for every micro-batch: still what backward() computed


def accumulate_sums_then_divide_without_zeroing(model, X, y, n_micro):
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        F.mse_loss(model(X_micro), y_micro, reduction="sum").backward()
    for p in model.parameters():
        p.grad /= len(X)  # divides the stale gradients too, they stay in


def accumulate_equal_weights(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) / n_micro).backward()


def accumulate_unscaled(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        F.mse_loss(model(X_micro), y_micro).backward()


def accumulate_sum_loss(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        F.mse_loss(model(X_micro), y_micro, reduction="sum").backward()


def accumulate_without_zeroing(model, X, y, n_micro):
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)).backward()


def accumulate_equal_weights_without_zeroing(model, X, y, n_micro):
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) / n_micro).backward()


def accumulate_zeroing_inside_the_loop(model, X, y, n_micro):
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        model.zero_grad()
        (F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)).backward()


def accumulate_whole_batch(model, X, y, n_micro):
    model.zero_grad()
    F.mse_loss(model(X), y).backward()


def accumulate_whole_batch_then_empty_forwards(model, X, y, n_micro):
    accumulate_whole_batch(model, X, y, n_micro)
    for _ in range(n_micro - 1):
        model(X[:0])


def accumulate_one_backward_for_all(model, X, y, n_micro):
    model.zero_grad()
    sum(F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)
        for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro))).backward()


def accumulate_gradient_by_hand(model, X, y, n_micro):
    # the forwards are there, but the gradient is written in, not backpropagated
    for X_micro in X.chunk(n_micro):
        model(X_micro)
    error = 2 * (X @ model.weight.T + model.bias - y) / len(X)
    model.weight.grad = (error.T @ X).detach()
    model.bias.grad = error.sum(0).detach()


def accumulate_fake_backwards(model, X, y, n_micro):
    accumulate_gradient_by_hand(model, X, y, n_micro)
    for _ in range(n_micro):
        torch.zeros(1, requires_grad=True).sum().backward()


def accumulate_backwards_of_nothing_then_gradient_by_hand(model, X, y, n_micro):
    # one forward and one backward per micro-batch, each reaching the weight, but what
    # they computed is thrown away and a hand-written gradient put in its place
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) * 1e-3).backward()
    error = 2 * (X @ model.weight.T + model.bias - y) / len(X)
    model.weight.grad = (error.T @ X).detach()
    model.bias.grad = error.sum(0).detach()


def accumulate_then_zero_the_gradient(model, X, y, n_micro):
    # the right calls, then .grad emptied: zeros are 0 times what backward computed,
    # not what it computed
    accumulate_right(model, X, y, n_micro)
    for p in model.parameters():
        p.grad.zero_()


def accumulate_fixed_four(model, X, y, n_micro):
    accumulate_right(model, X, y, 4)


def accumulate_forgets_backward(model, X, y, n_micro):
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        F.mse_loss(model(X_micro), y_micro)


def accumulate_crashes(model, X, y, n_micro):
    raise ValueError("not written yet")


@pytest.mark.parametrize("answer", [accumulate_right, accumulate_with_sums,
                                    accumulate_with_autograd_grad, accumulate_sums_then_divide])
def test_exercise_3_correct(answer):
    assert is_correct(exercise_3(answer))


@pytest.mark.parametrize("answer, hint", [
    (accumulate_equal_weights, "counts 1/4, but they hold [13, 13, 13, 11] samples"),
    (accumulate_unscaled, "4 micro-batch means add up"),
    (accumulate_sum_loss, "50 times the full batch's"),
    (accumulate_without_zeroing, "held before your function ran"),
    (accumulate_equal_weights_without_zeroing, "held before your function ran"),
    (accumulate_sums_then_divide_without_zeroing, "held before your function ran"),
    (accumulate_zeroing_inside_the_loop, "only the last micro-batch's gradient"),
    (accumulate_whole_batch, "the model saw 1, of sizes [50]"),
    (accumulate_whole_batch_then_empty_forwards, "of sizes [50, 0, 0, 0]"),
    (accumulate_one_backward_for_all, "counted 1 backward call(s)"),
    (accumulate_gradient_by_hand, "counted 0 backward call(s)"),
    (accumulate_fake_backwards, "0 reaching the weight"),
    (accumulate_backwards_of_nothing_then_gradient_by_hand, "not what your backward() calls"),
    (accumulate_then_zero_the_gradient, "not what your backward() calls"),
    (accumulate_fixed_four, "with n_micro=3"),
    (accumulate_forgets_backward, "counted 0 backward call(s)"),
    (accumulate_crashes, "raised ValueError: not written yet"),
    ([0.25, 0.25, 0.25, 0.25], "should be a function"),
])
def test_exercise_3_wrong(answer, hint):
    assert is_not_yet(exercise_3(answer), hint)


def test_exercise_3_the_equal_weight_mistake_is_caught_for_every_size_tried():
    # with sizes that differ, 1/n_micro is not each micro-batch's share: never "correct"
    for n_micro in lesson03.N_MICRO_TRIED:
        assert lesson03.N_SAMPLES_3 % n_micro != 0


def test_checkers_leave_the_global_random_state_alone():
    def accumulate_drawing_random_numbers(model, X, y, n_micro):
        torch.rand(3)  # the reader's code may draw: the checker seeds around it
        accumulate_right(model, X, y, n_micro)

    with global_rng_left_alone():
        exercise_1(solution("03", 1))
        exercise_2(solution("03", 2))
        exercise_3(accumulate_right)
        exercise_3(accumulate_drawing_random_numbers)


def test_exercise_3_leaves_autograd_alone_even_when_the_answer_raises():
    with autograd_left_alone():
        exercise_3(accumulate_right)
        exercise_3(accumulate_crashes)
