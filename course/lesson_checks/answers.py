"""Reading the reader's answer: what kind of thing it is, and whether it is what was asked.

The checkers of every lesson ask for the same kinds of answer (a set of labels, a number,
a tensor, a function) and compare numbers the same way; the shared part lives here.
"""
import math
import numbers

import torch

from .language import say


def kind(answer) -> str:
    """'an int', 'a str', 'a function': what the reader gave, without its value."""
    name = type(answer).__name__
    return say(("an " if name[0].lower() in "aeiou" else "a ") + name, f"{name} 객체")


def is_number(answer) -> bool:
    """A real number such as 3 or 0.5, but not True: Python counts a bool as an int."""
    return not isinstance(answer, bool) and isinstance(answer, numbers.Real)


def as_number(answer):
    """A real number, or a one-element real tensor, as a float; None for anything else."""
    if isinstance(answer, torch.Tensor):
        if answer.numel() != 1 or answer.is_complex() or answer.dtype == torch.bool:
            return None
        return answer.detach().item()
    return float(answer) if is_number(answer) and math.isfinite(answer) else None


def as_float_tensor(answer):
    """A tensor or nested list of real numbers as a float64 CPU tensor; None otherwise."""
    if isinstance(answer, (str, bytes, dict, set)) or answer is None:
        return None
    try:
        tensor = torch.as_tensor(answer.detach() if isinstance(answer, torch.Tensor) else answer)
    except (TypeError, ValueError, RuntimeError):
        return None
    if tensor.is_complex() or tensor.dtype == torch.bool:
        return None
    return tensor.to(device="cpu", dtype=torch.float64)


def close(actual, expected, rtol=1e-4, atol=1e-6) -> bool:
    """Numbers or tensors equal up to rounding; False, never an error, for another shape
    or for something that is not numbers at all."""
    actual, expected = as_float_tensor(actual), as_float_tensor(expected)
    if actual is None or expected is None or actual.shape != expected.shape:
        return False
    return torch.allclose(actual, expected, rtol=rtol, atol=atol)


def labels(answer):
    """The reader's labels as a set of upper-case strings, or None if not labels."""
    if isinstance(answer, str) or not isinstance(answer, (set, frozenset, list, tuple)):
        return None
    if not all(isinstance(label, str) for label in answer):
        return None
    return {label.strip().upper() for label in answer}


def read_labels(answer, choices):
    """(labels, None) for an answer that is a set of labels among `choices`, else
    (None, a one-line hint saying what is wrong: not labels at all, or unknown labels)."""
    chosen = labels(answer)
    if chosen is None:
        example = "{" + ", ".join(repr(label) for label in list(choices)[:2]) + "}"
        return None, say(f"expected a set of labels such as {example}; got {kind(answer)}",
                         f"{example} 같은 레이블 집합(set)이 와야 하는데 {kind(answer)}가 왔습니다")
    hint = hint_for_unknown_labels(chosen, choices)
    return (None, hint) if hint else (chosen, None)


def hint_for_unknown_labels(given, choices):
    """A hint naming the labels in `given` that are not keys of `choices`, or None."""
    unknown = [repr(label) for label in sorted(given - choices.keys())]  # '' shows as ''
    if not unknown:
        return None
    return say(f"unknown label(s) {', '.join(unknown)}: the labels are {', '.join(choices)}",
               f"없는 레이블이 있습니다({', '.join(unknown)}). 쓸 수 있는 레이블은 "
               f"{', '.join(choices)}입니다")


def raised(error) -> str:
    """The hint for an answer whose code raised: the error's name and first line."""
    from .errors import describe
    return say(f"your code raised {describe(error)}", f"코드에서 난 오류: {describe(error)}")
