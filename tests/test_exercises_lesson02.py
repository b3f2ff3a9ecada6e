"""Lesson 02's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint), and never a crash on odd input."""
import pytest
import torch

from checks import (autograd_left_alone, global_rng_left_alone, is_correct, is_not_yet,
                    is_unanswered)
from lesson_checks import lesson02


@pytest.mark.parametrize("check", [lesson02.exercise_1, lesson02.exercise_2,
                                   lesson02.exercise_3])
def test_none_is_unanswered(check):
    assert is_unanswered(check(None))


# Exercise 1: which expressions survive a second backward without retain_graph.

@pytest.mark.parametrize("answer", [{"A", "C", "E"}, ["a", "c", "e"], ("E", "C", "A")])
def test_exercise_1_right(answer):
    assert is_correct(lesson02.exercise_1(answer))


@pytest.mark.parametrize("answer", [
    {"A", "C"},                 # misses a survivor
    {"A", "B", "C", "E"},       # includes one that fails
    set(lesson02.EXPRESSIONS),  # everything
    set(),                      # nothing
    {"A", "C", "E", "F"},       # a.sum() * 3 saves the 3
])
def test_exercise_1_wrong(answer):
    assert is_not_yet(lesson02.exercise_1(answer))


@pytest.mark.parametrize("answer", ["ACE", 42, {"Z"}, [1, 2], [["A"]], object()])
def test_exercise_1_odd_input(answer):
    verdict = lesson02.exercise_1(answer)
    assert is_not_yet(verdict)


def test_exercise_1_hint_names_the_wrong_label():
    assert "B" in lesson02.exercise_1({"A", "B", "C", "E"}).message
    assert "E" in lesson02.exercise_1({"A", "C"}).message


def test_exercise_1_runs_the_expressions():
    survivors = {label for label, text in lesson02.EXPRESSIONS.items()
                 if lesson02._survives_second_backward(text)}
    assert survivors == {"A", "C", "E"}


# Exercise 2: a.grad after d.backward(retain) twice and e.backward(), as k * a.

@pytest.mark.parametrize("answer", [6, 6.0, 6.00001])
def test_exercise_2_right(answer):
    assert is_correct(lesson02.exercise_2(answer))


@pytest.mark.parametrize("answer", [5, 4, 1, 2, 7, -6])
def test_exercise_2_wrong(answer):
    assert is_not_yet(lesson02.exercise_2(answer))


@pytest.mark.parametrize("answer", ["6", True, torch.tensor(6.0), [6], object()])
def test_exercise_2_odd_input(answer):
    assert is_not_yet(lesson02.exercise_2(answer))


# Exercise 3: a function that leaves a.grad = 5a without retain_graph.

def one_pass(a):
    c = (a ** 2) * 2
    (c.mean() + c.sum()).backward()


def list_of_outputs(a):
    c = (a ** 2) * 2
    torch.autograd.backward([c.mean(), c.sum()])


def graph_per_loss(a):  # slower, but keeps nothing alive: accepted
    (a ** 2 * 2).mean().backward()
    (a ** 2 * 2).sum().backward()


@pytest.mark.parametrize("answer", [one_pass, list_of_outputs, graph_per_loss])
def test_exercise_3_right(answer):
    assert is_correct(lesson02.exercise_3(answer))


def with_retain(a):
    c = (a ** 2) * 2
    c.mean().backward(retain_graph=True)
    c.sum().backward()


def the_broken_snippet(a):
    c = (a ** 2) * 2
    c.mean().backward()
    c.sum().backward()


def only_d(a):
    (a ** 2 * 2).mean().backward()


def does_nothing(a):
    pass


def raises(a):
    raise ValueError("not today")


@pytest.mark.parametrize("answer", [with_retain, the_broken_snippet, only_d, does_nothing,
                                    raises, 3, "one_pass", lambda: None])
def test_exercise_3_wrong(answer):
    assert is_not_yet(lesson02.exercise_3(answer))


def test_exercise_3_restores_autograd():
    with autograd_left_alone():
        lesson02.exercise_3(with_retain)
        lesson02.exercise_3(raises)


def test_checkers_leave_the_global_rng_alone():
    with global_rng_left_alone():
        lesson02.exercise_1({"A", "C", "E"})
        lesson02.exercise_2(6)
        lesson02.exercise_3(one_pass)
