"""Autograd's errors, as the checkers name them: the freed-buffer error, the in-place
"version" error, or none. One place for their message text, for running a piece of the
reader's code to see which of them it raises, and for reading an answer that names the
error each of several sequences of calls raises.
"""
from .answers import kind
from .language import say

# The first words of each message, as torch 2.13 words them.
FREED = "Trying to backward through the graph a second time"
VERSION = "modified by an inplace operation"

# The names the exercises use for them (an answer is one of these strings).
FREED_BUFFER, VERSION_COUNTER, NO_ERROR = "freed buffer", "version counter", "none"
ERROR_NAMES = (FREED_BUFFER, VERSION_COUNTER, NO_ERROR)
# The glossary's Korean names for them, which an answer may give instead, in either
# language's run; spaces are ignored ("해제된 버퍼 오류", "해제된버퍼", "오류 없음").
KOREAN_ERROR_NAMES = {
    "해제된버퍼오류": FREED_BUFFER, "해제된버퍼": FREED_BUFFER,
    "버전오류": VERSION_COUNTER, "버전카운터": VERSION_COUNTER, "버전카운터오류": VERSION_COUNTER,
    "없음": NO_ERROR, "오류없음": NO_ERROR,
}


def which_error(error) -> str | None:
    """FREED_BUFFER or VERSION_COUNTER for autograd's two errors, None for any other."""
    if isinstance(error, RuntimeError):
        if FREED in str(error):
            return FREED_BUFFER
        if VERSION in str(error):
            return VERSION_COUNTER
    return None


def error_raised_by(run) -> str:
    """Call `run()`: NO_ERROR, FREED_BUFFER or VERSION_COUNTER; any other error propagates."""
    try:
        run()
    except RuntimeError as error:
        name = which_error(error)
        if name is None:
            raise
        return name
    return NO_ERROR


def error_name(value) -> str | None:
    """The one of ERROR_NAMES that `value` names: the English name in any case and spacing,
    hyphenated as the lessons write it, with or without "error" (" Freed-buffer error ",
    "version error", "no error"), or one of KOREAN_ERROR_NAMES; None for anything else."""
    if not isinstance(value, str):
        return None
    english = " ".join(value.replace("-", " ").split()).lower()
    english = {"no error": NO_ERROR, "version error": VERSION_COUNTER}.get(english, english)
    if english.endswith(" error"):
        english = english[:-len(" error")]
    if english in ERROR_NAMES:
        return english
    return KOREAN_ERROR_NAMES.get("".join(value.split()))


def describe(error) -> str:
    """'RuntimeError: <first line of its message>': a one-line account of an error."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def _loose(key):
    """A key as the reader may type it: " b " is "B", "2" is 2; a bool is no key."""
    if isinstance(key, bool):
        return None
    if isinstance(key, str):
        key = key.strip()
        return int(key) if key.isdigit() else key.upper()
    return key


def read_error_names(answer, sequences, named, example):
    """({sequence: error name}, None) when `answer` is a dict naming one of ERROR_NAMES
    for each of `sequences` (keys and names read loosely, names in English or Korean:
    error_name), else (None, a one-line hint).
    named(keys): how a hint names sequences, e.g. "sequence C, D"; example: an answer's
    shape to show, e.g. '{"A": ..., "B": ...}'."""
    if not isinstance(answer, dict):
        return None, say(f"expected a dict from each sequence to an error, e.g. {example}; "
                         f"got {kind(answer)}",
                         f"{example}처럼 오류 이름을 값으로 하는 딕셔너리가 와야 하는데 "
                         f"{kind(answer)}가 왔습니다")
    listed = ", ".join(f'"{name}"' for name in ERROR_NAMES)
    given = {}
    for key, value in answer.items():
        sequence = _loose(key)
        if sequence not in sequences:
            return None, say(f"{key!r} is not a sequence: the sequences are "
                             f"{', '.join(map(str, sequences))}",
                             f"{key!r} 키에 해당하는 문항이 없습니다. 키는 {named(sequences)} "
                             "가운데 하나를 가리켜야 합니다")
        name = error_name(value)
        if name is None:
            return None, say(f"{named([sequence])}: {value!r} is not one of {listed}",
                             f'{named([sequence])}에 준 {value!r} 값은 {listed} 가운데 하나가 '
                             '아닙니다. 한국어로 "해제된 버퍼 오류", "버전 오류", "없음"이라고 '
                             '써도 됩니다')
        given[sequence] = name
    missing = [sequence for sequence in sequences if sequence not in given]
    if missing:
        return None, say(f"say what {named(missing)} raises too, as one of {listed}",
                         f"{named(missing)}에서 나는 오류도 {listed} 가운데 하나로 답하세요")
    return given, None
