"""Lesson 07's checkers: unanswered for None, correct for right fixes, not yet for wrong
ones (with a hint that fits the mistake), and never a crash on odd input.

The set-up is the lesson's: `make_net`, `x` and `y` as its set-up cells define them
(the check cells pass them in), and the two broken loops as the exercises give them.
"""
import copy
import functools
import re

import nbformat
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone, stable_id,
                    is_correct, is_not_yet)
from project import ROOT
from lesson_checks import lesson07, set_language
from lesson_checks.errors import FREED_BUFFER, VERSION_COUNTER, error_raised_by
from lesson_checks.seeding import seeded
from solutions import answer_cell, set_up_source
from lesson07_setup import make_net, x, y

LESSON = ROOT / "notebooks" / "07_debugging_a_second_backward_error.ipynb"


def exercise_1(answer, failing_step=1, carrier="anchor"):  # the right prediction
    return lesson07.exercise_1(answer, make_net, x, y, failing_step, carrier)


NODE = "LinalgVectorNormBackward0"  # the node that fails first in exercise 2's loop
OP = "norm"  # the operation that made it: exercise 2's answer, from its choices


def exercise_2(answer, error_step=0, failing_op=OP):  # the right prediction
    return lesson07.exercise_2(answer, make_net, x, y, error_step, failing_op)


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


def worked(number):
    """The names the lesson defines once its set-up cell (imports; make_net, x, y and
    step, which the exercises' loops call) and the teacher's answer cell have run."""
    names = {}
    with seeded(0):
        exec(set_up_source("07"), names)
        exec(answer_cell("07", number), names)
    return names


anchor_detached_once = worked(1)["answer"]  # the lesson's worked solution


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


# Exercise 1 first asks for a prediction, made by reading the loop: step 1, `anchor`.

@pytest.mark.parametrize("failing_step, carrier", [(None, "anchor"), (1, None), (None, None)])
def test_exercise_1_a_fix_without_the_prediction_is_unanswered(failing_step, carrier):
    verdict = exercise_1(anchor_detached_once, failing_step, carrier)
    assert verdict.correct is None and "before running the loop" in verdict.message, verdict


@pytest.mark.parametrize("failing_step, carrier, words", [
    (0, "anchor", ["trace step 0 by hand"]),
    (2, "anchor", ["for step 2 to be the first", "every step before it", "from step 0"]),
    (3, "features", ["for step 3 to be the first", "every step before it", "from step 0"]),
    (7, "anchor", ["for step 7 to be the first to fail, every step before it must run through",
                   "trace the steps in order from step 0", "has an earlier backward freed"]),
    (True, "anchor", ["failing_step is a step number", "bool"]),  # True == 1 in Python
    (1.0, "anchor", ["failing_step is a step number", "float"]),
    ("1", "anchor", ["failing_step is a step number", "got '1'"]),
    (-1, "anchor", ["failing_step is a step number", "got -1"]),
    (1, "features", ["features is made afresh", "encoder(x)"]),
    (1, "losses", ["loss.item()", "no graph"]),
    (1, "loss", ["loss is made afresh", "same step"]),
    (1, "head", ["leaf"]),
    (1, "opt", ["leaf"]),
    (1, "x", ["only reads", "grad_fn"]),
    (1, "anchor = features", ["is not one"]),
    (1, "Anchor", ["is not one"]),
    (1, ["anchor"], ["carrier is a name", "list"]),
])
def test_exercise_1_a_wrong_prediction_is_refused_even_with_a_right_fix(failing_step, carrier,
                                                                        words):
    verdict = exercise_1(anchor_detached_once, failing_step, carrier)
    assert is_not_yet(verdict, *words), verdict


def test_exercise_1_the_prediction_is_checked_before_the_fix():
    verdict = exercise_1(None, 0, "anchor")
    assert is_not_yet(verdict, "trace step 0"), verdict
    verdict = exercise_1(None, 1, "anchor")
    assert verdict.correct is None and "train_with_anchor" in verdict.message, verdict


def test_exercise_1_the_lessons_worked_solution_and_its_prediction():
    names = worked(1)
    verdict = exercise_1(names["answer"], names["failing_step"], names["carrier"])
    assert is_correct(verdict), verdict


def test_exercise_1_a_carrier_with_spaces_around_it_is_read():
    assert is_correct(exercise_1(anchor_detached_once, 1, " anchor ")), \
        exercise_1(anchor_detached_once, 1, " anchor ")


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


# Exercise 2: rows scaled to length 1, one row at a time, in place, in a helper.

def unit_rows(features):  # as the exercise gives it
    for i in range(len(features)):
        features[i] /= features[i].norm()
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


def stacked_rows(features):
    return torch.stack([row / row.norm() for row in features])


@pytest.mark.parametrize("scale_rows", [divided_out_of_place, normalize,
                                        norm_then_clone_then_in_place, stacked_rows])
def test_exercise_2_right(scale_rows):
    verdict = exercise_2(training_with(scale_rows))
    assert is_correct(verdict), verdict


def test_exercise_2_the_lessons_worked_solution_and_its_prediction():
    names = worked(2)
    verdict = exercise_2(names["answer"], names["error_step"], names["failing_op"])
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


def explains_rewrite(features):
    """explain's first "Here": the line out of place, still a write into features."""
    for i in range(len(features)):
        features[i] = features[i] / features[i].norm()
    return features


def explains_rewrite_then_its_clone(features):
    """explain's second "Here": a copy just above, written into row by row."""
    features = features.clone()
    for i in range(len(features)):
        features[i] = features[i] / features[i].norm()
    return features


def cloned_then_rows_in_place(features):
    features = features.clone()
    for i in range(len(features)):
        features[i] /= features[i].norm()
    return features


def row_name_rebound(features):
    """Runs: the loop rebinds `row` to a new tensor, and the features stay as they were."""
    for row in features:
        row = row / row.norm()
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
    (train_on_directions, ["changed in place", "which tensors"]),
    (training_with(explains_rewrite), ["changed in place", "which tensors"]),
    (training_with(explains_rewrite_then_its_clone), ["changed in place", "which tensors"]),
    (training_with(cloned_then_rows_in_place), ["changed in place", "which tensors"]),
    (training_with(row_name_rebound), ["no longer scaled"]),
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

@pytest.mark.parametrize("check", [
    functools.partial(lesson07.exercise_1, failing_step=1, carrier="anchor"),
    functools.partial(lesson07.exercise_2, error_step=0, failing_op=OP)],
    ids=["exercise_1", "exercise_2"])
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
    cells = [set_up_source("07")] + [s for s in sources if "answer = None" in s]
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


# Loopholes: a wrapper around the checker's reference, and a fix that freezes the encoder.

@pytest.mark.parametrize("check, wrapper", [
    (exercise_1, lambda *args: lesson07._anchor_kept_from_before_training(*args)),
    (exercise_1, lambda encoder, head, opt, x, y, steps: lesson07._anchored(
        encoder, head, opt, x, y, steps,
        lambda features, anchor: features.detach() if anchor is None else anchor)),
    (exercise_2, lambda *args: lesson07._unit_rows_out_of_place(*args)),
    # functools.wraps would leave the unguarded function as __wrapped__; there is none
    (exercise_1, lambda *args: getattr(lesson07._anchored, "__wrapped__", lesson07._anchored)(
        *args, lambda features, anchor: features.detach() if anchor is None else anchor)),
    (exercise_2, lambda *args: getattr(lesson07._unit_rows_out_of_place, "__wrapped__",
                                       lesson07._unit_rows_out_of_place)(*args))])
def test_a_wrapper_around_the_checkers_function_is_refused(check, wrapper):
    verdict = check(wrapper)
    assert is_not_yet(verdict, "checker's own function"), verdict


def encoder_frozen(encoder, head, opt, x, y, steps):
    """Runs and lowers the loss, but the encoder gets no gradient: the lesson's wrong
    detach, in the exercise."""
    with torch.no_grad():
        anchor = encoder(x)
    losses = []
    for _ in range(steps):
        features = encoder(x).detach()
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor)
        step(loss, opt)
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("reference", [lesson07._anchored, lesson07._anchor_kept_from_before_training,
                                       lesson07._unit_rows_out_of_place, lesson07._rows_not_scaled])
def test_no_unguarded_copy_of_a_checkers_function_is_left_to_call(reference):
    assert not hasattr(reference, "__wrapped__") and reference.__closure__ is None


def test_exercise_1_a_fix_that_freezes_the_encoder_is_refused():
    verdict = exercise_1(encoder_frozen)
    assert is_not_yet(verdict, "never change", "no gradient"), verdict


def test_exercise_2_a_fix_that_freezes_the_encoder_is_refused():
    verdict = exercise_2(training_with(lambda features: divided_out_of_place(features.detach())))
    assert is_not_yet(verdict, "never change", "no gradient"), verdict


def rows_written_into_a_new_tensor(features):
    """Right: each row divided by its norm, written into a new tensor (its graph goes
    through CopySlices, whose saved bytes retained_bytes cannot read)."""
    out = torch.empty_like(features)
    for i in range(len(features)):
        out[i] = features[i] / features[i].norm()
    return out


def test_exercise_2_rows_written_into_a_new_tensor_is_right():
    verdict = exercise_2(training_with(rows_written_into_a_new_tensor))
    assert is_correct(verdict), verdict


# A wrong pick gets a hint about that pick, which does not point at the right answer: the
# hint for a wrong step is the same whatever the name, and does not say "anchor"; the hint
# for a wrong name says no step; no hint repeats the verdict's "not yet".

@pytest.fixture(params=["en", "ko"])
def language(request):
    set_language(request.param)
    yield request.param
    set_language("en")


WRONG_STEPS = [0, 2, 3]
WRONG_NAMES = ["features", "loss", "losses", "head", "x", "anchor = features"]


def test_exercise_1_a_wrong_steps_hint_is_the_same_whatever_the_name(language):
    for failing_step in WRONG_STEPS:
        messages = {exercise_1(anchor_detached_once, failing_step, carrier).message
                    for carrier in ["anchor", *WRONG_NAMES]}
        assert len(messages) == 1 and "anchor" not in messages.pop(), messages


def test_exercise_1_a_wrong_names_hint_says_no_step_and_not_the_carrier(language):
    for carrier in WRONG_NAMES:
        message = exercise_1(anchor_detached_once, 1, carrier).message
        assert "anchor" not in message.replace(carrier, "") and not re.search(r"\d", message), \
            message


PREFIXES = {"en": ("not yet", "✗"), "ko": ("아직", "✗")}


def test_no_hint_repeats_the_verdicts_prefix(language):
    verdicts = [exercise_1(anchor_detached_once, step, name)
                for step in [0, 1, 2, 1.5, None] for name in ["anchor", "features", "y", 3]]
    verdicts += [exercise_2(training_with(divided_out_of_place), step, node)
                 for step in [0, 1, "0", None] for node in [OP, "tanh", "division", "head",
                                                           NODE, "cube", 3, None]]
    verdicts += [exercise_1(train_with_anchor), exercise_2(train_on_directions), exercise_1(3)]
    for verdict in verdicts:
        assert not verdict.message.lower().startswith(PREFIXES[language]), repr(verdict)


@pytest.mark.parametrize("error_step, failing_op", [(None, OP), (0, None), (None, None)])
def test_exercise_2_a_fix_without_the_prediction_is_unanswered(error_step, failing_op):
    verdict = exercise_2(training_with(divided_out_of_place), error_step, failing_op)
    assert verdict.correct is None and "before running anything" in verdict.message, verdict


@pytest.mark.parametrize("error_step, failing_op, words", [
    (1, OP, ["for step 1 to be the first", "trace the steps in order from step 0"]),
    (2, "tanh", ["for step 2 to be the first", "every step before it"]),
    (0, "tanh", ["the nodes nearer the loss first", "which is nearest the loss"]),
    (0, " Tanh ", ["the nodes nearer the loss first"]),
    (0, "division", ["the division is the write", "Which operations save a tensor"]),
    (0, "division (the write)", ["the division is the write"]),
    (0, "head", ["after unit_rows has written every row", "nothing it saved changes",
                 "Which operations save a tensor"]),
    # lazy answers: a node's name (what explain() prints), a non-choice, two choices
    (0, NODE, ["chosen by reading the loop", "got 'LinalgVectorNormBackward0'",
               "run it afterwards"]),
    (0, "TanhBackward0", ["chosen by reading the loop"]),
    (0, "CopySlices", ["chosen by reading the loop"]),
    (0, "", ["failing_op is one of", "got ''"]),
    (0, "norm()", ["failing_op is one of", "got 'norm()'"]),
    (0, "features[i].norm()", ["failing_op is one of"]),
    (0, "norm, tanh", ["failing_op is one of"]),
    (0, "relu", ["failing_op is one of"]),
    (0, 1, ["failing_op is one of", "an int"]),
    (0, ["norm"], ["failing_op is one of", "a list"]),
    (True, OP, ["error_step is a step number", "bool"]),
    ("0", OP, ["error_step is a step number", "got '0'"]),
    (0.0, OP, ["error_step is a step number", "float"]),
    (-1, OP, ["error_step is a step number", "got -1"]),
])
def test_exercise_2_a_wrong_prediction_is_refused_even_with_a_right_fix(error_step, failing_op,
                                                                        words):
    verdict = exercise_2(training_with(divided_out_of_place), error_step, failing_op)
    assert is_not_yet(verdict, *words), verdict


@pytest.mark.parametrize("failing_op", ["tanh", "division", "head"])
def test_exercise_2_a_wrong_choices_hint_does_not_name_the_right_one(failing_op, language):
    message = exercise_2(training_with(divided_out_of_place), 0, failing_op).message
    assert not re.search(r"norm|노름|linalg", message, re.I), message


@pytest.mark.parametrize("failing_op", [OP, f" {OP} ", f"{OP}\n", "Norm", "NORM"])
def test_exercise_2_the_choice_is_read_loosely_case_and_spaces(failing_op):
    verdict = exercise_2(training_with(divided_out_of_place), 0, failing_op)
    assert is_correct(verdict), verdict


@pytest.mark.parametrize("failing_op", [OP, "노름"])
def test_exercise_2_the_korean_run_accepts_the_english_choice_and_its_korean_word(failing_op,
                                                                                 language):
    verdict = exercise_2(training_with(divided_out_of_place), 0, failing_op)
    assert is_correct(verdict), verdict


def test_exercise_2_the_right_choice_is_the_op_whose_node_fails_first():
    """The choice the checker expects made the node autograd names when step 0's backward
    fails (anomaly mode's 'Error detected in ...'): the norm, LinalgVectorNormBackward0."""
    import warnings
    with warnings.catch_warnings(record=True) as caught, torch.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            train_on_directions(*make_net(), x, y, 1)
    assert any(f"Error detected in {NODE}." in str(w.message) for w in caught), caught
    assert torch.ones(3, requires_grad=True).norm().grad_fn.name() == NODE


def test_exercise_2_the_prediction_is_checked_before_the_fix():
    verdict = exercise_2(None, 1, OP)
    assert is_not_yet(verdict, "in order from step 0"), verdict
    verdict = exercise_2(None, 0, OP)
    assert verdict.correct is None and "train_on_directions" in verdict.message, verdict


@pytest.mark.parametrize("check, answers", [
    (lesson07.exercise_1, [r"step 1\b", r"(?<!\w)anchor\b", r"\bstep 0\b.*\bgraph"]),
    (lesson07.exercise_2, [r"step 0\b", r"version counter", r"Tanh", r"Linalg",
                           r"VectorNorm", r"\bnorm\b", r"in place"]),
])
def test_the_check_functions_docstrings_do_not_give_the_answer(check, answers):
    """Shift+Tab on the check cell shows the checker's docstring: it says what is asked
    (the prediction's names, then the fixed function), not the answer."""
    doc = check.__doc__
    assert doc
    for answer in answers:
        assert not re.search(answer, doc, re.S), (answer, doc)
