"""The one-line answer a check cell gives: right, not yet (with a hint), or unanswered."""
from dataclasses import dataclass

from .language import say


@dataclass(frozen=True)
class Verdict:
    correct: bool | None  # None: the reader has not answered yet
    message: str

    def __post_init__(self):
        # One line, whatever went into the message (a tensor's repr spans several).
        object.__setattr__(self, "message", " ".join(str(self.message).split()))

    def __bool__(self):
        return self.correct is True

    def __repr__(self):
        mark = {True: say("✓ correct", "✓ 정답"), False: say("✗ not yet", "✗ 아직 아님"),
                None: say("… not answered yet", "… 아직 답하지 않음")}[self.correct]
        return f"{mark}: {self.message}"


def correct(message: str) -> Verdict:
    return Verdict(True, message)


def not_yet(hint: str) -> Verdict:
    return Verdict(False, hint)


def unanswered(what_to_do: str) -> Verdict:
    return Verdict(None, what_to_do)
