"""Lesson 05's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint specific to the slip), and never a crash on odd input."""
import numpy as np
import pytest
import torch
from torch import nn

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from lesson_checks import lesson05
from solutions import solution

CHECKS = [lesson05.exercise_1, lesson05.exercise_2, lesson05.exercise_3]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42j, True, 3.5, float("nan"), object(), {"a": 1}, {1, 2},
              [[1, 2], [3]], lambda: None, torch.tensor([True, False]), torch.tensor(11300.0),
              torch.ones(2, 3)]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS,
                        sample_answers=[None, 11300, {"C"}, len, torch.arange(6.0).view(2, 3)])


# Exercise 1: Linear(10, 40) -> GELU -> Linear(40, 20) -> Tanh -> Linear(20, 3), batch 25.

RIGHT_BYTES = solution("05", 1)  # the lesson's worked solution: x, GELU's input and output, Tanh's, out


def test_exercise_1_measures_what_the_hand_count_says():
    assert lesson05._exercise_1_measured() == RIGHT_BYTES


@pytest.mark.parametrize("answer", [11300, 11300.0, np.int64(11300)])
def test_exercise_1_right(answer):
    assert is_correct(lesson05.exercise_1(answer))


@pytest.mark.parametrize("answer, words", [
    (RIGHT_BYTES - 4 * 25 * 40, ["GELU", "one storage"]),       # GELU counted like ReLU
    (RIGHT_BYTES + 4 * 25 * 20, ["Tanh", "counted once"]),      # Tanh's output twice
    (RIGHT_BYTES - 4 * 25 * 10, ["input batch x"]),             # x forgotten
    (RIGHT_BYTES - 4 * 25 * 3, ["output", "pow(2)"]),           # the output forgotten
    (RIGHT_BYTES - 4 * 25 * 2, ["3 wide"]),                     # the output taken 1 wide
    (RIGHT_BYTES + 4 * (40 * 20 + 20 * 3), ["Wᵀ", "views", "leaves"]),  # saved weights counted
    (RIGHT_BYTES + 4 * 1323, ["parameters", "leaves"]),         # every parameter added
    (RIGHT_BYTES // 4, ["elements"]),                           # elements, not bytes
    # the ReLU formula copied as is: GELU's input missing and the output taken 1 wide
    (4 * 25 * (10 + 40 + 20 + 1), ["two slips", "GELU"]),
])
def test_exercise_1_hints_name_the_slip(answer, words):
    assert is_not_yet(lesson05.exercise_1(answer), *words)


@pytest.mark.parametrize("answer", [0, -11300, 1568, 11301, 11250])
def test_exercise_1_other_wrong_answers_get_the_general_hint(answer):
    assert is_not_yet(lesson05.exercise_1(answer), "each storage once")


def test_exercise_1_no_slip_lands_on_the_right_answer():
    assert RIGHT_BYTES not in lesson05._exercise_1_hints(RIGHT_BYTES)


def test_exercise_1_asks_for_a_plain_number():
    assert is_not_yet(lesson05.exercise_1(torch.tensor(11300)), ".item()")


# Exercise 2: which snippets still hold saved tensors once they finish.

KEEPERS = solution("05", 2)


def test_exercise_2_runs_the_snippets():
    keepers = {label for label, text in lesson05.SNIPPETS.items()
               if lesson05._holds_saved_tensors(text)}
    assert keepers == KEEPERS


@pytest.mark.parametrize("answer", [KEEPERS, ["a", "c", "e", "f"], ("F", " E", "C", "A")])
def test_exercise_2_right(answer):
    assert is_correct(lesson05.exercise_2(answer))


@pytest.mark.parametrize("answer, label", [
    ({"C", "E", "F"}, "A"),            # believes eval() stops the graph
    ({"A", "B", "C", "E", "F"}, "B"),  # B keeps nodes, not saved tensors
    ({"A", "C", "E"}, "F"),            # misses that `loss` still names the last graph
    ({"A", "E", "F"}, "C"),            # misses what the retained last graph keeps
    ({"A", "C", "D", "E", "F"}, "D"),  # believes no_grad still saves
    ({"A", "C", "F"}, "E"),            # misses the classic leak
    ({"E"}, "A"),                      # the classic leak alone: A comes first
    (set(lesson05.SNIPPETS), "B"),     # everything
    (set(), "A"),                      # nothing
])
def test_exercise_2_hint_names_a_wrong_label_and_asks(answer, label):
    verdict = lesson05.exercise_2(answer)
    assert is_not_yet(verdict, f"look again at {label}:", lesson05.look_again(label))


def test_exercise_2_hint_does_not_say_which_way():
    message = lesson05.exercise_2({"A", "B", "C", "E", "F"}).message
    assert "keeps no" not in message and "does keep" not in message


@pytest.mark.parametrize("answer", ["ACEF", {"Z"}, [1, 2], [["C"]]])
def test_exercise_2_odd_input(answer):
    assert is_not_yet(lesson05.exercise_2(answer))


# Exercise 3: evaluate, fixed: the same results, no graph piling up or left behind.

def leaky(model, batches):  # the notebook's evaluate
    model.eval()
    total_loss, predictions = 0, []
    for x, y in batches:
        out = model(x)
        total_loss += nn.functional.mse_loss(out, y)
        predictions.append(out)
    return total_loss / len(batches), torch.cat(predictions)


def with_no_grad(model, batches):
    with torch.no_grad():
        return leaky(model, batches)


def with_item_and_detach(model, batches):
    total_loss, predictions = 0, []
    for x, y in batches:
        out = model(x)
        total_loss += nn.functional.mse_loss(out, y).item()
        predictions.append(out.detach())
    return total_loss / len(batches), torch.cat(predictions)


def with_inference_mode(model, batches):
    with torch.inference_mode():
        outputs = [model(x) for x, _ in batches]
        losses = [nn.functional.mse_loss(out, y) for out, (_, y) in zip(outputs, batches)]
    return sum(losses).item() / len(batches), torch.cat(outputs)


@pytest.mark.parametrize("answer", [solution("05", 3), with_no_grad, with_item_and_detach,
                                    with_inference_mode])
def test_exercise_3_right(answer):
    assert is_correct(lesson05.exercise_3(answer))


def fixes_the_loss_only(model, batches):
    total_loss, predictions = 0, []
    for x, y in batches:
        out = model(x)
        total_loss += nn.functional.mse_loss(out, y).item()
        predictions.append(out)
    return total_loss / len(batches), torch.cat(predictions)


def fixes_the_predictions_only(model, batches):
    total_loss, predictions = 0, []
    for x, y in batches:
        out = model(x)
        total_loss += nn.functional.mse_loss(out, y)
        predictions.append(out.detach())
    return total_loss / len(batches), torch.cat(predictions)


def detaches_at_the_end(model, batches):  # nothing left after, but the graphs piled up
    average, predictions = leaky(model, batches)
    return average.item(), predictions.detach()


KEPT = []


def keeps_outputs_outside(model, batches):
    with torch.no_grad():
        average, predictions = leaky(model, batches)
    KEPT.extend(model(x) for x, _ in batches)
    return average, predictions


def runs_backward(model, batches):
    total_loss, predictions = 0, []
    for x, y in batches:
        out = model(x)
        loss = nn.functional.mse_loss(out, y)
        loss.backward()  # "frees the graph"
        total_loss += loss.item()
        predictions.append(out.detach())
    return total_loss / len(batches), torch.cat(predictions)


def switches_grad_off(model, batches):
    torch.set_grad_enabled(False)
    return leaky(model, batches)


def freezes_the_model(model, batches):
    model.requires_grad_(False)
    return leaky(model, batches)


def returns_the_total(model, batches):
    average, predictions = with_no_grad(model, batches)
    return average * len(batches), predictions


def returns_the_last_loss(model, batches):
    with torch.no_grad():
        for x, y in batches:
            loss = nn.functional.mse_loss(model(x), y).item()
        return loss, torch.cat([model(x) for x, _ in batches])


def returns_a_list_of_predictions(model, batches):
    with torch.no_grad():
        return leaky(model, batches)[0], [model(x) for x, _ in batches]


def returns_the_last_predictions(model, batches):
    average, _ = with_no_grad(model, batches)
    with torch.no_grad():
        return average, model(batches[-1][0])


def returns_shuffled_predictions(model, batches):
    average, predictions = with_no_grad(model, batches)
    return average, predictions.flip(0)


def returns_the_average_only(model, batches):
    return with_no_grad(model, batches)[0]


def never_runs_the_model(model, batches):
    return 0.0, torch.zeros(32, 1)


def raises(model, batches):
    raise ValueError("not today")


@pytest.mark.parametrize("answer, words", [
    (leaky, ["returns the average loss and the predictions with a graph", "4 of the 4"]),
    (fixes_the_loss_only, ["returns the predictions with a graph"]),
    (fixes_the_predictions_only, ["returns the average loss with a graph"]),
    (detaches_at_the_end, ["pile up", "3 earlier"]),
    (keeps_outputs_outside, ["still alive", "outside"]),
    (runs_backward, ["backward", ".grad"]),
    (switches_grad_off, ["switched off", "`with` block"]),
    (freezes_the_model, ["requires_grad"]),
    (returns_the_total, ["total", "len(batches)"]),
    (returns_the_last_loss, ["last batch"]),
    (returns_a_list_of_predictions, ["one tensor", "a list"]),
    (returns_the_last_predictions, ["shape (32, 1)"]),
    (returns_shuffled_predictions, ["in order"]),
    (returns_the_average_only, ["two things"]),
    (never_runs_the_model, ["never ran the model"]),
    (raises, ["ValueError: not today"]),
    ("evaluate_fixed", ["a function"]),
])
def test_exercise_3_hints_name_the_problem(answer, words):
    try:
        assert is_not_yet(lesson05.exercise_3(answer), *words)
    finally:
        KEPT.clear()
        torch.set_grad_enabled(True)


def test_exercise_3_names_a_lone_tensor_with_a_graph():
    def returns_one_tensor(model, batches):
        return leaky(model, batches)[1]
    assert is_not_yet(lesson05.exercise_3(returns_one_tensor), "returns a tensor with a graph")


def test_exercise_3_puts_grad_mode_back():
    lesson05.exercise_3(switches_grad_off)
    assert torch.is_grad_enabled()


def test_the_watch_sees_graphs_pile_up_and_go():
    # the checkers' premise: a weak reference to an activation dies with the graph that
    # saved it, and an evaluation with a fixed loop keeps at most one graph at a time
    model, batches = lesson05._exercise_3_setup()
    watch = lesson05._ActivationWatch(model)
    kept = leaky(model, batches)
    assert watch.alive_at_forward == [0, 1, 2, 3] and watch.alive() == len(batches)
    del kept
    assert watch.alive() == 0
    with_item_and_detach(model, batches)
    assert watch.alive_at_forward[4:] == [0, 1, 1, 1] and watch.alive() == 0


def test_checkers_leave_the_global_rng_and_autograd_alone():
    with global_rng_left_alone(), autograd_left_alone():
        lesson05.exercise_1(RIGHT_BYTES)
        lesson05.exercise_2(KEEPERS)
        lesson05.exercise_3(with_no_grad)
        lesson05.exercise_3(runs_backward)
        lesson05.exercise_3(raises)
