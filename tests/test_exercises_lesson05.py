"""Lesson 05's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint), and never a crash on odd input."""
import weakref

import numpy as np
import pytest
import torch
from torch import nn

from checks import every_checker_tests, global_rng_left_alone, is_correct, is_not_yet
from lesson_checks import lesson05

CHECKS = [lesson05.exercise_1, lesson05.exercise_2, lesson05.exercise_3]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42j, True, 3.5, object(), {"a": 1}, {1, 2}, [[1, 2], [3]],
              lambda: None, torch.tensor([True, False]), torch.tensor(7300.0)]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, sample_answers=[None, 7300, {"C"}, len])


# Exercise 1: Linear(10, 40) -> Tanh -> Linear(40, 20) -> Tanh -> Linear(20, 3), batch 25.

RIGHT_BYTES = 4 * 25 * (10 + 40 + 20 + 3)


def test_exercise_1_measures_what_the_hand_count_says():
    assert lesson05._exercise_1_measured() == RIGHT_BYTES == 7300


@pytest.mark.parametrize("answer", [7300, 7300.0, np.int64(7300)])
def test_exercise_1_right(answer):
    assert is_correct(lesson05.exercise_1(answer))


@pytest.mark.parametrize("answer", [
    RIGHT_BYTES + 4 * (40 * 20 + 20 * 3),  # the saved weights Wᵀ counted
    RIGHT_BYTES + 4 * 25 * (40 + 20),      # each Tanh output counted twice
    RIGHT_BYTES - 4 * 25 * 10,             # x forgotten
    RIGHT_BYTES - 4 * 25 * 3,              # the output forgotten
    RIGHT_BYTES // 4,                      # elements, not bytes
    0,
    -7300,
    1568,
])
def test_exercise_1_wrong(answer):
    assert is_not_yet(lesson05.exercise_1(answer))


def test_exercise_1_hints_are_specific():
    assert "leaves" in lesson05.exercise_1(RIGHT_BYTES + 4 * (40 * 20 + 20 * 3)).message
    assert "counted once" in lesson05.exercise_1(RIGHT_BYTES + 4 * 25 * 60).message
    assert "input batch" in lesson05.exercise_1(RIGHT_BYTES - 4 * 25 * 10).message
    assert "elements" in lesson05.exercise_1(RIGHT_BYTES // 4).message
    assert ".item()" in lesson05.exercise_1(torch.tensor(7300)).message


# Exercise 2: the average loss, with no batch's graph left alive.

def leaky(model, batches):  # the notebook's average_loss
    total_loss = 0
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        total_loss += loss
    return total_loss / len(batches)


def with_item(model, batches):
    total_loss = 0
    for x, y in batches:
        total_loss += nn.functional.mse_loss(model(x), y).item()
    return total_loss / len(batches)


def with_detach(model, batches):
    total_loss = 0
    for x, y in batches:
        total_loss += nn.functional.mse_loss(model(x), y).detach()
    return total_loss / len(batches)


def with_no_grad(model, batches):
    with torch.no_grad():
        return sum(nn.functional.mse_loss(model(x), y) for x, y in batches) / len(batches)


@pytest.mark.parametrize("answer", [with_item, with_detach, with_no_grad])
def test_exercise_2_right(answer):
    assert is_correct(lesson05.exercise_2(answer))


KEPT = []


def keeps_losses_outside(model, batches):
    total_loss = 0
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        KEPT.append(loss)
        total_loss += loss.item()
    return total_loss / len(batches)


def returns_the_sum(model, batches):
    return sum(nn.functional.mse_loss(model(x), y).item() for x, y in batches)


def returns_the_last(model, batches):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y).item()
    return loss


def never_runs_the_model(model, batches):
    return 0.0


def returns_a_string(model, batches):
    with_item(model, batches)
    return "done"


def raises(model, batches):
    raise ValueError("not today")


@pytest.mark.parametrize("answer", [leaky, keeps_losses_outside, returns_the_sum,
                                    returns_the_last, never_runs_the_model,
                                    returns_a_string, raises, 3, "with_item", len])
def test_exercise_2_wrong(answer):
    try:
        assert is_not_yet(lesson05.exercise_2(answer))
    finally:
        KEPT.clear()


def test_exercise_2_hints_are_specific():
    assert "tensor with a graph" in lesson05.exercise_2(leaky).message
    assert "still alive" in lesson05.exercise_2(keeps_losses_outside).message
    KEPT.clear()
    assert "total" in lesson05.exercise_2(returns_the_sum).message
    assert "last batch" in lesson05.exercise_2(returns_the_last).message
    assert "never ran the model" in lesson05.exercise_2(never_runs_the_model).message


def test_exercise_2_leaves_nothing_alive_itself():
    model, batches = lesson05._exercise_2_setup()
    refs = lesson05._watch_activations(model)
    with_item(model, batches)
    assert len(refs) == len(batches) and lesson05._alive(refs) == 0
    kept = leaky(model, batches)
    assert lesson05._alive(refs) == len(batches)
    del kept
    assert lesson05._alive(refs) == 0


# Exercise 3: which snippets hold saved tensors once they finish.

def test_exercise_3_runs_the_snippets():
    keepers = {label for label, text in lesson05.SNIPPETS.items()
               if lesson05._holds_saved_tensors(text)}
    assert keepers == {"C", "E", "F"}


@pytest.mark.parametrize("answer", [{"C", "E", "F"}, ["c", "e", "f"], ("F", " E", "C")])
def test_exercise_3_right(answer):
    assert is_correct(lesson05.exercise_3(answer))


@pytest.mark.parametrize("answer", [
    {"E"},                      # the classic leak alone
    {"C", "E"},                 # misses F: `loss` still names the last graph
    {"B", "C", "E", "F"},       # B keeps nodes, not saved tensors
    set(lesson05.SNIPPETS),     # everything
    set(),                      # nothing
])
def test_exercise_3_wrong(answer):
    assert is_not_yet(lesson05.exercise_3(answer))


@pytest.mark.parametrize("answer", ["CEF", {"Z"}, [1, 2], [["C"]]])
def test_exercise_3_odd_input(answer):
    assert is_not_yet(lesson05.exercise_3(answer))


def test_exercise_3_hint_names_the_label():
    assert lesson05.exercise_3({"C", "E"}).message.startswith("F does keep")
    assert lesson05.exercise_3({"B", "C", "E", "F"}).message.startswith("B keeps no")


def test_a_weak_reference_keeps_nothing_alive():
    # the checkers' premise: a weakref to an activation dies with the graph that saved it
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))
    refs = lesson05._watch_activations(model)
    loss = model(torch.ones(2, 4)).pow(2).mean()
    assert lesson05._alive(refs) == 1
    del loss
    assert lesson05._alive(refs) == 0
    assert all(isinstance(ref, weakref.ref) for ref in refs)


def test_checkers_leave_the_global_rng_alone():
    with global_rng_left_alone():
        lesson05.exercise_1(7300)
        lesson05.exercise_2(with_item)
        lesson05.exercise_3({"C", "E", "F"})
