"""What PyTorch's anomaly mode said, without the library frames: `anomaly_report`."""
import os
import re
import site
import sys
import warnings

import torch

# One frame of the forward traceback that anomaly mode prints, as the traceback module
# formats it: '  File "train.py", line 12, in train', then the line of code (indented 4).
_FRAME = re.compile(r'^  File "(?P<file>[^"]*)", line (?P<line>\d+), in (?P<function>.*)$')
_HEADER = "Traceback of forward call that caused the error:"


def _installed_dirs() -> tuple:
    """Where installed code lives: Python's own library, site-packages, torch, and this
    package (which may be installed in place, outside site-packages)."""
    dirs = [sys.prefix, sys.base_prefix, *site.getsitepackages(), site.getusersitepackages(),
            os.path.dirname(torch.__file__), os.path.dirname(os.path.abspath(__file__))]
    return tuple(os.path.join(d, "") for d in dirs if d)


def _is_the_programs(file: str) -> bool:
    """A frame of the program's own code, not Python's (`<frozen runpy>`) nor a library's."""
    return not file.startswith("<frozen") and not file.startswith(_installed_dirs())


def anomaly_report(warning) -> str:
    """The warning that anomaly mode issues when a node's backward fails, cut to what it
    says about your code: its first line (the node), then the lines of the forward call
    that made the node, one per frame of your own code (outermost first); the frames of
    Python, of torch and of other installed packages are left out.

    `warning` is what `warnings.catch_warnings(record=True)` recorded (or the warning, or
    its text). Under `torch.autograd.detect_anomaly()` the warning is issued just before
    the error is raised, so record it around the failing code::

        with warnings.catch_warnings(record=True) as caught, torch.autograd.detect_anomaly():
            train()                # raises; `caught` keeps the warning
        print(anomaly_report(caught[-1]))  # in the next cell, or in an `except` clause

    Example::

        >>> print(anomaly_report('Error detected in TanhBackward0. Traceback of forward call '
        ...                      'that caused the error:\\n  File "train.py", line 3, in train\\n'
        ...                      '    features = encoder(x)\\n'))
        Error detected in TanhBackward0. Traceback of forward call that caused the error:
            features = encoder(x)
    """
    if isinstance(warning, warnings.WarningMessage):
        warning = warning.message
    text = str(warning) if isinstance(warning, (Warning, str)) else None
    if text is None or _HEADER not in text:
        raise ValueError(
            "expected the warning that anomaly mode issues when a backward fails ('Error "
            f"detected in ... {_HEADER}'), got {type(warning).__name__}: record it with "
            "`with warnings.catch_warnings(record=True) as caught, "
            "torch.autograd.detect_anomaly():` around the failing code, then pass caught[-1]")
    lines = text.splitlines()
    report = [lines[0]]
    for number, line in enumerate(lines):
        frame = _FRAME.match(line)
        if frame is None or not _is_the_programs(frame["file"]):
            continue
        code = lines[number + 1] if number + 1 < len(lines) else ""
        if code.startswith("    ") and not _FRAME.match(code):
            report.append("    " + code.strip())
        else:  # no source to show (code typed at a prompt, or run from a string)
            report.append(f'    File "{frame["file"]}", line {frame["line"]}, in {frame["function"]}')
    return "\n".join(report)
