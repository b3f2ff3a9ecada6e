"""anomaly_report keeps the first line of anomaly mode's warning and the lines of the
program's own frames, outermost first, and leaves out torch's and Python's."""
import doctest
import warnings

import pytest
import torch
from torch import nn

import autograd_lens.anomaly
from autograd_lens import anomaly_report


def features_computed_once():
    encoder = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
    features = encoder(torch.ones(2, 4))  # made once, reused
    features.sum().backward()
    features.sum().backward()


def anomaly_warning(run):
    with warnings.catch_warnings(record=True) as caught, torch.autograd.detect_anomaly():
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="a second time"):
            run()
    return caught[-1]


def test_the_first_line_and_the_programs_own_lines():
    report = anomaly_report(anomaly_warning(features_computed_once)).splitlines()
    assert report[0] == ("Error detected in TanhBackward0. "
                         "Traceback of forward call that caused the error:")
    assert report[-2:] == ["    run()",
                           "    features = encoder(torch.ones(2, 4))  # made once, reused"]
    assert not any("return forward_call" in line or "torch.tanh" in line for line in report)


@pytest.mark.parametrize("given", ["the warning", "its text"])
def test_the_warning_or_its_text(given):
    recorded = anomaly_warning(features_computed_once)
    other = recorded.message if given == "the warning" else str(recorded.message)
    assert anomaly_report(other) == anomaly_report(recorded)


def test_a_frame_without_source_shows_where_it_is():
    text = ("Error detected in MulBackward0. Traceback of forward call that caused the error:\n"
            '  File "<string>", line 1, in <module>\n'
            '  File "train.py", line 7, in train\n'
            "    y = x * w\n")
    assert anomaly_report(text).splitlines()[1:] == [
        '    File "<string>", line 1, in <module>', "    y = x * w"]


@pytest.mark.parametrize("not_a_report", [None, 3, "a warning about something else",
                                          UserWarning("deprecated")])
def test_anything_else_is_refused_with_what_to_do(not_a_report):
    with pytest.raises(ValueError, match="catch_warnings"):
        anomaly_report(not_a_report)


def test_docstring_example():
    result = doctest.testmod(autograd_lens.anomaly, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
