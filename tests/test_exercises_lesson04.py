"""Lesson 04's check cells: unanswered for None, correct for right answers, not yet (with a
hint) for wrong or odd ones, and never an exception."""
import pytest
import torch
import torch.nn.functional as F

from checks import global_rng_left_alone, is_correct, is_not_yet, is_unanswered
from lesson_checks.lesson04 import exercise_1, exercise_2, exercise_3

LOSS1_PARAMETERS = {"trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias",
                    "regression_head.weight", "regression_head.bias"}


# Exercise 1: the parameters whose .grad loss1.backward() fills ------------------------

def test_exercise_1_unanswered():
    assert is_unanswered(exercise_1(None))


@pytest.mark.parametrize("answer", [LOSS1_PARAMETERS, sorted(LOSS1_PARAMETERS),
                                    tuple(LOSS1_PARAMETERS), frozenset(LOSS1_PARAMETERS)])
def test_exercise_1_correct(answer):
    assert is_correct(exercise_1(answer))


@pytest.mark.parametrize("answer, hint", [
    (LOSS1_PARAMETERS | {"classification_head.weight", "classification_head.bias"},
     "never reaches classification_head"),
    ({"regression_head.weight", "regression_head.bias"}, "shared trunk"),
    (LOSS1_PARAMETERS - {"trunk.0.bias"}, "shared trunk"),
    ({"trunk.0.weight", "trunk.0.bias", "trunk.2.weight", "trunk.2.bias"}, "regression head"),
    (set(), "shared trunk"),
    ({"trunk.1.weight"}, "not a parameter"),
    ({"fc.weight", "trunk.0.weight"}, "model.named_parameters()"),
])
def test_exercise_1_wrong_answers(answer, hint):
    assert is_not_yet(exercise_1(answer), hint)


def names_then_an_error():
    yield "trunk.0.weight"
    raise ValueError("no more names")


@pytest.mark.parametrize("answer", ["trunk.0.weight", 6, 0.3, {1, 2}, [None], object(),
                                    {"trunk.0.weight": 1}, torch.tensor([1, 2]),
                                    names_then_an_error()])
def test_exercise_1_odd_input(answer):
    assert is_not_yet(exercise_1(answer))


# Exercise 2: the gradient of 0.3 * loss1 + 0.7 * loss2 from g1 and g2 ----------------

def test_exercise_2_unanswered():
    assert is_unanswered(exercise_2(None))


@pytest.mark.parametrize("answer", [
    lambda g1, g2: 0.3 * g1 + 0.7 * g2,
    lambda g1, g2: torch.add(g1 * 0.3, g2, alpha=0.7),
    lambda g1, g2: g1.mul_(0.3).add_(0.7 * g2),  # in place on its inputs: allowed
    lambda g1, g2: torch.stack([g1, g2]).mul(torch.tensor([0.3, 0.7]).view(-1, *[1] * g1.dim())).sum(0),
    lambda g1, g2: 0.3 * g1.double() + 0.7 * g2.double(),  # another float dtype, same values
])
def test_exercise_2_correct(answer):
    assert is_correct(exercise_2(answer))


@pytest.mark.parametrize("answer, hint", [
    (lambda g1, g2: g1 + g2, "loss1 + loss2"),
    (lambda g1, g2: 0.7 * g1 + 0.3 * g2, "swapped"),
    (lambda g1, g2: (0.3 * g1 + 0.7 * g2) / 2, "a * grad(f) + b * grad(g)"),
    (lambda g1, g2: 0.3 * g1, "a * grad(f) + b * grad(g)"),
    (lambda g1, g2: (0.3 * g1 + 0.7 * g2).sum(), "shape"),
    (lambda g1, g2: None, "return a tensor"),
    (lambda g1, g2: 0.3, "return a tensor"),
    (lambda g1: 0.3 * g1, "TypeError"),
    (lambda g1, g2: 1 / 0, "ZeroDivisionError"),
    (lambda g1, g2: (0.3 * g1 + 0.7 * g2).long(), "a * grad(f) + b * grad(g)"),
    (lambda g1, g2: torch.zeros_like(g1, dtype=torch.complex64), "a * grad(f) + b * grad(g)"),
])
def test_exercise_2_wrong_answers(answer, hint):
    assert is_not_yet(exercise_2(answer), hint)


@pytest.mark.parametrize("answer", ["0.3 * g1 + 0.7 * g2", 0.3, [0.3, 0.7], torch.tensor(1.0)])
def test_exercise_2_odd_input(answer):
    assert is_not_yet(exercise_2(answer), "function")


# Exercise 3: a training step on the weighted loss with one backward pass --------------

def losses(model, x, y_reg, y_cls):
    prediction, logits = model(x)
    return F.mse_loss(prediction, y_reg), F.cross_entropy(logits, y_cls)


def right_step(model, optimizer, x, y_reg, y_cls):
    optimizer.zero_grad()
    loss1, loss2 = losses(model, x, y_reg, y_cls)
    (0.3 * loss1 + 0.7 * loss2).backward()
    optimizer.step()


def right_step_with_a_list(model, optimizer, x, y_reg, y_cls):
    model.zero_grad()
    loss1, loss2 = losses(model, x, y_reg, y_cls)
    torch.autograd.backward([0.3 * loss1, 0.7 * loss2])  # one backward pass from both
    optimizer.step()


def two_backward_calls(model, optimizer, x, y_reg, y_cls):
    optimizer.zero_grad()
    loss1, loss2 = losses(model, x, y_reg, y_cls)
    (0.3 * loss1).backward(retain_graph=True)
    (0.7 * loss2).backward()
    optimizer.step()


def two_forward_passes(model, optimizer, x, y_reg, y_cls):
    optimizer.zero_grad()
    loss1, _ = losses(model, x, y_reg, y_cls)
    _, loss2 = losses(model, x, y_reg, y_cls)
    (0.3 * loss1 + 0.7 * loss2).backward()
    optimizer.step()


def without_retain_graph(model, optimizer, x, y_reg, y_cls):
    optimizer.zero_grad()
    loss1, loss2 = losses(model, x, y_reg, y_cls)
    (0.3 * loss1).backward()
    (0.7 * loss2).backward()
    optimizer.step()


def step_between(model, optimizer, x, y_reg, y_cls):
    optimizer.zero_grad()
    loss1, loss2 = losses(model, x, y_reg, y_cls)
    (0.3 * loss1).backward(retain_graph=True)
    optimizer.step()
    (0.7 * loss2).backward()


def weighted_step(weight1, weight2, zero_grad=True, step=True):
    def train_step(model, optimizer, x, y_reg, y_cls):
        if zero_grad:
            optimizer.zero_grad()
        loss1, loss2 = losses(model, x, y_reg, y_cls)
        (weight1 * loss1 + weight2 * loss2).backward()
        if step:
            optimizer.step()
    return train_step


def with_its_own_data(model, optimizer, x, y_reg, y_cls):
    right_step(model, optimizer, x[:32], y_reg[:32], y_cls[:32])


def in_double_precision(model, optimizer, x, y_reg, y_cls):
    """Right, in another dtype: the check compares values, and must not crash on it."""
    model.double()
    right_step(model, optimizer, x.double(), y_reg.double(), y_cls)


def test_exercise_3_unanswered():
    assert is_unanswered(exercise_3(None))


@pytest.mark.parametrize("answer", [right_step, right_step_with_a_list, in_double_precision])
def test_exercise_3_correct(answer):
    assert is_correct(exercise_3(answer))


@pytest.mark.parametrize("answer, hint", [
    (two_backward_calls, "ran through the trunk 4 times"),
    (two_forward_passes, "ran through the trunk 4 times"),
    (without_retain_graph, "saved tensors freed"),
    (step_between, "updated between two backward calls"),
    (weighted_step(1.0, 1.0), "loss1 + loss2"),
    (weighted_step(0.7, 0.3), "swapped"),
    (weighted_step(0.3, 0.7, zero_grad=False), "zero_grad"),
    (weighted_step(0.3, 0.7, step=False), "did not change"),
    (weighted_step(0.3, 0.0), "only loss1"),
    (weighted_step(0.0, 0.7), "only loss2"),
    (weighted_step(0.5, 0.5), "y_reg and y_cls passed in"),
    (with_its_own_data, "y_reg and y_cls passed in"),
    (lambda model, optimizer: None, "TypeError"),
    (lambda *args: (_ for _ in ()).throw(ValueError("no")), "ValueError: no"),
])
def test_exercise_3_wrong_answers(answer, hint):
    assert is_not_yet(exercise_3(answer), hint)


@pytest.mark.parametrize("answer", ["train_step", 3, [right_step]])
def test_exercise_3_odd_input(answer):
    assert is_not_yet(exercise_3(answer), "function")


def test_the_checks_leave_the_readers_random_state_alone():
    with global_rng_left_alone():
        exercise_1(LOSS1_PARAMETERS)
        exercise_2(lambda g1, g2: 0.3 * g1 + 0.7 * g2)
        exercise_3(right_step)
