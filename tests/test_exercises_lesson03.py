"""Lesson 03's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint that fits the mistake), and no crash on odd input."""
import ast
import re

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from lesson_checks import lesson03, set_language
from lesson_checks.lesson03 import exercise_1, exercise_2, exercise_3
from solutions import solution

CHECKS = [exercise_1, exercise_2, exercise_3]
ODD_INPUTS = ["6, -3", 3.5, {"a": 1}, object(), b"AB"]
SAMPLE_ANSWERS = [torch.eye(3), torch.tensor([6.0, -3.0]), {"A", "Z"}, "A",
                  [float("nan"), 1.0], lambda *args: None]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, SAMPLE_ANSWERS)


# Exercise 1: w.grad after three backward() calls ---------------------------

RIGHT_1 = ([4.0, 1.0], [2.0, -4.0])  # (w.grad, g)


@pytest.mark.parametrize("answer", [solution("03", 1), RIGHT_1, [[4, 1], [2, -4]],
                                    torch.tensor(RIGHT_1), np.array(RIGHT_1),
                                    (torch.tensor([4.0, 1.0]), [2.0, -4.0]),
                                    (torch.tensor([4.0, 1.0]), torch.tensor([2.0, -4.0]))])
def test_exercise_1_correct(answer):
    assert is_correct(exercise_1(answer))


def test_exercise_1_right_answer_is_what_running_the_calls_leaves():
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    (w ** 2).sum().backward()
    g = w.grad
    w.grad = None
    (3 * w).sum().backward()
    (w ** 2).mean().backward()
    assert is_correct(exercise_1((w.grad, g)))
    assert not is_correct(exercise_1((w.grad + 0.01, g)))
    assert not is_correct(exercise_1((w.grad, g + 0.01)))


@pytest.mark.parametrize("answer, hints", [
    # w.grad's mistakes (g right)
    (([6.0, -3.0], [2.0, -4.0]), ["w.grad: call 1's gradient is in your answer"]),
    (([3.0, 3.0], [2.0, -4.0]), ["w.grad: that is the gradient of call 2, "]),
    (([1.0, -2.0], [2.0, -4.0]), ["w.grad: that is the gradient of call 3, "]),
    (([2.0, 0.5], [2.0, -4.0]), ["w.grad: that is the average"]),
    (([5.0, -1.0], [2.0, -4.0]), ["w.grad: call 3 takes a mean"]),
    (([0.0, 0.0], [2.0, -4.0]), ["w.grad: work out each call's gradient"]),
    # g's mistakes (w.grad right)
    (([4.0, 1.0], [4.0, 1.0]), ["g: g = w.grad gave a name"]),
    (([4.0, 1.0], [6.0, -3.0]), ["g: g = w.grad gave a name"]),
    (([4.0, 1.0], [0.0, 0.0]), ["g: w.grad = None changes what w.grad refers to"]),
    (([4.0, 1.0], [1.0, 1.0]), ["g: g is what w.grad held right after call 1"]),
    # both wrong: no zeroing in mind at all, both hints
    (([6.0, -3.0], [6.0, -3.0]), ["w.grad: call 1's gradient", "g: g = w.grad gave a name"]),
    # right values, wrong order
    (([2.0, -4.0], [4.0, 1.0]), ["other way round"]),
])
def test_exercise_1_wrong(answer, hints):
    verdict = exercise_1(answer)
    for hint in hints:
        assert is_not_yet(verdict, hint)
    for value in ("[4.0, 1.0]", "[2.0, -4.0]", "4.0, 1.0", "2.0, -4.0"):
        assert value not in verdict.message  # no giveaway


@pytest.mark.parametrize("language", ["en", "ko"])
def test_exercise_1_hints_in_both_languages(language):
    set_language(language)
    try:
        message = exercise_1(([6.0, -3.0], [6.0, -3.0])).message
    finally:
        set_language("en")
    assert ("이름을 붙였습니다" in message) == (language == "ko")


def test_exercise_1_korean_hint_says_the_answer_is_one_call_alone():
    set_language("ko")
    try:
        message = exercise_1(([3.0, 3.0], [2.0, -4.0])).message
    finally:
        set_language("en")
    assert "w.grad: 답한 값은 호출 2, 즉 (3 * w).sum()의 변화도 하나뿐입니다." in message


@pytest.mark.parametrize("language, joined", [
    ("en", "what .grad held? g: g = w.grad gave a name"),
    ("ko", "어떻게 했을까요? g: g = w.grad는"),
])
def test_exercise_1_both_wrong_joins_the_hints_as_sentences(language, joined):
    set_language(language)
    try:
        message = exercise_1(([6.0, -3.0], [6.0, -3.0])).message
        other = exercise_1(([5.0, -1.0], [1.0, 1.0])).message  # first hint ends without "?"
    finally:
        set_language("en")
    assert joined in message
    assert "?." not in message and "?;" not in message
    assert ". g: g" in other and "; g:" not in other


@pytest.mark.parametrize("answer", ["6, -3", 6.0, [6.0, -3.0], [4.0, 1.0, 2.0, -4.0], {"a": 1},
                                    ([float("nan"), 1.0], [2.0, -4.0]), [[6.0], [-3.0, 1.0]],
                                    object(), [[True, False], [True, True]]])
def test_exercise_1_odd_input(answer):
    assert is_not_yet(exercise_1(answer), "two lists of two numbers")


@pytest.mark.parametrize("answer, says", [
    (([4.0, 1.0], None), ["the second item is None; give g as two numbers",
                          "두 번째 항목이 None입니다. g를 수 두 개로 주세요"]),
    ((None, [2.0, -4.0]), ["the first item is None; give w.grad as two numbers",
                           "첫 번째 항목이 None입니다. w.grad를 수 두 개로 주세요"]),
    (([4.0, 1.0], "2, -4"), ["the second item is a str", "두 번째 항목은 str 객체입니다"]),
    (([6.0], [2.0, -4.0]), ["the first item has shape (1,)", "첫 번째 항목은 shape가 (1,)입니다"]),
])
def test_exercise_1_names_the_wrong_item(answer, says):
    for language, expected in zip(["en", "ko"], says):
        set_language(language)
        try:
            verdict = exercise_1(answer)
        finally:
            set_language("en")
        assert is_not_yet(verdict, expected)
        assert "got a tuple" not in verdict.message


# Exercise 2: which layers keep the micro-batch equality --------------------

def test_exercise_2_the_key_comes_from_running_pytorch():
    assert [lesson03.keeps_the_equality(label) for label in "ABCD"] == [True, True, False, False]


@pytest.mark.parametrize("answer", [solution("03", 2), ["b", "a"], ("A", "B"), frozenset("AB")])
def test_exercise_2_correct(answer):
    assert is_correct(exercise_2(answer))


WRONG_SETS_2 = [set(), {"A"}, {"B"}, {"C"}, {"D"}, {"A", "C"}, {"A", "D"}, {"B", "C"},
                {"C", "D"}, {"A", "B", "C"}, {"A", "B", "D"}, {"A", "C", "D"}, set("ABCD")]


@pytest.mark.parametrize("answer", WRONG_SETS_2)
def test_exercise_2_wrong_gets_the_reasoning(answer):
    assert is_not_yet(exercise_2(answer), "which mean and variance")


def test_exercise_2_hint_gives_no_label_away():
    # toggling labels must not reach the answer one verdict at a time: every wrong set
    # gets the same words, and they name no label
    messages = {exercise_2(answer).message for answer in WRONG_SETS_2}
    assert len(messages) == 1
    message = messages.pop()
    assert not any(f" {label}" in message or f'"{label}"' in message for label in "ABCD")


@pytest.mark.parametrize("answer, hint", [
    ("AB", "set of labels"),
    ({"A": True}, "set of labels"),
    ([1, 2], "set of labels"),
    ({"A", "E"}, "unknown label(s) 'E'"),
])
def test_exercise_2_odd_input(answer, hint):
    assert is_not_yet(exercise_2(answer), hint)


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("answer", [None, "AB", "A, B", {"A": True}, [1, 2], 3])
def test_exercise_2_example_in_a_message_is_not_the_key(answer, language):
    # a message's example set must not be the right answer, whatever the reader gave
    set_language(language)
    try:
        message = exercise_2(answer).message
    finally:
        set_language("en")
    examples = re.findall(r"\{[^{}]*\}", message)
    assert examples
    for example in examples:
        assert not is_correct(exercise_2(ast.literal_eval(example)))


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
    # the right gradient, but torch.autograd.grad returns it and .grad is written by hand:
    # the exercise is about backward() adding into .grad
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


def accumulate_every_graph_alive_at_once(model, X, y, n_micro):
    # the right forwards, backwards and gradients, but every micro-batch's forward runs
    # before any backward: all the graphs are in memory together, nothing saved
    model.zero_grad()
    losses = [F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)
              for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro))]
    for loss in losses:
        loss.backward()


def accumulate_retaining_every_graph(model, X, y, n_micro):
    # alternates forward and backward, but keeps each graph's saved tensors alive
    model.zero_grad()
    kept = []
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        loss = F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)
        loss.backward(retain_graph=True)
        kept.append(loss)


def accumulate_keeping_losses_after_backward(model, X, y, n_micro):
    # keeping the loss tensors is harmless once backward has freed their saved tensors
    model.zero_grad()
    kept = []
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        loss = F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)
        loss.backward()
        kept.append(loss)


def accumulate_forwards_micro_backwards_full(model, X, y, n_micro):
    # the reviewer's cheat: a forward per micro-batch, but each backward goes through a
    # graph of the full batch built from the model's parameters
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        model(X_micro)
        (F.mse_loss(F.linear(X, model.weight, model.bias), y) / n_micro).backward()


def accumulate_full_batch_through_a_transpose(model, X, y, n_micro):
    # the same cheat written so that no saved tensor has the full batch's rows first
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        model(X_micro)
        prediction = (model.weight @ X.T).T + model.bias
        (F.mse_loss(prediction, y) / n_micro).backward()


def accumulate_clearing_only_the_weight(model, X, y, n_micro):
    model.weight.grad = None  # the bias keeps its stale gradient
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)).backward()


def accumulate_clearing_only_the_bias(model, X, y, n_micro):
    model.bias.grad = None  # the weight keeps its stale gradient
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)).backward()


def accumulate_clearing_only_the_weight_equal_weights(model, X, y, n_micro):
    model.weight.grad = None
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) / n_micro).backward()


def accumulate_shuffled(model, X, y, n_micro):
    # micro-batches of shuffled samples are as good as consecutive ones
    model.zero_grad()
    order = torch.randperm(len(X))
    for index in order.tensor_split(n_micro):
        (F.mse_loss(model(X[index]), y[index]) * len(index) / len(X)).backward()


def accumulate_on_altered_inputs(model, X, y, n_micro):
    # forwards on something that is not the micro-batches, backwards through the full batch
    model.zero_grad()
    for X_micro in X.chunk(n_micro):
        model(X_micro * 1.001)
        (F.mse_loss(model.weight @ X.T + model.bias, y.T) / n_micro).backward()


def accumulate_then_subtract_the_stale_gradients(model, X, y, n_micro):
    # the right backward calls without clearing, then the stale gradients taken out by hand
    stale = [p.grad.clone() for p in model.parameters()]
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)).backward()
    for p, s in zip(model.parameters(), stale):
        p.grad -= s


def accumulate_then_subtract_only_the_bias_stale_gradient(model, X, y, n_micro):
    model.weight.grad = None
    stale = model.bias.grad.clone()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X)).backward()
    model.bias.grad -= stale


def accumulate_with_functional_linear(model, X, y, n_micro):
    # right otherwise, but the forward never calls model(...): the checker cannot see it,
    # and says that a forward counts only as a call to model(...)
    model.zero_grad()
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        prediction = F.linear(X_micro, model.weight, model.bias)
        (F.mse_loss(prediction, y_micro) * share_of(X_micro, X)).backward()


def accumulate_gradient_by_hand_then_tiny_backwards(model, X, y, n_micro):
    # the full batch's gradient written into .grad first, then one backward per
    # micro-batch whose loss is scaled so small that it barely changes .grad
    with torch.no_grad():
        error = 2 * (X @ model.weight.T + model.bias - y) / len(X)
        model.weight.grad = error.T @ X
        model.bias.grad = error.sum(0)
    for X_micro, y_micro in zip(X.chunk(n_micro), y.chunk(n_micro)):
        (F.mse_loss(model(X_micro), y_micro) * share_of(X_micro, X) * 1e-9).backward()


def accumulate_crashes(model, X, y, n_micro):
    raise ValueError("not written yet")


@pytest.mark.parametrize("answer", [accumulate_right, accumulate_with_sums,
                                    accumulate_sums_then_divide, accumulate_shuffled,
                                    accumulate_keeping_losses_after_backward])
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
    (accumulate_whole_batch, "model(...) was called 1 time(s), on inputs of sizes [50]"),
    (accumulate_whole_batch_then_empty_forwards, "of sizes [50, 0, 0, 0]"),
    (accumulate_one_backward_for_all, "torch.autograd.grad): 1, of which 1 reached"),
    (accumulate_gradient_by_hand, "torch.autograd.grad): 0, of which 0 reached"),
    (accumulate_fake_backwards, "of which 0 reached model.weight"),
    (accumulate_backwards_of_nothing_then_gradient_by_hand, "not what your backward() calls"),
    (accumulate_then_zero_the_gradient, "not what your backward() calls"),
    (accumulate_gradient_by_hand_then_tiny_backwards, "not what your backward() calls"),
    (accumulate_fixed_four, "with n_micro=3"),
    (accumulate_forgets_backward, "torch.autograd.grad): 0, of which 0 reached"),
    (accumulate_crashes, "raised ValueError: not written yet"),
    (accumulate_with_functional_linear, "a forward pass counts only as a call to model(...)"),
    (accumulate_forwards_micro_backwards_full, "backward call 1 did not compute the gradient"),
    (accumulate_full_batch_through_a_transpose, "not through the full batch"),
    (accumulate_on_altered_inputs, "other than rows of X"),
    (accumulate_clearing_only_the_weight, "held before your function ran"),
    (accumulate_clearing_only_the_bias, "held before your function ran"),
    (accumulate_clearing_only_the_weight_equal_weights, "held before your function ran"),
    (accumulate_with_autograd_grad, "0 of your 4 backward passes added into .grad"),
    (accumulate_every_graph_alive_at_once, "still held its saved tensors"),
    (accumulate_retaining_every_graph, "still held its saved tensors"),
    (accumulate_then_subtract_the_stale_gradients, "changed .grad after its last backward()"),
    (accumulate_then_subtract_only_the_bias_stale_gradient,
     "changed .grad after its last backward()"),
    ([0.25, 0.25, 0.25, 0.25], "should be a function"),
])
def test_exercise_3_wrong(answer, hint):
    assert is_not_yet(exercise_3(answer), hint)


def test_exercise_3_says_what_it_counts_only_when_it_saw_no_forward():
    # a whole-batch forward is seen (one call): no need to explain what a forward is
    assert "counts only as a call" not in exercise_3(accumulate_whole_batch).message
    assert "of sizes" not in exercise_3(accumulate_with_functional_linear).message  # no calls
    set_language("ko")
    try:
        message = exercise_3(accumulate_with_functional_linear).message
    finally:
        set_language("en")
    assert "model(...)을 호출한 것만 순전파로 셉니다" in message


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
