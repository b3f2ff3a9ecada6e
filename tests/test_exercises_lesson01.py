"""Lesson 01's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint specific to the mistake), and never a crash on odd input."""
import re

import nbformat
import numpy as np
import pytest
import torch

from checks import (autograd_left_alone, stable_id, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from project import ROOT
from lesson_checks import lesson01
from lesson_checks.language import set_language
from solutions import solution

CHECKS = [lesson01.exercise_1, lesson01.exercise_2, lesson01.exercise_3]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42j, True, 3, object(), {"a": 1}, {1, 2}, [[1, 2], [3]],
              lambda: None, torch.tensor([True, False]), torch.tensor([1j, 2j]),
              torch.ones(2, 3)]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, sample_answers=[
        None, "self", {"y1": {"self"}}, {"y1": "x"}, [[1.0]], 3, torch.rand(4, 4),
        {"w", "loss"},
        [("SplitBackward0", 2), ("ExpBackward0", 0)],
        [("SplitBackward0", 2), ("SplitBackward0", 0)]])


# Both editions show the exercises' code as the checkers run it: it has no comments, so
# the Korean lesson shows the very same text under its Korean headings.
LESSON = "01_backward_and_the_graph.ipynb"
EDITIONS = {"en": (ROOT / "notebooks" / LESSON, "### Exercise"),
            "ko": (ROOT / "notebooks" / "ko" / LESSON, "### 연습 문제")}


def exercise_markdown(edition):
    path, heading = EDITIONS[edition]
    notebook = nbformat.read(path, 4)
    return "\n".join(c.source for c in notebook.cells
                     if c.cell_type == "markdown" and heading in c.source)


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_notebook_shows_the_code_the_checkers_run(edition):
    shown = exercise_markdown(edition)
    assert lesson01.EXERCISE_1_CODE in shown
    assert lesson01.EXERCISE_2_CODE in shown
    assert lesson01.EXERCISE_3_CODE in shown


# Exercise 1: which factors does each product's MulBackward0 save?
# y1 = x * w: self (x); y2 = w * x: other (x); y3 = w * w.exp(): both; y4 = w.exp() * x:
# other (x), since w.exp() needs a gradient though it is no leaf.

RIGHT_SLOTS = solution("01", 1)  # the lesson's worked solution


def test_exercise_1_reads_real_nodes():
    truth = {"y1": {"self"}, "y2": {"other"}, "y3": {"self", "other"}, "y4": {"other"}}
    assert lesson01._saved_slots() == RIGHT_SLOTS == truth
    products = {"torch": torch}
    exec(lesson01.EXERCISE_1_CODE, products)
    for name in lesson01.PRODUCTS:
        node = products[name].grad_fn
        assert node.name() == "MulBackward0"
        for slot in lesson01.SLOTS:  # what is not saved reads None
            saved = getattr(node, f"_saved_{slot}")
            assert (saved is None) == (slot not in truth[name])


@pytest.mark.parametrize("answer", [
    RIGHT_SLOTS,
    {"y1": "self", "y2": "other", "y3": ["other", "self"], "y4": ("other",)},
    {" Y1 ": {"_saved_self"}, "y2": frozenset({"saved_other"}), "y3": {"SELF", "other"},
     "y4": {"other", "other"}},
    {"y1": {"'self'"}, "y2": {"other"}, "y3": {"self", "other"}, "y4": {"other"}},
])
def test_exercise_1_right(answer):
    assert is_correct(lesson01.exercise_1(answer))


def one_product_changed():
    """Every answer that differs from the truth in one product's set: the toggles."""
    answers = []
    for name in lesson01.PRODUCTS:
        for value in (set(), {"self"}, {"other"}, {"self", "other"}):
            if value != RIGHT_SLOTS[name]:
                answers.append({**RIGHT_SLOTS, name: value})
    return answers


def wrong_answers():
    everything = {name: {"self", "other"} for name in lesson01.PRODUCTS}
    nothing = {name: set() for name in lesson01.PRODUCTS}
    swapped = {name: {"self", "other"} - slots or {"self", "other"}
               for name, slots in RIGHT_SLOTS.items()}
    leaves_only = {"y1": {"self"}, "y2": {"other"}, "y3": {"self", "other"}, "y4": set()}
    own_factor = {"y1": {"other"}, "y2": {"self"}, "y3": {"self", "other"}, "y4": {"self"}}
    return one_product_changed() + [everything, nothing, swapped, leaves_only, own_factor]


# The loophole: a hint that names a product or a slot verdict ("y4's w.exp() needs a
# gradient") lets a reader change one set per run until ✓. Every wrong answer gets the
# same rule, naming no product, so changing one set at a time reveals nothing.
PRODUCT_NAME = re.compile(r"(?i)(?<![A-Za-z0-9_])y[1-4](?![0-9])")


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("answer", wrong_answers(), ids=stable_id)
def test_exercise_1_wrong_answers_get_the_rule_naming_no_product(answer, language):
    set_language(language)
    try:
        verdict = lesson01.exercise_1(answer)
        rule = lesson01.factor_rule()
    finally:
        set_language("en")
    assert is_not_yet(verdict) and verdict.message.endswith(rule), verdict
    assert not PRODUCT_NAME.search(verdict.message), verdict.message


def test_exercise_1_hint_is_the_same_for_every_wrong_answer():
    messages = {lesson01.exercise_1(answer).message for answer in wrong_answers()}
    assert len(messages) == 1
    assert is_not_yet(lesson01.exercise_1(wrong_answers()[0]), "other factor needs a gradient",
                      "computed from one", "every product")


@pytest.mark.parametrize("answer, words", [
    ({**RIGHT_SLOTS, "y5": {"self"}}, ["unknown name(s) 'y5'"]),
    ({**RIGHT_SLOTS, "": {"self"}}, ["unknown name(s) ''"]),
    ({**RIGHT_SLOTS, " ": {"self"}}, ["unknown name(s) ''"]),
    ({"y1": {"self"}, "y2": {"other"}}, ["every product", "none for y3, y4"]),
    ({**RIGHT_SLOTS, "y1": {"result"}}, ["unknown slot name(s) 'result'"]),
    ({**RIGHT_SLOTS, "y1": {"self", " "}}, ["unknown slot name(s) ''"]),
    ({**RIGHT_SLOTS, "y1": {"x"}}, ["unknown slot name(s) 'x'", "first factor"]),
    ({**RIGHT_SLOTS, "y1": 1}, ["set of slot names as strings"]),
    ({**RIGHT_SLOTS, "y1": {torch.ones(1)}}, ["set of slot names as strings"]),
    ({**RIGHT_SLOTS, "y1": None}, ["set of slot names as strings"]),
    ({1: {"self"}}, ["keys are the products' names as strings"]),
    ({"self", "other"}, ["expected a dict", "got a set"]),
    ([("y1", "self")], ["expected a dict", "got a list"]),
    ("y1: self", ["expected a dict", "got a str"]),
])
def test_exercise_1_answers_of_the_wrong_kind_get_a_hint(answer, words):
    verdict = lesson01.exercise_1(answer)
    assert is_not_yet(verdict, *words), verdict


# The loophole: keys that are one product once normalised ('y1', 'Y1', "'y1'") used to
# pass, the last one winning, so a reader could give both sets for a product and be
# marked right. Such an answer is refused whichever set comes last.
@pytest.mark.parametrize("key", ["Y1", " y1 ", "'y1'"])
@pytest.mark.parametrize("language", ["en", "ko"])
def test_exercise_1_one_product_under_two_keys_is_refused(key, language):
    both_ways = [{"y1": {"other"}, key: {"self"}, **{k: v for k, v in RIGHT_SLOTS.items()
                                                   if k != "y1"}},
                 {**RIGHT_SLOTS, key: {"other"}}]
    set_language(language)
    try:
        verdicts = [lesson01.exercise_1(answer) for answer in both_ways]
    finally:
        set_language("en")
    for verdict in verdicts:
        assert is_not_yet(verdict), verdict
    if language == "en":
        for verdict in verdicts:
            assert is_not_yet(verdict, "two keys name the same product, y1"), verdict


@pytest.mark.parametrize("language", ["en", "ko"])
def test_exercise_1_examples_give_nothing_away(language):
    """The examples in the answer cell and the hints are wrong for every product shown."""
    set_language(language)
    try:
        message = lesson01.exercise_1(None).message
    finally:
        set_language("en")
    assert "{'y1': set(), 'y2': {'self', 'other'}, ...}" in message
    assert RIGHT_SLOTS["y1"] != set() and RIGHT_SLOTS["y2"] != {"self", "other"}


# Exercise 2: y = last * first.exp(): each pair names the node that made that input,
# (SplitBackward0, 2) for last and (ExpBackward0, 0) for first.exp(), not the split behind it.

RIGHT_PAIRS = solution("01", 2)  # the lesson's worked solution: [("SplitBackward0", 2), ...]


def test_exercise_2_truth():
    assert RIGHT_PAIRS == [("SplitBackward0", 2), ("ExpBackward0", 0)]


def test_exercise_2_expected_comes_from_autograd():
    assert lesson01._exercise_2_expected() == RIGHT_PAIRS


def test_exercise_2_accepts_what_names_prints():
    namespace = {"torch": torch}
    exec(lesson01.EXERCISE_2_CODE, namespace)
    assert is_correct(lesson01.exercise_2(lesson01._named_pairs(namespace["y"].grad_fn)))


@pytest.mark.parametrize("answer", [
    RIGHT_PAIRS,
    tuple(RIGHT_PAIRS),
    [["SplitBackward0", 2], ["ExpBackward0", 0]],
    [(" splitbackward0 ", 2), ("EXPBACKWARD0", 0)],
    [("SplitBackward0", np.int64(2)), ("ExpBackward0", 0)],
])
def test_exercise_2_right(answer):
    assert is_correct(lesson01.exercise_2(answer))


@pytest.mark.parametrize("answer, words", [
    # the old exercise's answer: chunk's node for first.exp() too, one step too far back
    ([("SplitBackward0", 2), ("SplitBackward0", 0)], ["made that very input",
                                                      "not a node further back"]),
    ([("SplitBackward0", 0), ("SplitBackward0", 0)], ["made that very input"]),
    ([("ExpBackward0", 0), ("SplitBackward0", 2)], ["which input comes first"]),
    ([("ExpBackward0", 2), ("SplitBackward0", 0)], ["which input comes first"]),
    ([("SplitBackward0", 0), ("ExpBackward0", 0)], ["not an input number"]),
    ([("SplitBackward0", 0), ("ExpBackward0", 1)], ["not an input number"]),
    ([("SplitBackward0", 3), ("ExpBackward0", 1)], ["numbered from 0"]),
    ([("SplitBackward0", 2), ("ExpBackward0", 1)], ["counted from 0"]),
    ([("SplitBackward0", 0), ("ExpBackward0", 2)], ["counted from 0"]),
    ([("SplitBackward0", 2)], ["one pair per input", "yours has 1"]),
    ([("SplitBackward0", 2), ("ExpBackward0", 0), (None, 0)], ["yours has 3"]),
    ([("AccumulateGrad", 0), ("AccumulateGrad", 0)], ["AccumulateGrad", "neither input is a leaf"]),
    ([("torch::autograd::AccumulateGrad", 2), ("ExpBackward0", 0)], ["AccumulateGrad"]),
    ([("SplitBackward0", 2), (None, 0)], ["needs no gradient"]),
    ([("MulBackward0", 2), ("MulBackward0", 0)], ["MulBackward0 itself"]),
    ([("ChunkBackward0", 2), ("ExpBackward0", 0)], ["section 3"]),
    ([("SliceBackward0", 0), ("SliceBackward0", 0)], ["section 3"]),
    ([("SplitBackward0", 2), ("Exp", 0)], ["named after its operation"]),
    ([("SplitBackward0", 2), ("ExpBackward", 0)], ["named after its operation"]),
])
def test_exercise_2_wrong_answers_get_their_own_hint(answer, words):
    verdict = lesson01.exercise_2(answer)
    assert is_not_yet(verdict, *words), verdict


@pytest.mark.parametrize("language", ["en", "ko"])
def test_exercise_2_hints_never_give_the_answer_away(language):
    set_language(language)
    try:
        messages = [lesson01.exercise_2(answer).message for answer in (
            [("SplitBackward0", 2), ("SplitBackward0", 0)],
            [("SplitBackward0", 0), ("ExpBackward0", 0)],
            [("ExpBackward0", 0), ("SplitBackward0", 2)],
            [("ChunkBackward0", 2), ("ChunkBackward0", 0)],
            [("SplitBackward0", 2), ("Exp", 0)],
            [("SplitBackward0", 2), ("ExpBackward0", 1)])]
    finally:
        set_language("en")
    for message in messages:
        assert not re.search(r"(?i)splitbackward|expbackward|2", message), message


@pytest.mark.parametrize("answer, words", [
    ("SplitBackward0", ["list of (node name, number) pairs"]),
    ([("SplitBackward0", 2, 0)], ["two parts"]),
    ([("SplitBackward0", "2"), ("SplitBackward0", 0)], ["whole number"]),
    ([("SplitBackward0", 2.0), ("SplitBackward0", 0)], ["whole number"]),
    ([("SplitBackward0", True), ("SplitBackward0", 0)], ["whole number"]),
    ([(3, 2), ("SplitBackward0", 0)], ["a string"]),
])
def test_exercise_2_answers_of_the_wrong_shape_get_a_hint(answer, words):
    assert is_not_yet(lesson01.exercise_2(answer), *words)


def test_exercise_2_node_objects_are_not_names():
    namespace = {"torch": torch}
    exec(lesson01.EXERCISE_2_CODE, namespace)
    raw = namespace["y"].grad_fn.next_functions  # pairs of (Node, int)
    assert is_not_yet(lesson01.exercise_2(raw), "not the node object")


# Exercise 3: after the code, w, u (zeros) and h (retain_grad) have a .grad.

RIGHT_NAMES = solution("01", 3)


def test_exercise_3_truth_comes_from_the_tensors():
    assert lesson01._with_grad() == RIGHT_NAMES


def test_exercise_3_leaves_come_from_the_tensors():
    assert lesson01._run_exercise_3()[1] == {"w", "u", "x"}


@pytest.mark.parametrize("answer", [
    RIGHT_NAMES, ["h", "u", "w"], ("W", "U", " h "), frozenset({"w", "u", "h"}),
    ["w", "u", "h", "w"],
])
def test_exercise_3_right(answer):
    assert is_correct(lesson01.exercise_3(answer))


RULE = ["a leaf", "requires grad", "backward pass reaches", "a non-leaf",
        "retain_grad() was called before backward()"]


@pytest.mark.parametrize("answer, words", [
    ({"w", "u", "h", "x"}, RULE),       # x: a leaf that does not require grad
    ({"w", "h"}, RULE),                 # u: reached, with a gradient of zeros
    ({"u", "h"}, RULE),                 # w
    (set(), RULE),
    ({"x", "loss"}, RULE),
    ({"w", "u", "h", "g"}, RULE),   # g: retain_grad() after backward()
    ({"w", "u", "h", "loss"}, RULE),
    ({"w", "u"}, RULE),             # h: retain_grad() before backward()
    ({"w", "u", "h", "z"}, ["unknown name(s) 'z'"]),
    ({"w", "u", "h", ""}, ["unknown name(s) ''"]),
    ({"w", "u", "h", " "}, ["unknown name(s) ''"]),
])
def test_exercise_3_wrong_answers_get_the_rule(answer, words):
    verdict = lesson01.exercise_3(answer)
    assert is_not_yet(verdict, *words), verdict


# The loophole: a hint that names the wrong label ("x was computed...", "g.retain_grad()
# came after...") lets a reader toggle one label per run until ✓ without thinking. The
# hints state a rule for a kind of tensor; they name no tensor and do not say whether a
# name is one too many or one too few.

# a Korean particle may follow a name ("w는"): only Latin letters, digits, _ and ( end it
NAME = re.compile(r"(?<![A-Za-z0-9_.])(?:w|u|x|h|g|loss)(?![A-Za-z0-9_(])")


def one_label_toggled():
    truth = set(solution("01", 3))
    return [truth ^ {name} for name in lesson01.TENSOR_NAMES]


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("answer", one_label_toggled(),
                         ids=lambda answer: "-".join(sorted(answer)))
def test_exercise_3_hints_name_no_tensor(answer, language):
    set_language(language)
    try:
        message = lesson01.exercise_3(answer).message
    finally:
        set_language("en")
    assert not NAME.search(message), message


# A hint per kind of tensor ("the leaves are right; not yet the non-leaves") let a reader
# fix the leaves, then the non-leaves, by flipping names group by group: every wrong
# answer gets the one rule that covers both kinds, and it says neither is right.
@pytest.mark.parametrize("language", ["en", "ko"])
def test_exercise_3_hint_is_the_same_for_every_wrong_answer(language):
    truth = set(solution("01", 3))
    wrong = one_label_toggled() + [set(), set(lesson01.TENSOR_NAMES), {"w", "u", "x", "h"},
                                   {"w", "u", "h", "g"}, {"x", "loss"}, {"w", "u"}]
    set_language(language)
    try:
        messages = {lesson01.exercise_3(answer).message for answer in wrong}
        rule = lesson01.grad_rule()
    finally:
        set_language("en")
    assert truth not in wrong and len(messages) == 1, messages
    assert messages.pop().endswith(rule)
    assert "right" not in rule and "맞았" not in rule


def test_exercise_3_every_name_is_not_a_way_in():
    assert is_not_yet(lesson01.exercise_3(set(lesson01.TENSOR_NAMES)), *RULE)
    assert is_not_yet(lesson01.exercise_3({"w", "u", "x", "h"}), *RULE)


def test_exercise_3_tensors_are_not_names():
    w = torch.ones(3, requires_grad=True)
    assert is_not_yet(lesson01.exercise_3({w}), "names", "as strings")
    assert is_not_yet(lesson01.exercise_3("w, u, h"), "set of names")


def test_checkers_leave_the_rng_and_autograd_alone():
    with global_rng_left_alone(), autograd_left_alone():
        lesson01.exercise_1(RIGHT_SLOTS)
        lesson01.exercise_2(RIGHT_PAIRS)
        lesson01.exercise_3(RIGHT_NAMES)
