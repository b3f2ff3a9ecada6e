"""Reading the reader's answer: what kind of thing it is, and whether it is what was asked.

The checkers of several lessons ask for the same kinds of answer (a set of labels, a
number, a function) and word their hints the same way; the shared part lives here.
"""
import numbers


def kind(answer) -> str:
    """'an int', 'a str', 'a function': what the reader gave, without its value."""
    name = type(answer).__name__
    return ("an " if name[0].lower() in "aeiou" else "a ") + name


def is_number(answer) -> bool:
    """A real number such as 3 or 0.5, but not True: Python counts a bool as an int."""
    return not isinstance(answer, bool) and isinstance(answer, numbers.Real)


def labels(answer):
    """The reader's labels as a set of upper-case strings, or None if not labels."""
    if isinstance(answer, str) or not isinstance(answer, (set, frozenset, list, tuple)):
        return None
    if not all(isinstance(label, str) for label in answer):
        return None
    return {label.strip().upper() for label in answer}


def hint_for_unknown_labels(given, choices):
    """A hint naming the labels in `given` that are not keys of `choices`, or None."""
    unknown = sorted(given - choices.keys())
    if not unknown:
        return None
    return f"unknown label(s) {', '.join(unknown)}: the labels are {', '.join(choices)}"


def raised(error) -> str:
    """The hint for an answer whose code raised: the error's name and message."""
    return f"your function raised {type(error).__name__}: {error}"


def first_line(error) -> str:
    """The first line of an error's message, so that a hint quoting it stays one line."""
    return str(error).strip().splitlines()[0] if str(error).strip() else ""
