"""Lesson 06's checkers: unanswered for None, correct for a right answer, not yet for
wrong ones (with a hint that fits the mistake), and never a crash on odd input."""
import functools
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


# Exercise 1: truncated BPTT over two chunks with an LSTM, whose state is a pair (h, c).

detach_tuple = solution("06", 1)  # the lesson's worked solution: one backward per pair


def retain_within_the_pair(lstm, head, chunks, optimizer):
    # a backward per chunk: the first of a pair keeps its graph for the second's backward
    state = None
    for k, (inputs, targets) in enumerate(chunks):
        if k % 2 == 0:
            if state is not None:
                state = (state[0].detach(), state[1].detach())
            optimizer.zero_grad()
        outputs, state = lstm(inputs, state)
        F.mse_loss(head(outputs), targets).backward(retain_graph=k % 2 == 0)
        if k % 2 == 1:
            optimizer.step()


def zeros_to_start(lstm, head, chunks, optimizer):
    batch = chunks[0][0].shape[0]
    h = c = torch.zeros(1, batch, lstm.hidden_size)
    for first, second in zip(chunks[::2], chunks[1::2]):
        outputs_1, (h, c) = lstm(first[0], (h.detach(), c.detach()))
        outputs_2, (h, c) = lstm(second[0], (h, c))
        loss = F.mse_loss(head(outputs_1), first[1]) + F.mse_loss(head(outputs_2), second[1])
        torch.autograd.backward(loss)
        optimizer.step()
        optimizer.zero_grad()  # zeroing after the step is as good as before the backward


def one_forward_per_pair(lstm, head, chunks, optimizer):
    # the pair's two chunks joined in time: one forward over both, the same time steps
    state = None
    for first, second in zip(chunks[::2], chunks[1::2]):
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(torch.cat([first[0], second[0]], dim=1), state)
        loss = (F.mse_loss(head(outputs[:, :10]), first[1])
                + F.mse_loss(head(outputs[:, 10:]), second[1]))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


@pytest.mark.parametrize("answer", [detach_tuple, retain_within_the_pair, zeros_to_start,
                                    one_forward_per_pair])
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


def pairs(detach=lambda state: tuple(s.detach() for s in state), retain=False,
          cut_every_chunk=False, zero_every_chunk=False, step_every_chunk=False):
    """A per-chunk training function with one mistake or more, as the flags say."""
    def train(lstm, head, chunks, optimizer):
        state = None
        for k, (inputs, targets) in enumerate(chunks):
            if (k % 2 == 0 or cut_every_chunk) and state is not None and detach:
                state = detach(state)
            if k % 2 == 0 or zero_every_chunk:
                optimizer.zero_grad()
            outputs, state = lstm(inputs, state)
            F.mse_loss(head(outputs), targets).backward(retain_graph=retain)
            if k % 2 == 1 or step_every_chunk:
                optimizer.step()
    return train


def section_2s_fix(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(inputs, state)
        optimizer.zero_grad()
        F.mse_loss(head(outputs), targets).backward()
        optimizer.step()


def never_cut(lstm, head, chunks, optimizer):
    state = None
    for start in range(0, len(chunks), 2):
        loss = 0
        for inputs, targets in chunks[start:start + 2]:
            outputs, state = lstm(inputs, state)
            loss = loss + F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def summed_and_retained(lstm, head, chunks, optimizer):
    # right weights, but the one backward per pair keeps a graph nothing goes back through
    state = None
    for start in range(0, len(chunks), 2):
        if state is not None:
            state = tuple(s.detach() for s in state)
        loss = 0
        for inputs, targets in chunks[start:start + 2]:
            outputs, state = lstm(inputs, state)
            loss = loss + F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()


def detach_none(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        state = (state[0].detach(), state[1].detach())
        outputs, state = lstm(inputs, state)


def detach_none_as_a_tensor(lstm, head, chunks, optimizer):
    state = None
    for inputs, targets in chunks:
        state = state.detach()  # AttributeError: 'NoneType' object has no attribute 'detach'
        outputs, state = lstm(inputs, state)


def builds_the_graph_twice(lstm, head, chunks, optimizer):
    # the review's loophole: chunk 0's backward alone, then chunk 0's forward again to
    # give chunk 1's backward a graph to go through; right weights, no graph kept
    state = None
    for first, second in zip(chunks[::2], chunks[1::2]):
        if state is not None:
            state = tuple(s.detach() for s in state)
        optimizer.zero_grad()
        outputs, _ = lstm(first[0], state)
        F.mse_loss(head(outputs), first[1]).backward()
        _, state = lstm(first[0], state)  # chunk 0's graph, built again
        outputs, state = lstm(second[0], state)
        F.mse_loss(head(outputs), second[1]).backward()
        optimizer.step()


def state_from_zeros_each_chunk(lstm, head, chunks, optimizer):
    for k, (inputs, targets) in enumerate(chunks):
        outputs, _ = lstm(inputs)  # no error, but nothing carried from chunk to chunk
        F.mse_loss(head(outputs), targets).backward()
        if k % 2 == 1:
            optimizer.step()
            optimizer.zero_grad()


def state_from_zeros_each_pair(lstm, head, chunks, optimizer):
    # the review's case: the graph carried within a pair, but each pair from a zero state
    for first, second in zip(chunks[::2], chunks[1::2]):
        state = None  # nn.LSTM starts from zeros
        outputs_1, state = lstm(first[0], state)
        outputs_2, state = lstm(second[0], state)
        loss = F.mse_loss(head(outputs_1), first[1]) + F.mse_loss(head(outputs_2), second[1])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def zeros_each_pair_retained(lstm, head, chunks, optimizer):
    # the same, a backward per chunk, the pair's first keeping its graph for the second
    for k, (inputs, targets) in enumerate(chunks):
        if k % 2 == 0:
            state = None
            optimizer.zero_grad()
        outputs, state = lstm(inputs, state)
        F.mse_loss(head(outputs), targets).backward(retain_graph=k % 2 == 0)
        if k % 2 == 1:
            optimizer.step()


def one_backward_at_the_end(lstm, head, chunks, optimizer):
    total, state = 0, None
    for inputs, targets in chunks:
        outputs, state = lstm(inputs, state)
        total = total + F.mse_loss(head(outputs), targets)
    optimizer.zero_grad()
    total.backward()
    optimizer.step()


def never_steps(lstm, head, chunks, optimizer):
    # the worked solution, on an optimizer of its own that moves nothing
    detach_tuple(lstm, head, chunks, torch.optim.SGD(lstm.parameters(), lr=0.0))


def no_backward(lstm, head, chunks, optimizer):
    pass


def raises_value_error(lstm, head, chunks, optimizer):
    raise ValueError("not today")


FREED = "an earlier backward had freed"
VERSION = "changed in place since that chunk's forward pass"
ONE_CHUNK = "reaches only its own chunk's steps"
DIFFER = "differ from truncated BPTT's over two chunks"

WRONG_1 = [
    (the_broken_function, FREED),
    (pairs(), FREED),                                   # a backward per chunk, none kept
    (never_cut, FREED),                                 # pair 2's backward reaches pair 1
    (pairs(detach=lambda state: (state[0].detach(), state[1])), FREED),  # h cut, c not
    (pairs(detach=lambda state: state.detach(), retain=True), "a tuple has no tensor methods"),
    (detach_none, "None before the first chunk"),
    (detach_none_as_a_tensor, "None before the first chunk"),
    (builds_the_graph_twice, "forward should run once"),
    (pairs(retain=True, step_every_chunk=True), VERSION),  # a step inside the pair
    (pairs(detach=None, retain=True), VERSION),         # never cut, graphs kept
    (section_2s_fix, ONE_CHUNK),
    (pairs(cut_every_chunk=True), ONE_CHUNK),           # one step per pair, graph cut anyway
    (pairs(retain=True, zero_every_chunk=True), DIFFER),  # the first chunk's gradients wiped
    (one_backward_at_the_end, DIFFER),
    (never_steps, DIFFER),
    (state_from_zeros_each_chunk, "starts from a zero state"),
    (state_from_zeros_each_pair, "each pair starts from a zero state"),
    (zeros_each_pair_retained, "each pair starts from a zero state"),
    (pairs(retain=True), "no backward goes back through it"),  # the pair's last one kept
    (summed_and_retained, "no backward goes back through it"),
    (lesson06._truncated_bptt, "the checker's own function"),
    (no_backward, "never called"),
    (raises_value_error, "ValueError: not today"),
]


@pytest.mark.parametrize("answer, words", WRONG_1)
def test_exercise_1_wrong_with_a_hint_that_fits(answer, words):
    verdict = lesson06.exercise_1(answer)
    assert is_not_yet(verdict, words), verdict


# Loopholes: the checker's reference and wrong-answer models, wrapped so that their
# module is the reader's.

def calls_the_reference(lstm, head, chunks, optimizer):
    lesson06._truncated_bptt(lstm, head, chunks, optimizer)


@pytest.mark.parametrize("answer", [
    lambda *args: lesson06._truncated_bptt(*args),
    functools.partial(lesson06._truncated_bptt),
    calls_the_reference,
    lambda *args: lesson06._state_from_zeros_each_chunk(*args),
    lambda *args: lesson06._state_from_zeros_each_pair(*args),
    lambda *args: lesson06._train_in_pairs(*args, carry=lambda state: tuple(s.detach() for s in state)),
    lambda *args: lesson06._cut_every_chunk(False)(*args),
    lesson06._cut_every_chunk(True),
])
def test_exercise_1_refuses_a_wrapper_around_the_checkers_function(answer):
    assert is_not_yet(lesson06.exercise_1(answer), "the checker's own function")


def calls_the_unwrapped_reference(lstm, head, chunks, optimizer):
    inspect.unwrap(lesson06._truncated_bptt)(lstm, head, chunks, optimizer)


def calls_what_the_reference_closes_over(lstm, head, chunks, optimizer):
    reference = lesson06._truncated_bptt
    inner = [cell.cell_contents for cell in reference.__closure__ or ()]
    (inner[0] if inner else reference)(lstm, head, chunks, optimizer)


@pytest.mark.parametrize("answer", [calls_the_unwrapped_reference,
                                    calls_what_the_reference_closes_over])
def test_exercise_1_no_unguarded_reference_behind_the_guard(answer):
    # a decorator's __wrapped__ (functools.wraps) or closure was the reference unguarded
    assert not hasattr(lesson06._truncated_bptt, "__wrapped__")
    assert lesson06._truncated_bptt.__closure__ is None
    assert is_not_yet(lesson06.exercise_1(answer), "the checker's own function")


def test_exercise_1_reference_is_what_the_exercise_describes():
    # the checker's reference: each step on the gradient of a pair's two losses, the
    # second reaching back through the first chunk (computed here with autograd.grad)
    lstm, head, chunks = lesson06.lstm_task()
    params = [*lstm.parameters(), *head.parameters()]
    with torch.no_grad():
        expected = [p.clone() for p in params]
    state = None
    for start in (0, 2):
        with torch.no_grad():
            for p, e in zip(params, expected):
                p.copy_(e)
        if state is not None:
            state = tuple(s.detach() for s in state)
        loss = 0
        for inputs, targets in chunks[start:start + 2]:
            outputs, state = lstm(inputs, state)
            loss = loss + F.mse_loss(head(outputs), targets)
        grads = torch.autograd.grad(loss, params)
        expected = [(p - 0.1 * g).detach() for p, g in zip(params, grads)]
    assert lesson06._same(lesson06._trained_weights(lesson06._truncated_bptt), expected)
    # and it is not section 2's one-chunk truncation
    assert not lesson06._same(expected, lesson06._trained_weights(section_2s_fix))


def test_exercise_1_reference_runs_only_for_the_checker():
    # the checker itself still uses it; any other caller is refused
    assert is_correct(lesson06.exercise_1(detach_tuple))
    lesson06._trained_weights(lesson06._truncated_bptt)
    lstm, head, chunks = lesson06.lstm_task()
    with pytest.raises(lesson06._CheckersOwnFunction):
        lesson06._truncated_bptt(lstm, head, chunks, torch.optim.SGD(lstm.parameters(), lr=0.1))


def resets_the_flag_then_calls_the_reference(*a):
    # the third review's cheat against a module-global "answer running" flag
    lesson06._answer_running = False; lesson06._truncated_bptt(*a)  # noqa: E702


def copies_the_checkers_own_run(lstm, head, chunks, optimizer):
    # the reference run by the checker's own _trained_weights, nested inside the answer,
    # its weights copied in, and the given optimizer stepped twice on zero gradients
    weights = lesson06._trained_weights(lesson06._truncated_bptt)
    params = [*lstm.parameters(), *head.parameters()]
    for _ in range(2):
        for p in params:
            p.grad = torch.zeros_like(p)
        optimizer.step()
    with torch.no_grad():
        for p, w in zip(params, weights):
            p.copy_(w)


def resets_every_global_then_calls_the_reference(*a):
    for name in [n for n in vars(lesson06) if n.startswith("_answer")]:
        setattr(lesson06, name, False)
    lesson06._cut_every_chunk(False)(*a)


@pytest.mark.parametrize("answer", [resets_the_flag_then_calls_the_reference,
                                    copies_the_checkers_own_run,
                                    resets_every_global_then_calls_the_reference])
def test_exercise_1_refuses_what_the_reader_cannot_reset(answer):
    # the refusal walks the calling frames: nothing the answer sets turns it off
    assert is_not_yet(lesson06.exercise_1(answer), "the checker's own function")


def by_hand(lstm, head, chunks, optimizer):
    # the worked solution's gradients, but p -= 0.1 * g by hand: the given optimizer never steps
    params, state = [*lstm.parameters(), *head.parameters()], None
    for start in (0, 2):
        if state is not None:
            state = tuple(s.detach() for s in state)
        loss = 0
        for inputs, targets in chunks[start:start + 2]:
            outputs, state = lstm(inputs, state)
            loss = loss + F.mse_loss(head(outputs), targets)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 0.1 * g


def test_exercise_1_wants_the_given_optimizers_steps():
    # right weights with no optimizer step: not "correct" with "0 steps" in the message
    verdict = lesson06.exercise_1(by_hand)
    assert is_not_yet(verdict, "stepped 0 times"), verdict


def by_hand_then_steps_on_zeroed_gradients(lstm, head, chunks, optimizer):
    # the weights updated by hand, then the given optimizer stepped once per pair on nothing
    by_hand(lstm, head, chunks, optimizer)
    for _ in range(2):
        optimizer.zero_grad()
        optimizer.step()


def by_hand_then_steps_on_zeros(lstm, head, chunks, optimizer):
    by_hand(lstm, head, chunks, optimizer)
    for _ in range(2):
        for p in optimizer.param_groups[0]["params"]:
            p.grad = torch.zeros_like(p)
        optimizer.step()


@pytest.mark.parametrize("answer", [by_hand_then_steps_on_zeroed_gradients,
                                    by_hand_then_steps_on_zeros])
@pytest.mark.parametrize("language", ["en", "ko"])
def test_exercise_1_counts_only_steps_on_gradients(answer, language):
    # right weights and two steps, but the steps found no gradient: not "correct"
    set_language(language)
    try:
        verdict = lesson06.exercise_1(answer)
    finally:
        set_language("en")
    words = {"en": ["2 of the optimizer's steps", ".grad empty or zero"],
             "ko": ["2번은", ".grad가 비어 있거나 0"]}[language]
    assert is_not_yet(verdict, *words), verdict


def test_exercise_1_hints_never_give_the_fix_away():
    for answer, _ in WRONG_1:
        message = lesson06.exercise_1(answer).message
        assert "detach" not in message and "retain_graph=False" not in message
        assert "sum" not in message and "add the" not in message


# Exercise 2: which error does each sequence raise?

RIGHT_2 = solution("06", 2)  # the lesson's worked solution


def test_exercise_2_key_is_what_pytorch_raises():
    # Computed by running each sequence, so it must agree with the lesson's reasoning.
    assert {n: lesson06._error_of_sequence(n) for n in lesson06._SEQUENCES} == RIGHT_2


def test_exercise_2_key_is_not_offered_to_the_reader():
    # `answer = {n: lesson06.error_of_sequence(n) ...}` was a way round the exercise
    public = set(lesson06.__all__) | {name for name in dir(lesson06) if not name.startswith("_")}
    assert not public & {"error_of_sequence", "SEQUENCES", "sequence_1", "sequence_3"}
    assert set(lesson06.__all__) == {"exercise_1", "exercise_2", "lstm_task", "waves_in_chunks"}


@pytest.mark.parametrize("answer", [
    RIGHT_2,
    {"1": "Version Counter", "2": " NONE ", "3": "freed buffer"},
])
def test_exercise_2_right(answer):
    assert is_correct(lesson06.exercise_2(answer))


ALL_LABELS = [FREED_BUFFER, VERSION_COUNTER, NO_ERROR]
ONE_WRONG = [{**RIGHT_2, number: given} for number in RIGHT_2 for given in ALL_LABELS
             if given != RIGHT_2[number]]


@pytest.mark.parametrize("answer", ONE_WRONG + [
    {n: FREED_BUFFER for n in RIGHT_2}, {n: NO_ERROR for n in RIGHT_2}])
def test_exercise_2_a_wrong_answer_gets_the_reasoning_not_the_label(answer):
    verdict = lesson06.exercise_2(answer)
    assert is_not_yet(verdict, "follow every backward", "retain_graph=True", "in place"), verdict
    # the same words whichever label is wrong: no sequence named, no count of right ones
    assert verdict.message == lesson06.exercise_2(ONE_WRONG[0]).message
    assert not re.search(r"[Ss]equence \d|\d of 3", verdict.message)


def test_exercise_2_toggling_labels_learns_nothing():
    # a reader who changes one label at a time sees one message until everything is right
    messages = {lesson06.exercise_2(answer).message for answer in ONE_WRONG}
    assert len(messages) == 1


@pytest.mark.parametrize("answer, words", [
    ({1: "freed buffer"}, "say what sequence 2, 3 raises"),
    ({**RIGHT_2, 4: "none"}, "4 is not a sequence"),
    ({True: VERSION_COUNTER, 2: NO_ERROR, 3: FREED_BUFFER}, "True is not a sequence"),
    ({**RIGHT_2, 3: "nothing"}, "sequence 3: 'nothing' is not one of"),
    ({**RIGHT_2, 3: None}, "sequence 3: None is not one of"),
    ({**RIGHT_2, 3: torch.ones(2, 3)}, "is not one of"),
    ([VERSION_COUNTER, NO_ERROR, FREED_BUFFER], "expected a dict"),
])
def test_exercise_2_malformed_answers(answer, words):
    assert is_not_yet(lesson06.exercise_2(answer), words)


def test_exercise_2_reads_keys_and_names_loosely():
    """"3" is sequence 3 and " NONE " is "none", as the reader may type them."""
    assert is_correct(lesson06.exercise_2({str(k): f" {v.upper()} " for k, v in RIGHT_2.items()}))


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
    assert [int(n) for n, _ in blocks] == list(lesson06._SEQUENCES)
    for number, shown in blocks:
        sequence, _ = lesson06._SEQUENCES[int(number)]
        body = textwrap.dedent("".join(inspect.getsourcelines(sequence)[0][1:]))
        assert shown.strip() == body.strip(), f"sequence {number} differs from the checker's"


# The checkers run the reader's code: they must leave autograd and the RNG as they were.

def test_checkers_restore_autograd_even_when_the_answer_raises():
    with autograd_left_alone():
        lesson06.exercise_1(raises_value_error)
        lesson06.exercise_1(pairs(retain=True, step_every_chunk=True))
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


@pytest.mark.parametrize("answer", [answer for answer, _ in WRONG_1] + [None, 3])
def test_exercise_1_speaks_korean(korean, answer):
    verdict = lesson06.exercise_1(answer)
    assert not is_correct(verdict) and HANGUL.search(verdict.message), verdict
    assert "detach" not in verdict.message


def test_exercise_1_korean_keeps_the_counts(korean):
    assert is_correct(lesson06.exercise_1(detach_tuple))
    assert all(word in lesson06.exercise_1(detach_tuple).message for word in ("4개", "2번"))
    assert HANGUL.search(lesson06.exercise_1(detach_tuple).message)


@pytest.mark.parametrize("answer", ONE_WRONG[:3])
def test_exercise_2_korean_reasoning(korean, answer):
    verdict = lesson06.exercise_2(answer)
    assert not is_correct(verdict) and HANGUL.search(verdict.message), verdict
    assert "retain_graph=True" in verdict.message and "번 코드" not in verdict.message


@pytest.mark.parametrize("answer", [
    None, [1, 2], {1: "freed buffer", 2: "none"}, {**RIGHT_2, 5: "none"},
    {**RIGHT_2, 3: "nothing"}])
def test_exercise_2_malformed_answers_in_korean(korean, answer):
    verdict = lesson06.exercise_2(answer)
    assert not is_correct(verdict) and HANGUL.search(verdict.message), verdict


def test_exercise_2_right_in_korean(korean):
    verdict = lesson06.exercise_2(RIGHT_2)
    assert is_correct(verdict) and HANGUL.search(verdict.message)
    korean = {FREED_BUFFER: "해제된 버퍼 오류", VERSION_COUNTER: "버전 오류", NO_ERROR: "오류 없음"}
    assert all(f"{n}: {korean[RIGHT_2[n]]}" in verdict.message for n in RIGHT_2)


# Korean names of the errors ------------------------------------------------------------

KOREAN = {FREED_BUFFER: ["해제된 버퍼 오류", "해제된 버퍼"],
          VERSION_COUNTER: ["버전 오류", "버전 카운터"],
          NO_ERROR: ["없음", "오류 없음"]}


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("spelling", range(2))
def test_exercise_2_accepts_the_glossarys_korean_names(language, spelling):
    """The right answer with the Korean names (해제된 버퍼 오류, 버전 오류, 없음) is right in
    both languages' runs."""
    set_language(language)
    try:
        assert is_correct(lesson06.exercise_2(
            {number: KOREAN[name][spelling] for number, name in RIGHT_2.items()}))
    finally:
        set_language("en")


@pytest.mark.parametrize("language", ["en", "ko"])
def test_exercise_2_refuses_a_wrong_answer_in_korean(language):
    wrong = {number: KOREAN[name][0] for number, name in ONE_WRONG[0].items()}
    set_language(language)
    try:
        verdict = lesson06.exercise_2(wrong)
        assert is_not_yet(verdict, "retain_graph=True")
        assert verdict.message == lesson06.exercise_2(ONE_WRONG[0]).message
    finally:
        set_language("en")
