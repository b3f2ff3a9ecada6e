"""The language of the verdicts and hints: English, or Korean for notebooks/ko.

A lesson's set-up cell chooses it, `set_language("en")` or `set_language("ko")`: the one
line in which the two editions' code differs only by a string. Every message a checker
writes goes through `say(english, korean)`, called when the message is made, so both
texts sit side by side in the checker's code (tests/test_checker_language.py checks that
no message is left in English only).
"""
LANGUAGES = ("en", "ko")
_current = "en"


def set_language(code: str) -> None:
    """Write the verdicts and hints in `code`: "en" (English) or "ko" (Korean)."""
    global _current
    if code not in LANGUAGES:
        raise ValueError(f"set_language takes one of {LANGUAGES}; got {code!r}")
    _current = code


def language() -> str:
    """The language the checkers write in now: "en" or "ko"."""
    return _current


def say(english: str, korean: str) -> str:
    """The message in the current language (both are given, as f-strings, at the call)."""
    return korean if _current == "ko" else english
