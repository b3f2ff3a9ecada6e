"""What the tests/test_exercises_lessonNN.py files ask of every lesson's checkers.

- `is_unanswered`, `is_correct`, `is_not_yet`: read a Verdict;
- `global_rng_left_alone`, `autograd_left_alone`: a checker runs inside the reader's
  notebook, so it must leave the random numbers and torch.autograd as it found them;
- `every_checker_tests`: the tests that hold for any checker, whatever it asks;
- `stable_id`: a test id for any value, the same in every process.
"""
import re
from contextlib import contextmanager

import pytest
import torch


def is_unanswered(verdict):
    return verdict.correct is None and bool(verdict.message)


def is_correct(verdict):
    return verdict.correct is True and bool(verdict.message)


def is_not_yet(verdict, *words):
    """A wrong answer: not yet, with a hint (that mentions each of `words`)."""
    return (verdict.correct is False and bool(verdict.message)
            and all(word in verdict.message for word in words))


@contextmanager
def global_rng_left_alone():
    """Fail unless the code inside leaves the global RNG where it was: the notebook's
    cells after a check cell must draw the numbers their stored outputs show."""
    torch.manual_seed(0)
    expected = torch.rand(3)
    torch.manual_seed(0)
    yield
    assert torch.equal(torch.rand(3), expected), "the global RNG was used or reseeded"


@contextmanager
def autograd_left_alone():
    """Fail unless torch.autograd.backward and .grad are the originals afterwards
    (a checker that spies on them must put them back, even when the answer raised)."""
    backward, grad = torch.autograd.backward, torch.autograd.grad
    yield
    assert torch.autograd.backward is backward and torch.autograd.grad is grad


def stable_id(value) -> str:
    """A test id from repr(value), the same in every process: no memory address, sets in
    sorted order (pytest-xdist refuses to run when its workers' test ids differ, and a set
    of strings iterates in a per-process order), at most 60 characters."""
    return re.sub(r" at 0x[0-9a-f]+", "", _canonical(value))[:60]


def _canonical(value) -> str:
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(map(_canonical, value))) + "}" if value else "set()"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_canonical(k)}: {_canonical(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(map(_canonical, value))
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


def every_checker_tests(checks, odd_inputs, sample_answers):
    """The three tests every lesson's checkers pass, for a test module to take in as

        test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line = \\
            every_checker_tests(CHECKS, ODD_INPUTS, SAMPLE_ANSWERS)

    None (the answer cell as the notebook ships it) is "not answered yet"; an answer of
    the wrong kind gets a hint, never a traceback; and whatever the answer, the verdict
    is one line (`sample_answers`: a few answers of different kinds).
    """
    @pytest.mark.parametrize("check", checks)
    def test_none_is_unanswered(check):
        assert is_unanswered(check(None))

    @pytest.mark.parametrize("check", checks)
    @pytest.mark.parametrize("answer", odd_inputs, ids=stable_id)
    def test_odd_input_gets_a_hint(check, answer):
        assert is_not_yet(check(answer))

    @pytest.mark.parametrize("check", checks)
    def test_verdict_is_one_line(check):
        for answer in sample_answers:
            assert "\n" not in repr(check(answer)), answer

    return test_none_is_unanswered, test_odd_input_gets_a_hint, test_verdict_is_one_line
