"""Autograd's errors, as the checkers name them: the freed-buffer error, the in-place
"version" error, or none. One place for their message text, and for running a piece
of the reader's code to see which of them it raises.
"""
# The first words of each message, as torch 2.13 words them.
FREED = "Trying to backward through the graph a second time"
VERSION = "modified by an inplace operation"

# The names the exercises use for them (an answer is one of these strings).
FREED_BUFFER, VERSION_COUNTER, NO_ERROR = "freed buffer", "version counter", "none"


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


def describe(error) -> str:
    """'RuntimeError: <first line of its message>': a one-line account of an error."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
