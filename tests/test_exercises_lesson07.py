"""Lesson 07's checkers: unanswered for None, correct for right fixes, not yet for wrong
ones (with a hint that fits the mistake), and never a crash on odd input.

The set-up is the lesson's: `make_net`, `x` and `y` as its set-up cells define them
(the check cells pass them in), and the two broken loops as the exercises give them.
"""
import copy

import nbformat
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone, stable_id,
                    is_correct, is_not_yet)
from project import ROOT
from lesson_checks import lesson07
from lesson_checks.errors import FREED_BUFFER, VERSION_COUNTER, error_raised_by
from lesson_checks.seeding import seeded
from solutions import solution

LESSON = ROOT / "notebooks" / "07_debugging_a_second_backward_error.ipynb"


def make_net():
    torch.manual_seed(0)
    encoder, head = nn.Sequential(nn.Linear(4, 8), nn.Tanh()), nn.Linear(8, 1)
    return encoder, head, torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.3)


_generator = torch.Generator().manual_seed(0)
x = torch.randn(64, 4, generator=_generator)
y = torch.tanh(x @ torch.randn(4, 1, generator=_generator))


def exercise_1(answer):
    return lesson07.exercise_1(answer, make_net, x, y)


def exercise_2(answer):
    return lesson07.exercise_2(answer, make_net, x, y)


CHECKS = [exercise_1, exercise_2]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42, 3.5, 42j, True, object(), [1, 2], {"a": 1}, {1, 2},
              torch.ones(2), lambda: None, lambda *args: 1 / 0, print]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, sample_answers=[
        None, 3, "train", torch.ones(2, 3), lambda *args: None, lambda *args: [torch.ones(2, 3)]])


def step(loss, opt):
    opt.zero_grad()
    loss.backward()
    opt.step()


# Exercise 1: an anchor for the features, cached on first use.

def train_with_anchor(encoder, head, opt, x, y, steps):  # as the exercise gives it
    anchor, losses = None, []
    for _ in range(steps):
        features = encoder(x)
        if anchor is None:
            anchor = features  # the features before training
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor)
        step(loss, opt)
        losses.append(loss.item())
    return losses


anchor_detached_once = solution("07", 1)  # the lesson's worked solution


def anchor_before_the_loop(encoder, head, opt, x, y, steps):
    with torch.no_grad():
        anchor = encoder(x)
    losses = []
    for _ in range(steps):
        features = encoder(x)
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor)
        step(loss, opt)
        losses.append(loss.item())
    return losses


def anchor_from_a_frozen_copy(encoder, head, opt, x, y, steps):
    frozen = copy.deepcopy(encoder).requires_grad_(False)
    losses = []
    for _ in range(steps):
        features = encoder(x)
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, frozen(x))
        step(loss, opt)
        losses.append(torch.tensor(loss.item()))  # one-element tensors are read too
    return losses


def anchor_detached_where_used(encoder, head, opt, x, y, steps):
    anchor, losses = None, []
    for _ in range(steps):
        features = encoder(x)
        if anchor is None:
            anchor = features
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor.detach())
        step(loss, opt)
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("answer", [anchor_detached_once, anchor_before_the_loop,
                                    anchor_from_a_frozen_copy, anchor_detached_where_used])
def test_exercise_1_right(answer):
    verdict = exercise_1(answer)
    assert is_correct(verdict), verdict


def test_exercise_1_the_given_loop_fails_in_step_1_and_its_fix_learns():
    encoder, head, opt = make_net()
    assert error_raised_by(lambda: train_with_anchor(encoder, head, opt, x, y, 8)) \
        == FREED_BUFFER
    losses = lesson07._anchor_kept_from_before_training(*make_net(), x, y, 8)
    assert losses[-1] < losses[0] / 2


def anchor_retained(encoder, head, opt, x, y, steps):
    anchor, losses = None, []
    for _ in range(steps):
        features = encoder(x)
        if anchor is None:
            anchor = features
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor)
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
        losses.append(loss.item())
    return losses


def anchor_made_every_step(encoder, head, opt, x, y, steps):
    losses = []
    for _ in range(steps):
        features = encoder(x)
        anchor = features.detach()
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor)
        step(loss, opt)
        losses.append(loss.item())
    return losses


def penalty_dropped(encoder, head, opt, x, y, steps):
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(head(encoder(x)), y)
        step(loss, opt)
        losses.append(loss.item())
    return losses


def anchor_penalty_weighed_twice(encoder, head, opt, x, y, steps):
    anchor, losses = None, []
    for _ in range(steps):
        features = encoder(x)
        if anchor is None:
            anchor = features.detach()
        loss = F.mse_loss(head(features), y) + 2 * F.mse_loss(features, anchor)
        step(loss, opt)
        losses.append(loss.item())
    return losses


def two_backward_calls_per_step(encoder, head, opt, x, y, steps):
    anchor, losses = None, []
    for _ in range(steps):
        features = encoder(x)
        if anchor is None:
            anchor = features.detach()
        opt.zero_grad()
        F.mse_loss(head(features), y).backward(inputs=list(head.parameters()))
        loss = F.mse_loss(head(encoder(x)), y) + F.mse_loss(encoder(x), anchor)
        loss.backward(inputs=list(encoder.parameters()))
        opt.step()
        losses.append(loss.item())
    return losses


def no_backward(encoder, head, opt, x, y, steps):
    return [F.mse_loss(head(encoder(x)), y).item() for _ in range(steps)]


def right_but_returns_nothing(encoder, head, opt, x, y, steps):
    anchor_detached_once(encoder, head, opt, x, y, steps)


def growing_graph(encoder, head, opt, x, y, steps):
    """Right weights, but every step's graph is longer than the last one's."""
    anchor, losses = None, []
    for k in range(steps):
        features = encoder(x)
        if anchor is None:
            anchor = features.detach()
        for _ in range(k):
            features = features + 0 * features  # same values and gradients, more saved
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor)
        step(loss, opt)
        losses.append(loss.item())
    return losses


def wrong_signature(encoder, head, opt):
    return []


@pytest.mark.parametrize("answer, words", [
    (train_with_anchor, ["explain()", "earlier step"]),
    (anchor_retained, ["retain_graph=True"]),
    (anchor_made_every_step, ["never pulls", "before training"]),
    (penalty_dropped, ["never pulls"]),
    (anchor_penalty_weighed_twice, ["weights differ"]),
    (two_backward_calls_per_step, ["16 backward calls for 8 steps"]),
    (no_backward, ["never called"]),
    (right_but_returns_nothing, ["return the list"]),
    (growing_graph, ["grows"]),
    (wrong_signature, ["TypeError", "answer(encoder, head, opt, x, y, steps=8)"]),
])
def test_exercise_1_wrong(answer, words):
    verdict = exercise_1(answer)
    assert is_not_yet(verdict, *words), verdict


# Exercise 2: rows scaled to length 1, in place, in a helper.

def unit_rows(features):  # as the exercise gives it
    features /= features.norm(dim=1, keepdim=True)
    return features


def train_on_directions(encoder, head, opt, x, y, steps):  # as the exercise gives it
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(head(unit_rows(encoder(x))), y)
        step(loss, opt)
        losses.append(loss.item())
    return losses


def training_with(scale_rows):
    def train(encoder, head, opt, x, y, steps):
        losses = []
        for _ in range(steps):
            loss = F.mse_loss(head(scale_rows(encoder(x))), y)
            step(loss, opt)
            losses.append(loss.item())
        return losses
    return train


def divided_out_of_place(features):
    return features / features.norm(dim=1, keepdim=True)


def normalize(features):
    return F.normalize(features, dim=1)


def norm_then_clone_then_in_place(features):
    norms = features.norm(dim=1, keepdim=True)
    features = features.clone()
    features /= norms
    return features


@pytest.mark.parametrize("scale_rows", [divided_out_of_place, normalize,
                                        norm_then_clone_then_in_place])
def test_exercise_2_right(scale_rows):
    verdict = exercise_2(training_with(scale_rows))
    assert is_correct(verdict), verdict


def test_exercise_2_the_lessons_worked_solution():
    verdict = exercise_2(solution("07", 2))
    assert is_correct(verdict), verdict


def test_exercise_2_the_given_loop_fails_in_step_0_and_its_fix_learns():
    encoder, head, opt = make_net()
    assert error_raised_by(lambda: train_on_directions(encoder, head, opt, x, y, 1)) \
        == VERSION_COUNTER
    losses = lesson07._unit_rows_out_of_place(*make_net(), x, y, 8)
    assert losses[-1] < losses[0] / 2


def through_data(features):
    features.data /= features.data.norm(dim=1, keepdim=True)
    return features


def norm_detached(features):
    return features / features.norm(dim=1, keepdim=True).detach()


def under_no_grad(features):
    with torch.no_grad():
        features /= features.norm(dim=1, keepdim=True)
    return features


def clone_then_in_place(features):
    features = features.clone()
    features /= features.norm(dim=1, keepdim=True)  # the norm saved the clone
    return features


def not_scaled(features):
    return features


def scaled_to_length_2(features):
    return 2 * features / features.norm(dim=1, keepdim=True)


def retained(encoder, head, opt, x, y, steps):
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(head(unit_rows(encoder(x))), y)
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("answer, words", [
    (train_on_directions, ["changed in place", "explain()"]),
    (training_with(under_no_grad), ["changed in place"]),
    (training_with(clone_then_in_place), ["changed in place"]),
    (retained, ["changed in place"]),
    (training_with(through_data), ["first loss is right", "hidden from autograd"]),
    (training_with(norm_detached), ["first loss is right", "hidden from autograd"]),
    (training_with(not_scaled), ["no longer scaled"]),
    (training_with(scaled_to_length_2), ["weights differ"]),
])
def test_exercise_2_wrong(answer, words):
    verdict = exercise_2(answer)
    assert is_not_yet(verdict, *words), verdict


@pytest.mark.parametrize("check, reference", [
    (exercise_1, lesson07._anchor_kept_from_before_training),
    (exercise_1, lesson07._anchor_made_every_step),
    (exercise_2, lesson07._unit_rows_out_of_place)])
def test_the_checkers_own_functions_are_refused(check, reference):
    verdict = check(reference)
    assert is_not_yet(verdict, "checker's own function"), verdict


# What a check cell must survive, and must leave as it was.

@pytest.mark.parametrize("check", [lesson07.exercise_1, lesson07.exercise_2])
@pytest.mark.parametrize("setup", [(None, None, None), (print, x, y), (make_net, "x", y),
                                   (lambda: (1, 2, 3), x, y)], ids=stable_id)
def test_a_check_cell_given_something_else_than_the_lesson_set_up(check, setup):
    verdict = check(anchor_detached_once, *setup)
    assert is_not_yet(verdict, "set-up cells"), verdict


@pytest.mark.parametrize("check, answer", [
    (exercise_1, anchor_detached_once), (exercise_1, train_with_anchor),
    (exercise_2, training_with(divided_out_of_place)), (exercise_2, train_on_directions)])
def test_checkers_leave_the_rng_and_autograd_alone(check, answer):
    with global_rng_left_alone(), autograd_left_alone():
        check(answer)


# The set-up and the broken loops above are the lesson's: run the notebook's own cells.

@pytest.fixture(scope="module")
def lesson():
    """The names the lesson's set-up cell and exercise cells define, run as the notebook
    runs them (its first cell seeds the global RNG with 0)."""
    notebook = nbformat.read(LESSON, as_version=4)
    sources = [c.source for c in notebook.cells if c.cell_type == "code"]
    cells = [s for s in sources if s.startswith("def make_net") or "answer = None" in s]
    names = {"torch": torch, "nn": nn, "F": F}
    with seeded(0):
        for source in cells:
            exec(source, names)
    return names


def test_the_set_up_here_is_the_lessons(lesson):
    assert torch.equal(lesson["x"], x) and torch.equal(lesson["y"], y)
    theirs, ours = lesson["make_net"](), make_net()
    assert all(torch.equal(a, b) for a, b in zip(
        [p for m in theirs[:2] for p in m.parameters()],
        [p for m in ours[:2] for p in m.parameters()]))
    assert theirs[2].defaults["lr"] == ours[2].defaults["lr"]


@pytest.mark.parametrize("check, name, ours", [
    (exercise_1, "train_with_anchor", train_with_anchor),
    (exercise_2, "train_on_directions", train_on_directions)])
def test_the_broken_loops_here_are_the_lessons(lesson, check, name, ours):
    assert repr(check(lesson[name])) == repr(check(ours))
