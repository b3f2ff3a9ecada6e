"""Lesson 02's checkers: unanswered for None, correct for a right answer, a hint of its
own for each kind of wrong answer, and never a crash or a multi-line verdict on odd input."""
import re

import nbformat
import numpy
import pytest
import torch
from torch.autograd import backward as imported_backward  # bound before any checker runs

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from project import ROOT
from lesson_checks import lesson02
from lesson_checks.language import set_language
from solutions import solution

NOTEBOOK = ROOT / "notebooks" / "02_retain_graph.ipynb"
# The Korean edition shows the same exercises, in Korean (notebooks/ko).
NOTEBOOKS = {"en": NOTEBOOK, "ko": ROOT / "notebooks" / "ko" / NOTEBOOK.name}
EXERCISE_HEADING = {"en": "### Exercise {}", "ko": "### 연습 문제 {}"}

CHECKS = [lesson02.exercise_1, lesson02.exercise_2, lesson02.exercise_3]
ODD_INPUTS = ["ACE", 42, 2.5, {"Z"}, [1, 2], [["A"]], {"A": 1}, torch.tensor([1.0, 2.0]),
              object()]
SAMPLE_ANSWERS = [None, {"A"}, {"A", "B", "C", "D", "E", "F"}, set(), "A",
                  torch.ones(2, 3), [torch.zeros(4)], lambda a: None, 3.5, object()]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, SAMPLE_ANSWERS)


def exercise_markdown(number, language="en"):
    notebook = nbformat.read(NOTEBOOKS[language], as_version=4)
    heading = EXERCISE_HEADING[language].format(number)
    return next(c.source for c in notebook.cells if c.cell_type == "markdown"
                and heading in c.source)


@pytest.fixture
def speaking():
    """set_language for one test; English again afterwards, whatever happened."""
    yield set_language
    set_language("en")


# Exercise 1: which expressions survive a second backward without retain_graph.

SURVIVORS = solution("02", 1)  # the lesson's worked solution


def test_exercise_1_survivors_come_from_running_pytorch():
    assert {label for label in lesson02.EXPRESSIONS
            if lesson02._survives_second_backward(label)} == SURVIVORS


@pytest.mark.parametrize("language", NOTEBOOKS)
def test_exercise_1_notebook_lists_what_the_checker_runs(language):
    listed = dict(re.findall(r"^- ([A-Z]): `(.+)`$", exercise_markdown(1, language),
                             re.MULTILINE))
    assert listed == lesson02.EXPRESSIONS


@pytest.mark.parametrize("answer", [SURVIVORS, ["a", "c", "e"], ("E", "C", "A"),
                                    frozenset(SURVIVORS)])
def test_exercise_1_right(answer):
    assert is_correct(lesson02.exercise_1(answer))


def _names_no_label(message, labels):
    """No label ("B,", "B:", "B is") and no labelled expression appears in the message."""
    return not re.search(LABEL_NAMED, message) and not any(text in message for text in labels)


LABEL_NAMED = r"\b[A-F](,|:| is\b| does\b| survives\b)"


EXPRESSION_WRONG_ANSWERS = [SURVIVORS | {"B"}, SURVIVORS - {"A"}, {"A"}, {"B"}, {"F"}, set(),
                            set(lesson02.EXPRESSIONS), {"B", "D", "F"}]


def test_exercise_1_every_wrong_answer_gets_the_same_reasoning():
    # one message whatever is wrong: answering one label at a time tells nothing about it
    messages = {lesson02.exercise_1(answer).message for answer in EXPRESSION_WRONG_ANSWERS}
    assert len(messages) == 1
    verdict = lesson02.exercise_1({"A"})
    assert is_not_yet(verdict, "gradient formula needs a value", "saves nothing",
                      "saved_tensors")
    assert _names_no_label(verdict.message, lesson02.EXPRESSIONS.values())


def test_exercise_1_two_single_label_probes_get_the_same_message():
    # {"A"} (a survivor) and {"B"} (one that fails) must not be told apart
    assert lesson02.exercise_1({"A"}).message == lesson02.exercise_1({"B"}).message


def test_exercise_1_korean_hint_is_the_same_reasoning(speaking):
    speaking("ko")
    verdict = lesson02.exercise_1(SURVIVORS | {"B"})
    assert is_not_yet(verdict, "saved_tensors") and "(a / 2)" not in verdict.message


@pytest.mark.parametrize("answer", [set(lesson02.EXPRESSIONS), set(), {"A", "B"}])
def test_exercise_1_other_wrong_answers(answer):
    assert is_not_yet(lesson02.exercise_1(answer))


def test_exercise_1_unknown_label_is_named():
    assert is_not_yet(lesson02.exercise_1({"A", "Z"}), "Z")


# Exercise 2: which saved tensors are still alive after the four calls.

ALIVE = solution("02", 2)


def test_exercise_2_alive_comes_from_running_pytorch():
    assert lesson02._alive_after_calls() == ALIVE


def test_exercise_2_checker_follows_pytorch_not_a_key(monkeypatch):
    # one more call, t.backward(), and D goes too: the verdict follows what PyTorch does
    monkeypatch.setattr(lesson02, "CALLS_2", lesson02.CALLS_2 + "\nt.backward()")
    assert lesson02._alive_after_calls() == {"B"}
    assert is_correct(lesson02.exercise_2({"B"}))
    assert is_not_yet(lesson02.exercise_2(ALIVE))


@pytest.mark.parametrize("language", NOTEBOOKS)
def test_exercise_2_notebook_shows_what_the_checker_runs(language, speaking):
    text = exercise_markdown(2, language)
    assert lesson02.SETUP_2 in text and lesson02.CALLS_2 in text
    speaking(language)  # each description in the notebook's language
    for label, (words, _) in lesson02.SAVED_2.items():
        assert f"- {label}: {words()}" in text


@pytest.mark.parametrize("answer", [ALIVE, ["d", "b"], ("B", "D")])
def test_exercise_2_right(answer):
    assert is_correct(lesson02.exercise_2(answer))


TENSOR_WORDS = ["`h * 3`", "`h`", "`h * 5`", "`h / 4`", "h * 3", "h * 5", "h / 4"]
SAVED_WRONG_ANSWERS = [ALIVE | {"A"}, ALIVE | {"C"}, {"D"}, {"B"}, {"A"}, {"C"}, set(),
                       set(lesson02.SAVED_2)]


def test_exercise_2_every_wrong_answer_gets_the_same_reasoning():
    # one message whatever is wrong, in either direction: no label-by-label search
    messages = {lesson02.exercise_2(answer).message for answer in SAVED_WRONG_ANSWERS}
    assert len(messages) == 1
    verdict = lesson02.exercise_2({"A"})
    assert is_not_yet(verdict, "a name you hold", "no backward without retain_graph",
                      "follow every node it runs through")
    assert not re.search(LABEL_NAMED, verdict.message)
    assert not any(w in verdict.message for w in TENSOR_WORDS)


def test_exercise_2_two_single_label_probes_get_the_same_message():
    # {"B"} (alive) and {"C"} (gone) must not be told apart
    assert lesson02.exercise_2({"B"}).message == lesson02.exercise_2({"C"}).message


def test_exercise_2_korean_hints_give_the_same_reasoning(speaking):
    speaking("ko")
    for answer in (ALIVE | {"A"}, ALIVE - {"B"}):
        verdict = lesson02.exercise_2(answer)
        assert is_not_yet(verdict, "retain_graph") and "텐서" in verdict.message
        assert not any(w in verdict.message for w in TENSOR_WORDS)


@pytest.mark.parametrize("answer", [set(), {"A", "B", "C", "D"}, {"A", "C"}])
def test_exercise_2_other_wrong_answers(answer):
    assert is_not_yet(lesson02.exercise_2(answer))


# Exercise 3: three losses, one backward() each, the fewest retain_graph=True.

backwards = solution("02", 3)  # the lesson's worked solution


def test_exercise_3_fewest_flags_comes_from_running_pytorch():
    assert lesson02.fewest_flags() == 1


@pytest.mark.parametrize("language", NOTEBOOKS)
def test_exercise_3_notebook_runs_the_forward_the_checker_runs(language):
    """The reader's own losses (the cell after the exercise's heading) are the checker's."""
    notebook = nbformat.read(NOTEBOOKS[language], as_version=4)
    heading = EXERCISE_HEADING[language].format(3)
    start = next(i for i, c in enumerate(notebook.cells)
                 if c.cell_type == "markdown" and heading in c.source)
    forward = notebook.cells[start + 1]
    assert forward.cell_type == "code" and forward.source.endswith("\n" + lesson02.FORWARD_3)


def loss2_first_then_loss3(loss1, loss2, loss3):  # the other order that needs one flag
    loss2.backward(retain_graph=True)
    loss3.backward()
    loss1.backward()


def through_autograd_backward(loss1, loss2, loss3):
    torch.autograd.backward([loss2], retain_graph=True)
    torch.autograd.backward(loss1)
    torch.autograd.backward(loss3)


def retain_false_said_aloud(loss1, loss2, loss3):
    loss2.backward(retain_graph=True)
    loss1.backward(retain_graph=False)
    loss3.backward(retain_graph=False)


def through_backward_imported_before(loss1, loss2, loss3):  # `backward`, not `torch.autograd.backward`
    imported_backward(loss2, retain_graph=True)
    imported_backward(loss1)
    imported_backward(loss3)


@pytest.mark.parametrize("answer", [backwards, loss2_first_then_loss3, through_autograd_backward,
                                    retain_false_said_aloud, through_backward_imported_before])
def test_exercise_3_right(answer):
    assert is_correct(lesson02.exercise_3(answer))


def all_but_the_last(loss1, loss2, loss3):  # the rule learnt by heart: two flags
    loss1.backward(retain_graph=True)
    loss2.backward(retain_graph=True)
    loss3.backward()


def every_call_retains(loss1, loss2, loss3):
    loss2.backward(retain_graph=True)
    loss1.backward(retain_graph=True)
    loss3.backward(retain_graph=True)


def loss2_last(loss1, loss2, loss3):
    loss1.backward(retain_graph=True)
    loss3.backward(retain_graph=True)
    loss2.backward()


def no_flags(loss1, loss2, loss3):
    loss1.backward()
    loss2.backward()
    loss3.backward()


def loss2_first_without_its_flag(loss1, loss2, loss3):
    loss2.backward()
    loss1.backward()
    loss3.backward()


def swallows_the_error(loss1, loss2, loss3):  # hides the failed call, keeps going
    loss1.backward()
    try:
        loss2.backward()
    except RuntimeError:
        pass
    loss3.backward()


def one_backward_for_all(loss1, loss2, loss3):  # right in general, but not what is asked
    (loss1 + loss2 + loss3).backward()


def list_of_roots(loss1, loss2, loss3):
    torch.autograd.backward([loss1, loss2, loss3])


def two_calls_one_merged(loss1, loss2, loss3):
    loss2.backward(retain_graph=True)
    (loss1 + loss3).backward()


def a_loss_skipped(loss1, loss2, loss3):
    loss1.backward()
    loss3.backward()


def a_loss_twice(loss1, loss2, loss3):
    loss2.backward(retain_graph=True)
    loss1.backward(retain_graph=True)
    loss1.backward()
    loss3.backward()


def rebuilt_from_w(loss1, loss2, loss3):  # a new graph per loss: no flag needed at all
    w = loss3.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].variable
    for make in (lambda s: s.sin().sum(), lambda s: (s.sin() + s.exp()).sum(),
                 lambda s: s.exp().sum()):
        make(w + 1).backward()


def weights_by_hand(loss1, loss2, loss3):
    loss2.backward(retain_graph=True)
    (2 * loss1).backward()
    loss3.backward()


def gradient_of_ones(loss1, loss2, loss3):  # the default gradient, said aloud: still right
    loss2.backward(torch.tensor(1.0), retain_graph=True)
    loss1.backward()
    loss3.backward()


def test_exercise_3_a_gradient_of_ones_is_no_weight():
    assert is_correct(lesson02.exercise_3(gradient_of_ones))


def gradient_of_two(loss1, loss2, loss3):  # weighs loss2 twice
    loss2.backward(torch.tensor(2.0), retain_graph=True)
    loss1.backward()
    loss3.backward()


def create_graph_instead(loss1, loss2, loss3):  # keeps the graph without saying retain_graph
    loss2.backward(create_graph=True)
    loss1.backward()
    loss3.backward()


class FalseYetOne:
    """bool() says False, but the engine reads the flag as an integer: 1, so it keeps."""

    def __bool__(self):
        return False

    def __index__(self):
        return 1


def flag_false_to_bool_true_to_the_engine(loss1, loss2, loss3):
    loss1.backward(retain_graph=FalseYetOne())
    loss2.backward(retain_graph=FalseYetOne())
    loss3.backward()


def create_graph_false_to_bool(loss1, loss2, loss3):
    loss1.backward(create_graph=FalseYetOne())
    loss2.backward(create_graph=FalseYetOne())
    loss3.backward()


def imported_backward_retains_all(loss1, loss2, loss3):  # counted too, though unnamed
    imported_backward(loss1, retain_graph=True)
    imported_backward(loss2, retain_graph=True)
    imported_backward(loss3)


def flag_as_a_numpy_bool(loss1, loss2, loss3):
    loss2.backward(retain_graph=numpy.True_)
    loss1.backward()
    loss3.backward()


def flag_as_an_int(loss1, loss2, loss3):
    loss2.backward(retain_graph=1)
    loss1.backward()
    loss3.backward()


def via_autograd_grad(loss1, loss2, loss3):
    w = loss3.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].variable
    w.grad = torch.autograd.grad(loss1 + loss2 + loss3, w)[0]


def writes_w_grad(loss1, loss2, loss3):
    w = loss3.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].variable
    w.grad = torch.ones_like(w)


def seeds_w_grad_first(loss1, loss2, loss3):
    w = loss3.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].variable
    w.grad = torch.zeros_like(w)
    backwards(loss1, loss2, loss3)


def changes_w_grad_after(loss1, loss2, loss3):
    backwards(loss1, loss2, loss3)
    w = loss3.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].variable
    w.grad.mul_(2)


def does_nothing(loss1, loss2, loss3):
    pass


def raises(loss1, loss2, loss3):
    raise ValueError("not today")


FEWER = ["fewer will do", "saved_tensors(loss1, loss2, loss3)"]
FREED = ["freed", "saved_tensors(loss1, loss2, loss3)"]


@pytest.mark.parametrize("answer, words", [
    (all_but_the_last, FEWER + ["2 retain_graph=True"]),
    (every_call_retains, FEWER + ["3 retain_graph=True"]),
    (loss2_last, FEWER),
    (no_flags, FREED),
    (loss2_first_without_its_flag, FREED),
    (swallows_the_error, FREED),
    (one_backward_for_all, ["several losses", "no retain_graph at all"]),
    (list_of_roots, ["several losses"]),
    (two_calls_one_merged, ["several losses"]),
    (a_loss_skipped, ["exactly once on each"]),
    (a_loss_twice, ["exactly once on each"]),
    (rebuilt_from_w, ["exactly once on each"]),
    (weights_by_hand, ["weight"]),
    (gradient_of_two, ["weight", "gradient="]),
    (create_graph_instead, ["create_graph=True"]),
    (flag_false_to_bool_true_to_the_engine, ["retain_graph=", "a FalseYetOne", "True or False"]),
    (create_graph_false_to_bool, ["create_graph=", "a FalseYetOne", "True or False"]),
    (flag_as_an_int, ["retain_graph=", "1 (an int)", "True or False"]),
    (flag_as_a_numpy_bool, ["retain_graph=", "a numpy.bool", "True or False"]),
    (imported_backward_retains_all, FEWER + ["2 retain_graph=True"]),
    (via_autograd_grad, ["torch.autograd.grad"]),
    (writes_w_grad, ["no backward call"]),
    (seeds_w_grad_first, ["already held something"]),
    (changes_w_grad_after, ["changed after the backward calls"]),
    (does_nothing, ["no backward call"]),
    (raises, ["ValueError", "not today"]),
    (lambda: None, ["TypeError"]),
    ("backwards", ["expected a function", "a str"]),
])
def test_exercise_3_each_loophole_gets_its_own_hint(answer, words):
    assert is_not_yet(lesson02.exercise_3(answer), *words)


def test_exercise_3_too_many_flags_get_the_same_reasoning_whatever_the_order():
    # the hint says how many flags, never which call could drop one
    messages = {lesson02.exercise_3(answer).message.replace("3 retain", "2 retain")
                for answer in (all_but_the_last, every_call_retains, loss2_last)}
    assert len(messages) == 1
    message = messages.pop()
    assert not re.search(r"loss\d\.|loss\d first|first|last", message)  # names no call to change


def test_exercise_3_korean_hints(speaking):
    speaking("ko")
    assert is_not_yet(lesson02.exercise_3(all_but_the_last), "retain_graph=True", "2번")
    assert is_not_yet(lesson02.exercise_3(no_flags), "saved_tensors(loss1, loss2, loss3)")
    assert is_not_yet(lesson02.exercise_3(flag_as_an_int), "retain_graph=", "True나 False")
    assert is_correct(lesson02.exercise_3(backwards))


@pytest.mark.parametrize("answer", [backwards, no_flags, raises, via_autograd_grad,
                                    swallows_the_error, one_backward_for_all,
                                    through_backward_imported_before])
def test_exercise_3_restores_autograd(answer):
    engine = torch.autograd._engine_run_backward  # the checker watches it too
    with autograd_left_alone():
        lesson02.exercise_3(answer)
    assert torch.autograd._engine_run_backward is engine


def test_exercise_3_leaves_no_hook_behind():
    # the checker's hooks come off: a second check of the same answer gives the same verdict
    first, second = lesson02.exercise_3(backwards), lesson02.exercise_3(backwards)
    assert is_correct(first) and first.message == second.message


def test_checkers_leave_the_global_rng_alone():
    with global_rng_left_alone():
        lesson02.exercise_1(SURVIVORS)
        lesson02.exercise_2(ALIVE)
        lesson02.exercise_3(backwards)


# Answers that are not sets of label strings: the hint says what is wrong, and shows no
# example set, which could be part of the right answer.

@pytest.mark.parametrize("check, last", [(lesson02.exercise_1, "F"), (lesson02.exercise_2, "D")])
def test_a_non_string_label_is_named_with_its_kind(check, last):
    verdict = check({1})
    assert is_not_yet(verdict, "a set containing 1 (an int)", f"strings 'A'–'{last}'")
    assert "{" not in verdict.message


@pytest.mark.parametrize("check", [lesson02.exercise_1, lesson02.exercise_2])
@pytest.mark.parametrize("answer", [None, {1}, [["A"]], "ACE", 42, {"A": 1}, (True,)])
def test_no_hint_shows_an_example_set(check, answer):
    assert "{" not in check(answer).message


def test_korean_non_string_label_hint(speaking):
    speaking("ko")
    verdict = lesson02.exercise_1({1})
    assert is_not_yet(verdict, "int", "'A'–'F'") and "{" not in verdict.message
