"""Lesson 06's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint that fits the mistake), and never a crash on odd input."""
import inspect
import re
import textwrap

import nbformat
import pytest
import torch
import torch.nn.functional as F

from checks import (autograd_left_alone, every_checker_tests, global_rng_left_alone,
                    is_correct, is_not_yet)
from project import ROOT
from lesson_checks import lesson06, set_language
from lesson_checks.errors import FREED_BUFFER, NO_ERROR, VERSION_COUNTER
from solutions import solution

CHECKS = [lesson06.exercise_1, lesson06.exercise_2]

# Answers of the wrong kind that every checker must turn into a hint, not a traceback.
ODD_INPUTS = ["abc", b"bytes", 42, 3.5, 42j, True, object(), [1, 2], {"a": 1}, {1, 2},
              torch.ones(2), lambda: None, lambda *args: 1 / 0, print]

test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \
    every_checker_tests(CHECKS, ODD_INPUTS, sample_answers=[
        None, 3, {1: "none"}, torch.ones(2, 3), lambda *args: None, {1: torch.ones(2, 3)}])


# Exercise 1: truncated BPTT with an LSTM, whose state is a pair (h, c).

detach_tuple = solution("06", 1)  # the lesson's worked solution


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


def detach_and_retain(lstm, head, chunks, optimizer):
    # Right weights, flat memory per backward: but retain_graph=True, which the exercise forbids.
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(inputs, state)
        optimizer.zero_grad()
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


def state_from_zeros_each_chunk(lstm, head, chunks, optimizer):
    for inputs, targets in chunks:
        outputs, _ = lstm(inputs)  # no error, but nothing carried from chunk to chunk
        optimizer.zero_grad()
        F.mse_loss(head(outputs), targets).backward()
        optimizer.step()


def no_backward(lstm, head, chunks, optimizer):
    pass


def raises_value_error(lstm, head, chunks, optimizer):
    raise ValueError("not today")


@pytest.mark.parametrize("answer, words", [
    (the_broken_function, "(h, c)"),
    (detach_h_only, "(h, c)"),
    (detach_the_tuple, "a tuple has no tensor methods"),
    (detach_none, "None before the first chunk"),
    (retain, "not the fix"),
    (retain_without_steps, "retain_graph=True"),
    (detach_and_retain, "retain_graph=True"),
    (never_zeroes, "zero the gradients"),
    (never_steps, "differ from truncated BPTT's"),
    (one_backward_at_the_end, "one backward and one optimizer step per chunk"),
    (state_from_zeros_each_chunk, "starts from a zero state"),
    (lesson06._truncated_bptt, "the checker's own function"),
    (no_backward, "never called"),
    (raises_value_error, "ValueError: not today"),
])
def test_exercise_1_wrong_with_a_hint_that_fits(answer, words):
    verdict = lesson06.exercise_1(answer)
    assert is_not_yet(verdict, words), verdict


def test_exercise_1_hints_never_give_the_fix_away():
    for answer in (the_broken_function, detach_h_only, retain, state_from_zeros_each_chunk):
        assert "detach" not in lesson06.exercise_1(answer).message


# Exercise 2: which error does each sequence raise?

RIGHT_2 = solution("06", 2)  # the lesson's worked solution


def test_exercise_2_key_is_what_pytorch_raises():
    # Computed by running each sequence, so it must agree with the lesson's reasoning.
    assert {n: lesson06.error_of_sequence(n) for n in lesson06.SEQUENCES} == RIGHT_2


@pytest.mark.parametrize("answer", [
    RIGHT_2,
    {"1": "Version Counter", "2": " freed buffer ", "3": "NONE", "4": "freed buffer"},
])
def test_exercise_2_right(answer):
    assert is_correct(lesson06.exercise_2(answer))


@pytest.mark.parametrize("number, given, words", [
    (1, FREED_BUFFER, "retain_graph=True kept everything"),
    (1, NO_ERROR, "still as it was"),
    (2, NO_ERROR, "what did autograd.grad leave"),
    (2, VERSION_COUNTER, "nothing changes a tensor in place"),
    (3, FREED_BUFFER, "what could have freed"),
    (3, VERSION_COUNTER, "changes only the critic head"),
    (4, NO_ERROR, "another backward ran in between"),
    (4, VERSION_COUNTER, "nothing changes a tensor in place"),
])
def test_exercise_2_each_wrong_answer_gets_its_own_hint(number, given, words):
    verdict = lesson06.exercise_2({**RIGHT_2, number: given})
    assert is_not_yet(verdict, f"Sequence {number}:", words, "3 of 4 right"), verdict
    # the hint points at the mechanism, never at the answer's name
    hint = verdict.message.split(f"Sequence {number}:")[1]
    assert RIGHT_2[number] not in hint


@pytest.mark.parametrize("answer, words", [
    ({1: "freed buffer", 2: "none"}, "say what sequence 3, 4 raises"),
    ({**RIGHT_2, 5: "none"}, "5 is not a sequence"),
    ({True: VERSION_COUNTER, 2: FREED_BUFFER, 3: NO_ERROR, 4: FREED_BUFFER},
     "True is not a sequence"),
    ({**RIGHT_2, 3: "no error"}, "sequence 3: 'no error' is not one of"),
    ({**RIGHT_2, 3: None}, "sequence 3: None is not one of"),
    ({**RIGHT_2, 3: torch.ones(2, 3)}, "is not one of"),
    ([VERSION_COUNTER, FREED_BUFFER, NO_ERROR, FREED_BUFFER], "expected a dict"),
])
def test_exercise_2_malformed_answers(answer, words):
    assert is_not_yet(lesson06.exercise_2(answer), words)


def test_exercise_2_reads_keys_and_names_loosely():
    """"3" is sequence 3 and " NONE " is "none", as the reader may type them."""
    assert is_correct(lesson06.exercise_2({str(k): f" {v.upper()} " for k, v in RIGHT_2.items()}))


def test_exercise_2_counts_only_the_right_ones():
    everything_freed = {n: FREED_BUFFER for n in lesson06.SEQUENCES}
    assert is_not_yet(lesson06.exercise_2(everything_freed), "2 of 4 right", "Sequence 1:")


LESSON = "06_where_second_backwards_come_from.ipynb"
# The English lesson and the Korean one (notebooks/ko/): each shows the sequences' code.
EDITIONS = {"en": (ROOT / "notebooks" / LESSON, "### Exercise 2"),
            "ko": (ROOT / "notebooks" / "ko" / LESSON, "### 연습 문제 2")}


def exercise_2_code_blocks(edition="en"):
    path, heading = EDITIONS[edition]
    notebook = nbformat.read(path, as_version=4)
    text = next(c.source for c in notebook.cells if c.cell_type == "markdown"
                and heading in c.source)
    return re.findall(r"```python\n# (\d)\n(.*?)```", text, re.DOTALL)


@pytest.mark.parametrize("edition", EDITIONS)
def test_exercise_2_text_shows_the_code_the_checker_runs(edition):
    blocks = exercise_2_code_blocks(edition)
    assert [int(n) for n, _ in blocks] == list(lesson06.SEQUENCES)
    for number, shown in blocks:
        sequence, _ = lesson06.SEQUENCES[int(number)]
        body = textwrap.dedent("".join(inspect.getsourcelines(sequence)[0][1:]))
        assert shown.strip() == body.strip(), f"sequence {number} differs from the checker's"


# The checkers run the reader's code: they must leave autograd and the RNG as they were.

def test_checkers_restore_autograd_even_when_the_answer_raises():
    with autograd_left_alone():
        lesson06.exercise_1(raises_value_error)
        lesson06.exercise_1(retain)
        lesson06.exercise_2(RIGHT_2)


def test_checkers_leave_the_global_rng_alone():
    with global_rng_left_alone():
        lesson06.exercise_1(detach_tuple)
        lesson06.exercise_2(RIGHT_2)


# In Korean (set_language("ko"), as notebooks/ko's set-up cell does): the same verdicts,
# each in Korean, with the answer's labels and the numbers kept.

@pytest.fixture
def korean():
    set_language("ko")
    yield
    set_language("en")


HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.mark.parametrize("answer", [
    the_broken_function, detach_h_only, detach_the_tuple, detach_none, retain,
    retain_without_steps, never_zeroes, one_backward_at_the_end,
    state_from_zeros_each_chunk, lesson06._truncated_bptt, no_backward, raises_value_error,
    None, 3])
def test_exercise_1_speaks_korean(korean, answer):
    verdict = lesson06.exercise_1(answer)
    assert not is_correct(verdict) and HANGUL.search(verdict.message), verdict
    assert "detach" not in verdict.message


def test_exercise_1_korean_keeps_the_counts(korean):
    assert is_not_yet(lesson06.exercise_1(one_backward_at_the_end), "4개", "1번")
    assert is_correct(lesson06.exercise_1(detach_tuple))
    assert HANGUL.search(lesson06.exercise_1(detach_tuple).message)


@pytest.mark.parametrize("number, given", [
    (1, FREED_BUFFER), (1, NO_ERROR), (2, NO_ERROR), (2, VERSION_COUNTER),
    (3, FREED_BUFFER), (3, VERSION_COUNTER), (4, NO_ERROR), (4, VERSION_COUNTER)])
def test_exercise_2_korean_hints(korean, number, given):
    verdict = lesson06.exercise_2({**RIGHT_2, number: given})
    assert is_not_yet(verdict, "4개 중 3개 정답", f"{number}번 코드:"), verdict
    hint = verdict.message.split(f"{number}번 코드:")[1]
    assert HANGUL.search(hint) and RIGHT_2[number] not in hint


@pytest.mark.parametrize("answer", [
    None, [1, 2], {1: "freed buffer", 2: "none", 3: "none"}, {**RIGHT_2, 5: "none"},
    {**RIGHT_2, 3: "no error"}])
def test_exercise_2_malformed_answers_in_korean(korean, answer):
    verdict = lesson06.exercise_2(answer)
    assert not is_correct(verdict) and HANGUL.search(verdict.message), verdict


def test_exercise_2_right_in_korean(korean):
    verdict = lesson06.exercise_2(RIGHT_2)
    assert is_correct(verdict) and HANGUL.search(verdict.message)
    assert all(f"{n}: {RIGHT_2[n]}" in verdict.message for n in RIGHT_2)
