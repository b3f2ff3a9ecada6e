"""The pieces that every lesson's checkers share (course/lesson_checks/)."""
import pytest
import torch

from lesson_checks import not_yet
from lesson_checks.answers import as_number, close
from lesson_checks.errors import (FREED_BUFFER, NO_ERROR, VERSION_COUNTER, describe,
                                  error_raised_by)
from lesson_checks.seeding import fresh_leaf


def test_a_verdict_is_one_line_whatever_its_message():
    verdict = not_yet(f"got {torch.eye(3)!r}\n and more")
    assert "\n" not in repr(verdict)
    assert "tensor([[1., 0., 0.], [0., 1., 0.]," in repr(verdict)


def test_error_raised_by_names_autograds_two_errors():
    def second_backward():
        out = (fresh_leaf() * 2).sum()
        out.backward()
        out.backward()

    def changed_in_place():
        a = fresh_leaf()
        b = a.clone()
        out = (b ** 2).sum()
        b.add_(1)
        out.backward()

    def fine():
        (fresh_leaf() * 2).sum().backward()

    assert error_raised_by(second_backward) == FREED_BUFFER
    assert error_raised_by(changed_in_place) == VERSION_COUNTER
    assert error_raised_by(fine) == NO_ERROR


def test_error_raised_by_lets_other_errors_through():
    with pytest.raises(ValueError):
        error_raised_by(lambda: int("x"))
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        error_raised_by(lambda: torch.ones(2) @ torch.ones(3))


def test_describe_is_the_first_line():
    assert describe(RuntimeError("first\nsecond")) == "RuntimeError: first"
    assert describe(KeyError()) == "KeyError"


@pytest.mark.parametrize("actual, expected, same", [
    (torch.tensor([1.0, 2.0]), [1.0, 2.0 + 1e-7], True),
    ([[1.0, 2.0]], torch.tensor([1.0, 2.0]), False),   # another shape
    ("1.0", 1.0, False),                                # not numbers
    (torch.tensor([1 + 0j]), torch.tensor([1.0]), False),  # complex
    (3, 3.0, True),
])
def test_close(actual, expected, same):
    assert close(actual, expected) is same


def test_as_number():
    assert as_number(torch.tensor([2.5])) == 2.5
    assert as_number(True) is None and as_number(torch.ones(2)) is None
    assert as_number(float("nan")) is None


def test_fresh_leaf_is_the_same_leaf_and_leaves_the_global_rng_alone():
    torch.manual_seed(0)
    expected = torch.rand(2)
    torch.manual_seed(0)
    first, second = fresh_leaf(seed=3), fresh_leaf(seed=3)
    assert torch.equal(first, second) and first.is_leaf and first.requires_grad
    assert torch.equal(torch.rand(2), expected)
    assert fresh_leaf([[1.0, 2.0]]).tolist() == [[1.0, 2.0]]
