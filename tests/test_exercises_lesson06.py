"""Lesson 06's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint that fits the mistake), and never a crash on odd input."""
import pytest
import torch
import torch.nn.functional as F

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from lesson_checks import lesson06

CHECKS = [lesson06.exercise_1, lesson06.exercise_2, lesson06.exercise_3]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42, 3.5, 42j, True, object(), [1, 2], {"a": 1}, {1, 2},
              torch.ones(2), lambda: None, lambda *args: 1 / 0, print]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, sample_answers=[None, 3, {1: "F"}, lambda *args: None])


# Exercise 1: truncated BPTT with an LSTM, whose state is a pair (h, c).

def detach_tuple(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(inputs, state)
        loss = F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def detach_pair_after_forward(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        outputs, (h, c) = lstm(inputs, state)
        state = (h.detach(), c.detach())
        loss = F.mse_loss(head(outputs), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()  # zeroing after the step is as good as before the backward


def zeros_to_start(lstm, head, chunks, optimizer):
    batch = chunks[0][0].shape[0]
    h = c = torch.zeros(1, batch, lstm.hidden_size)
    for inputs, targets in chunks:
        outputs, (h, c) = lstm(inputs, (h.detach(), c.detach()))
        optimizer.zero_grad()
        torch.autograd.backward(F.mse_loss(head(outputs), targets))
        optimizer.step()


@pytest.mark.parametrize("answer", [detach_tuple, detach_pair_after_forward, zeros_to_start])
def test_exercise_1_right(answer):
    assert is_correct(lesson06.exercise_1(answer))


def the_broken_function(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        outputs, state = lstm(inputs, state)
        loss = F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def detach_h_only(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = (state[0].detach(), state[1])
        outputs, state = lstm(inputs, state)
        optimizer.zero_grad()
        F.mse_loss(head(outputs), targets).backward()
        optimizer.step()


def detach_the_tuple(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = state.detach()
        outputs, state = lstm(inputs, state)
        optimizer.zero_grad()
        F.mse_loss(head(outputs), targets).backward()
        optimizer.step()


def detach_none(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        state = (state[0].detach(), state[1].detach())
        outputs, state = lstm(inputs, state)


def retain(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        outputs, state = lstm(inputs, state)
        optimizer.zero_grad()
        F.mse_loss(head(outputs), targets).backward(retain_graph=True)
        optimizer.step()


def retain_without_steps(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        outputs, state = lstm(inputs, state)
        F.mse_loss(head(outputs), targets).backward(retain_graph=True)
    optimizer.step()


def never_zeroes(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(inputs, state)
        F.mse_loss(head(outputs), targets).backward()
        optimizer.step()


def never_steps(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(inputs, state)
        optimizer.zero_grad()
        F.mse_loss(head(outputs), targets).backward()


def one_backward_at_the_end(lstm, head, chunks, optimizer):
    total, state = 0, None
    for inputs, targets in chunks:
        outputs, state = lstm(inputs, state)
        total = total + F.mse_loss(head(outputs), targets)
    optimizer.zero_grad()
    total.backward()
    optimizer.step()


def no_backward(lstm, head, chunks, optimizer):
    pass


def raises_value_error(lstm, head, chunks, optimizer):
    raise ValueError("not today")


WRONG_1 = [the_broken_function, detach_h_only, detach_the_tuple, detach_none, retain,
           retain_without_steps, never_zeroes, never_steps, one_backward_at_the_end,
           no_backward, raises_value_error]


@pytest.mark.parametrize("answer", WRONG_1)
def test_exercise_1_wrong(answer):
    assert is_not_yet(lesson06.exercise_1(answer))


@pytest.mark.parametrize("answer, words", [
    (the_broken_function, "detach both"),
    (detach_h_only, "detach both"),
    (detach_the_tuple, "tuple"),
    (detach_none, "None"),
    (retain, "retain_graph=True is not the fix"),
    (retain_without_steps, "retain_graph=True"),
    (never_zeroes, "zero the gradients"),
    (one_backward_at_the_end, "one backward and one optimizer step per chunk"),
    (no_backward, "never called"),
    (raises_value_error, "ValueError: not today"),
])
def test_exercise_1_hints_fit_the_mistake(answer, words):
    assert words in lesson06.exercise_1(answer).message


# Exercise 2: match the symptoms to their fixes.

RIGHT_2 = {1: "F", 2: "B", 3: "E", 4: "C", 5: "D"}


@pytest.mark.parametrize("answer", [
    RIGHT_2,
    {"1": "f", "2": "b", "3": "e", "4": "c", "5": "d"},
    {5: " D ", 4: "C", 3: "E", 2: "B", 1: "F"},
])
def test_exercise_2_right(answer):
    assert is_correct(lesson06.exercise_2(answer))


@pytest.mark.parametrize("answer", [
    {1: "A", 2: "A", 3: "A", 4: "A", 5: "A"},  # retain_graph=True everywhere
    {**RIGHT_2, 5: "A"},                      # retains on the last backward too
    {**RIGHT_2, 1: "B", 2: "F"},              # the two detaches swapped
    {**RIGHT_2, 4: "D"},                      # retain, then step in between
    {1: "F", 2: "B", 3: "E", 4: "C"},         # one missing
    {**RIGHT_2, 6: "A"},                      # no symptom 6
    {**RIGHT_2, 3: "Z"},                      # no fix Z
    {**RIGHT_2, 3: 5},                        # not a letter
    {True: "F", 2: "B", 3: "E", 4: "C", 5: "D"},  # a bool is not a symptom number
])
def test_exercise_2_wrong(answer):
    assert is_not_yet(lesson06.exercise_2(answer))


def test_exercise_2_hints_fit_the_mistake():
    everywhere = lesson06.exercise_2({1: "A", 2: "A", 3: "A", 4: "A", 5: "A"}).message
    assert "symptom 1" in everywhere and "walks all of G's graph" in everywhere
    assert "last backward" in lesson06.exercise_2({**RIGHT_2, 5: "A"}).message
    assert "symptom 1: not B" in lesson06.exercise_2({**RIGHT_2, 1: "B", 2: "F"}).message
    assert "in-place error" in lesson06.exercise_2({**RIGHT_2, 4: "D"}).message
    assert "missing: 5" in lesson06.exercise_2({1: "F", 2: "B", 3: "E", 4: "C"}).message


def test_exercise_2_every_symptom_and_fix_is_used_once_but_a():
    assert sorted(lesson06._KEY) == sorted(lesson06.SYMPTOMS)
    assert sorted(lesson06._KEY.values()) == sorted(set(lesson06.FIXES) - {"A"})


# Exercise 3: a gradient penalty that backward can go through.

def penalty_right(critic, points):
    x = points.detach().requires_grad_()
    (grad,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def penalty_with_grad_outputs(critic, points):
    x = points.clone().requires_grad_()
    scores = critic(x)
    (grad,) = torch.autograd.grad(scores, x, grad_outputs=torch.ones_like(scores),
                                  create_graph=True)
    return (grad.pow(2).sum(dim=1).sqrt() - 1).pow(2).mean()


def penalty_mutating_the_points(critic, points):
    points.requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True,
                                  retain_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean().reshape(1)


@pytest.mark.parametrize("answer", [penalty_right, penalty_with_grad_outputs,
                                    penalty_mutating_the_points])
def test_exercise_3_right(answer):
    assert is_correct(lesson06.exercise_3(answer))


def without_create_graph(critic, points):
    x = points.detach().requires_grad_()
    (grad,) = torch.autograd.grad(critic(x).sum(), x)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def points_not_requiring_grad(critic, points):
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def norm_of_everything(critic, points):
    x = points.detach().requires_grad_()
    (grad,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)
    return (grad.norm() - 1) ** 2


def forgot_the_minus_one(critic, points):
    x = points.detach().requires_grad_()
    (grad,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)
    return (grad.norm(dim=1) ** 2).mean()


def per_point(critic, points):
    x = points.detach().requires_grad_()
    (grad,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True)
    return (grad.norm(dim=1) - 1) ** 2


def as_a_number(critic, points):
    return penalty_right(critic, points).item()


def detached(critic, points):
    return penalty_right(critic, points).detach()


def calls_backward_itself(critic, points):
    penalty = penalty_right(critic, points)
    penalty.backward(retain_graph=True)
    return penalty


def create_without_retain(critic, points):
    x = points.detach().requires_grad_()
    (grad,) = torch.autograd.grad(critic(x).sum(), x, create_graph=True, retain_graph=False)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def the_template(critic, points):
    ...


WRONG_3 = [without_create_graph, points_not_requiring_grad, norm_of_everything,
           forgot_the_minus_one, per_point, as_a_number, detached, calls_backward_itself,
           create_without_retain, the_template]


@pytest.mark.parametrize("answer", WRONG_3)
def test_exercise_3_wrong(answer):
    assert is_not_yet(lesson06.exercise_3(answer))


@pytest.mark.parametrize("answer, words", [
    (without_create_graph, "create_graph=True"),
    (detached, "no grad_fn"),
    (points_not_requiring_grad, "requires_grad_()"),
    (norm_of_everything, "grad.norm(dim=1)"),
    (per_point, "one number"),
    (as_a_number, "a float"),
    (calls_backward_itself, "already ran backward"),
    (create_without_retain, "leave retain_graph"),
    (the_template, "NoneType"),
])
def test_exercise_3_hints_fit_the_mistake(answer, words):
    assert words in lesson06.exercise_3(answer).message


# The checkers run the reader's code: they must leave autograd and the RNG as they were.

def test_checkers_restore_autograd_even_when_the_answer_raises():
    with autograd_left_alone():
        lesson06.exercise_1(raises_value_error)
        lesson06.exercise_1(retain)
        lesson06.exercise_3(points_not_requiring_grad)


def test_checkers_leave_the_global_rng_alone():
    with global_rng_left_alone():
        lesson06.exercise_1(detach_tuple)
        lesson06.exercise_2(RIGHT_2)
        lesson06.exercise_3(penalty_right)
