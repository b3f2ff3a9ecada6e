"""Lesson 05's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint specific to the slip), and never a crash on odd input."""
import copy
import re
import weakref
from collections import Counter

import numpy as np
import pytest
import torch
from torch import nn

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from lesson_checks import lesson05, set_language
from solutions import solution

CHECKS = [lesson05.exercise_1, lesson05.exercise_2, lesson05.exercise_3]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42j, True, 3.5, float("nan"), object(), {"a": 1}, {1, 2},
              [[1, 2], [3]], lambda: None, torch.tensor([True, False]), torch.tensor(11300.0),
              torch.ones(2, 3)]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS,
                        sample_answers=[None, 11300, [(25, 10)], {"C"}, len,
                                    torch.arange(6.0).view(2, 3)])


# Exercise 1: Linear(10, 40) -> GELU -> Linear(40, 20) -> Tanh -> Linear(20, 3), batch 25:
# the shapes of the storages retained_bytes counts, one per storage.

RIGHT_SHAPES = solution("05", 1)  # the lesson's worked solution
RIGHT_BYTES = 4 * 25 * (10 + 40 + 40 + 20 + 3)


def test_exercise_1_solution_is_what_the_graph_keeps():
    assert Counter(RIGHT_SHAPES) == lesson05._exercise_1_storages()
    assert lesson05._exercise_1_measured() == RIGHT_BYTES == 11300
    assert sum(4 * a * b for a, b in RIGHT_SHAPES) == RIGHT_BYTES


@pytest.mark.parametrize("answer", [
    RIGHT_SHAPES, tuple(reversed(RIGHT_SHAPES)), [list(s) for s in RIGHT_SHAPES],
    [torch.Size(s) for s in RIGHT_SHAPES], [(np.int64(a), b) for a, b in RIGHT_SHAPES]])
def test_exercise_1_right(answer):
    verdict = lesson05.exercise_1(answer)
    assert is_correct(verdict) and "11300 bytes" in verdict.message


@pytest.mark.parametrize("answer", [11300, 11300.0, np.int64(11300), torch.tensor(11300)])
def test_exercise_1_refuses_a_pasted_byte_count(answer):
    # the loophole: retained_bytes(loss) run on the model and pasted, no counting done
    assert is_not_yet(lesson05.exercise_1(answer), "not a number", "shapes")


GELU_OUT, TANH_OUT = (25, 40), (25, 20)
# GELU and Tanh taken the wrong way round: GELU saving only its output, Tanh its input and
# its output; five entries for five storages
SWAPPED = [(25, 10), GELU_OUT, TANH_OUT, TANH_OUT, (25, 3)]


def without(shapes, shape):
    shapes = list(shapes)
    shapes.remove(shape)
    return shapes


@pytest.mark.parametrize("answer, words", [
    (without(RIGHT_SHAPES, GELU_OUT), ["storage is missing", "input or its output"]),  # GELU as ReLU
    (without(RIGHT_SHAPES, (25, 10)), ["missing", "first Linear"]),                   # x forgotten
    (without(RIGHT_SHAPES, (25, 3)), ["missing", "pow(2)"]),                          # out forgotten
    (RIGHT_SHAPES + [TANH_OUT],                                                       # Tanh twice,
     ["more entries than storages", "listed once", "input or its output"]),           # or its input too
    (RIGHT_SHAPES + [(25, 10)], ["more entries than storages", "listed once"]),       # x twice
    (SWAPPED, ["right number of storages", "which activation saves its input"]),      # swapped
    ([(25, 40), (25, 40), TANH_OUT, TANH_OUT, (25, 3)],                               # x forgotten,
     ["right number of storages", "for each node from the loss back", "counted twice"]),  # Tanh twice
    ([(25, 10), (25, 40), (25, 40), TANH_OUT, TANH_OUT],                              # out forgotten,
     ["right number of storages", "for each node from the loss back", "counted twice"]),  # Tanh twice
    ([(25, 40), (25, 40), TANH_OUT, TANH_OUT],                                        # x and out
     ["listed more often", "for each node from the loss back"]),                      # forgotten
    (without(without(RIGHT_SHAPES, GELU_OUT), GELU_OUT) + [TANH_OUT],                  # Tanh twice,
     ["listed more often", "missing", "input or its output"]),                        # GELU none
    (RIGHT_SHAPES + [(40, 20), (20, 3)], ["Wᵀ", "leaves"]),                           # saved weights
    (RIGHT_SHAPES + [(40, 10)], ["parameter", "leaves"]),                             # a parameter
    (set(RIGHT_SHAPES), ["a set", "list"]),                                           # one (25, 40) lost
    ([(b, a) for a, b in RIGHT_SHAPES], ["batch first"]),                            # transposed
    (without(RIGHT_SHAPES, (25, 3)) + [(25, 1)], ["(25, 1) is not the shape"]),       # out taken 1 wide
])
def test_exercise_1_hints_point_at_the_reasoning(answer, words):
    assert is_not_yet(lesson05.exercise_1(answer), *words)


def test_exercise_1_missing_hint_asks_about_one_kind_of_omission():
    # one question per kind (the batch, what pow(2) saves, an activation), never the checklist
    for answer in (without(RIGHT_SHAPES, (25, 10)), without(RIGHT_SHAPES, (25, 3)),
                   without(RIGHT_SHAPES, TANH_OUT)):
        message = lesson05.exercise_1(answer).message
        assert message.rstrip().endswith("?"), message
        assert sum(topic in message for topic in ("first Linear", "pow(2)", "activation")) == 1


def test_exercise_1_hints_do_not_name_the_entry_to_change():
    # the duplicated and the missing shape are not named: no toggling entries to a tick
    for answer in (RIGHT_SHAPES + [TANH_OUT], without(RIGHT_SHAPES, GELU_OUT), SWAPPED):
        message = lesson05.exercise_1(answer).message
        assert "(25, 20)" not in message and "(25, 40)" not in message


@pytest.mark.parametrize("answer", [
    without(RIGHT_SHAPES, GELU_OUT), without(without(RIGHT_SHAPES, GELU_OUT), (25, 3)),
    RIGHT_SHAPES[:1], [(25, 10), (25, 10)]])
def test_exercise_1_missing_hint_does_not_give_the_count(answer):
    # the loophole of the old hint, "N storage(s) missing": adding or dropping entries until
    # N reached 0 found the answer by toggling; no number in the message now
    assert is_not_yet(lesson05.exercise_1(answer), "missing")
    try:
        for code in ("en", "ko"):
            set_language(code)
            message = lesson05.exercise_1(answer).message
            assert not any(digit in message.replace("pow(2)", "") for digit in "0123456789"), message
    finally:
        set_language("en")


@pytest.mark.parametrize("answer", [
    [(25, 40), (25, 40), TANH_OUT, TANH_OUT, (25, 3)],   # x forgotten, Tanh's output twice
    [(25, 10), (25, 40), (25, 40), TANH_OUT, TANH_OUT],  # pow's saved output forgotten, same
    [(25, 40), (25, 40), TANH_OUT, TANH_OUT],            # both forgotten, same
])
def test_exercise_1_activation_hint_only_when_the_slip_is_an_activations(answer):
    # the old hint asked "which activation saves its input?" whenever the count was right,
    # pointing away from the forgotten batch or output; now only when every shape too many
    # and too few is an activation's input or output
    message = lesson05.exercise_1(answer).message
    assert "activation" not in message
    assert "(25, 20)" not in message and "(25, 10)" not in message and "(25, 3)" not in message


def test_exercise_1_swap_is_not_called_too_many_entries():
    # the loophole of the old hint: five entries for five storages, told "more entries"
    assert len(SWAPPED) == sum(lesson05._exercise_1_storages().values())
    assert "more entries" not in lesson05.exercise_1(SWAPPED).message


@pytest.mark.parametrize("answer", [[], (), set()])
def test_exercise_1_empty_answer_does_not_give_the_count(answer):
    # an empty list must not be a way to read how many storages there are
    message = lesson05.exercise_1(answer).message
    assert is_not_yet(lesson05.exercise_1(answer), "empty")
    assert not any(digit in message for digit in "0123456789")


def test_exercise_1_example_is_not_a_right_shape():
    # the placeholder's example shapes give none of the answer away
    example = eval(lesson05.SHAPES_EXAMPLE)
    assert not set(example) & set(lesson05._exercise_1_storages())


@pytest.mark.parametrize("answer", [[(25, 0)], [(25.0, 10)], [(True, 10)], ["25, 10"],
                                    [[(25, 10)]], "[(25, 10)]", {(25, 10): 1}])
def test_exercise_1_odd_shapes_get_a_hint(answer):
    assert is_not_yet(lesson05.exercise_1(answer), "list of shapes")


@pytest.mark.parametrize("answer, entry", [
    ([(25.0, 10), (25, 40)], "(25.0, 10)"), ([(25, 10), (25, 0)], "(25, 0)"),
    ([(25, 10), "25, 3"], "'25, 3'"), ([[(25, 10)]], "[(25, 10)]"), ([(True, 10)], "(True, 10)")])
def test_exercise_1_hint_names_the_entry_that_is_not_a_shape(answer, entry):
    # "each a tuple of positive whole numbers; got a list" left the reader looking for the
    # slip in a list that is a list: the entry that is not a shape is named
    assert is_not_yet(lesson05.exercise_1(answer), "list of shapes", f"the entry {entry} is not one")


# Exercise 2: which snippets still hold saved tensors once they finish.

KEEPERS = solution("05", 2)


def test_exercise_2_runs_the_snippets():
    keepers = {label for label, text in lesson05.SNIPPETS.items()
               if lesson05._holds_saved_tensors(text)}
    assert keepers == KEEPERS


@pytest.mark.parametrize("answer", [KEEPERS, ["a", "c", "e", "f"], ("F", " E", "C", "A")])
def test_exercise_2_right(answer):
    assert is_correct(lesson05.exercise_2(answer))


WRONG_SETS = [
    {"C", "E", "F"},            # believes eval() stops the graph
    {"A", "B", "C", "E", "F"},  # B keeps nodes, not saved tensors
    {"A", "C", "E"},            # misses that `loss` still names the last graph
    {"A", "E", "F"},            # misses what the retained last graph keeps
    {"A", "C", "D", "E", "F"},  # believes no_grad still saves
    {"A", "C", "F"},            # misses the classic leak
    {"E"},                      # the classic leak alone
    set(lesson05.SNIPPETS),     # everything
    set(),                      # nothing
]


@pytest.mark.parametrize("answer", WRONG_SETS)
def test_exercise_2_hint_asks_the_question(answer):
    assert is_not_yet(lesson05.exercise_2(answer), lesson05.look_again())


def test_exercise_2_hint_is_the_same_for_every_wrong_answer():
    # the loophole of a hint naming a wrong label (or how many are wrong): flip labels one
    # at a time until the verdict turns, in six tries; the same message tells nothing
    messages = {lesson05.exercise_2(answer).message for answer in WRONG_SETS}
    assert len(messages) == 1
    message = messages.pop()
    assert not any(re.search(rf"\b{label}\b", message) for label in lesson05.SNIPPETS)
    assert not any(digit in message for digit in "0123456789")


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
    model.eval()
    return detach_without_eval(model, batches)


def with_inference_mode(model, batches):
    model.eval()
    with torch.inference_mode():
        outputs = [model(x) for x, _ in batches]
        losses = [nn.functional.mse_loss(out, y) for out, (_, y) in zip(outputs, batches)]
    return sum(losses).item() / len(batches), torch.cat(outputs)


def puts_training_mode_back(model, batches):  # evaluates in eval mode, then restores it
    was_training = model.training
    try:
        return with_no_grad(model, batches)
    finally:
        model.train(was_training)


@pytest.mark.parametrize("answer", [solution("05", 3), with_no_grad, with_item_and_detach,
                                    with_inference_mode, puts_training_mode_back])
def test_exercise_3_right(answer):
    assert is_correct(lesson05.exercise_3(answer))


def on_a_copy(model, batches):  # evaluates a deep copy: the copy carries the checker's hooks
    model = copy.deepcopy(model)
    return with_no_grad(model, batches)


def test_exercise_3_accepts_a_deep_copy_of_the_model():
    # the watch's hooks are copied with the model: they must still report to the checker
    try:
        for code, word in (("en", "average loss"), ("ko", "평균 손실")):
            set_language(code)
            verdict = lesson05.exercise_3(on_a_copy)
            assert is_correct(verdict) and word in verdict.message, verdict
    finally:
        set_language("en")


def no_grad_without_eval(model, batches):  # the loophole: no graph, but model.eval() dropped
    with torch.no_grad():
        outputs = [model(x) for x, _ in batches]
        losses = [nn.functional.mse_loss(out, y).item() for out, (_, y) in zip(outputs, batches)]
    return sum(losses) / len(losses), torch.cat(outputs)


def detach_without_eval(model, batches):
    total_loss, predictions = 0, []
    for x, y in batches:
        out = model(x)
        total_loss += nn.functional.mse_loss(out, y).item()
        predictions.append(out.detach())
    return total_loss / len(batches), torch.cat(predictions)


def evaluates_the_dropout_alone_in_training_mode(model, batches):
    model.eval()
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.train()
    return no_grad_without_eval(model, batches)


@pytest.mark.parametrize("answer", [no_grad_without_eval, detach_without_eval,
                                    evaluates_the_dropout_alone_in_training_mode])
def test_exercise_3_refuses_a_fix_that_drops_eval(answer):
    # the loophole: `with torch.no_grad():` without `model.eval()` keeps no graph, but the
    # checker's model has Dropout, so the results depend on eval mode (section 3: eval() and
    # no_grad() do different jobs); the hint says why, before any "wrong average" hint
    assert is_not_yet(lesson05.exercise_3(answer), "training mode", "Dropout", "keep model.eval()")


def test_exercise_3_model_gives_other_results_without_eval():
    # the premise of the refusal: without eval() the results really differ
    model, batches = lesson05._exercise_3_setup()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        average, _ = no_grad_without_eval(model, batches)
    assert abs(average - lesson05._exercise_3_expected()[0]) > 1e-3


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
    model.eval()
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


def runs_once_then_copies_the_key(model, batches):  # the loophole: one run, the checker's answer
    model.eval()
    with torch.no_grad():
        model(batches[0][0])
    return lesson05._exercise_3_expected()[:2]


def runs_the_layers_by_hand_on_the_rest(model, batches):  # the model runs on one batch only
    model.eval()
    first, _, _, last = model  # Linear, ReLU, Dropout (off in eval mode), Linear
    with torch.no_grad():
        outputs = [model(batches[0][0])] + [last(first(x).relu()) for x, _ in batches[1:]]
    losses = [nn.functional.mse_loss(out, y).item() for out, (_, y) in zip(outputs, batches)]
    return sum(losses) / len(losses), torch.cat(outputs)


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
    (runs_once_then_copies_the_key, ["ran the model 1 time(s) for 4 batches"]),
    (runs_the_layers_by_hand_on_the_rest, ["ran the model 1 time(s) for 4 batches"]),
    (raises, ["ValueError: not today"]),
    ("evaluate_fixed", ["a function"]),
])
def test_exercise_3_hints_name_the_problem(answer, words):
    try:
        assert is_not_yet(lesson05.exercise_3(answer), *words)
    finally:
        KEPT.clear()
        torch.set_grad_enabled(True)


def reattaches_a_graph(model, batches):
    # nothing saved stays alive, but the results still carry a grad_fn
    average, predictions = with_no_grad(model, batches)
    return average * torch.ones((), requires_grad=True), predictions.requires_grad_() * 1


def returns_predictions_with_a_graph_only(model, batches):
    average, predictions = with_no_grad(model, batches)
    return average.item(), predictions.requires_grad_() + 0


@pytest.mark.parametrize("answer, words", [
    (reattaches_a_graph, ["the average loss and the predictions", "grad_fn"]),
    (returns_predictions_with_a_graph_only, ["returns the predictions", "grad_fn"]),
])
def test_exercise_3_refuses_results_with_a_grad_fn(answer, words):
    # the loophole: returned tensors that still have a grad_fn, though no activation is alive
    verdict = lesson05.exercise_3(answer)
    assert is_not_yet(verdict, *words)


def test_the_watch_follows_storages_not_tensor_objects():
    # a saved output is kept as a new tensor object over its storage: a weak reference to
    # the output tensor dies while the graph still holds its memory; the watch does not
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh())
    watch = lesson05._ActivationWatch(model)
    out = model(torch.randn(8, 16))
    tensor_ref = weakref.ref(out)
    kept = out.sum()  # sum saves nothing; TanhBackward0 saves its result
    del out
    assert tensor_ref() is None and watch.alive() == 1
    del kept
    assert watch.alive() == 0


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
        lesson05.exercise_1(RIGHT_SHAPES)
        lesson05.exercise_1(RIGHT_BYTES)
        lesson05.exercise_2(KEEPERS)
        lesson05.exercise_3(with_no_grad)
        lesson05.exercise_3(no_grad_without_eval)  # its Dropout draws random numbers
        lesson05.exercise_3(runs_backward)
        lesson05.exercise_3(raises)
