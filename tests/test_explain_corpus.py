"""`python -m autograd_lens.explain` on real users' code: the cases of tests/explain_corpus/,
each a public thread's failing program cut down to a tiny script (its README lists them).

The expected answer of each case is the thread's, written in its docstring before the
tool was run on it: the cause its accepted explanation gives (`Cause:`), phrases a right
fix must contain (`Fix mentions:`) and must not (`Fix must not say:`), and, in the code,
the lines the note must name (`# fails`, `# made`, `# called`, `# freed`, `# changed`).
Each case runs through the runner, as a user runs it, and its note must be right on all
of them: lines, cause and fix.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_lens.explain import diagnosis

CORPUS = Path(__file__).parent / "explain_corpus"
CASES = sorted(path.name for path in CORPUS.glob("*.py"))
FIELDS = ("Source", "Thread", "Cause", "Fix", "Fix mentions", "Fix must not say")


def case(script):
    """The docstring's fields, and the line number of each marker."""
    text = (CORPUS / script).read_text()
    docstring = text.split('"""')[1]
    fields = dict(re.findall(r"^(Source|Thread|Cause|Fix|Fix mentions|Fix must not say): (.+(?:\n(?!\w[\w ]*: ).+)*)",
                             docstring, re.M))
    marks = {}
    for number, line in enumerate(text.splitlines(), 1):
        comment = line.partition("#")[2]
        for mark in re.findall(r"\b(fails|made|called|freed|changed|stored)\b", comment):
            marks.setdefault(mark, []).append(number)
    return fields, marks


def phrases(field):
    return [] if field.strip() in ("", "-") else [p.strip() for p in field.split(",") if p.strip()]


def run(script):
    command = [sys.executable, "-m", "autograd_lens.explain", script]
    return subprocess.run(command, cwd=CORPUS, capture_output=True, text=True, timeout=120)


def test_the_corpus_is_real_and_complete():
    """At least 20 cases, each from its own public thread, each with the thread's answer."""
    assert len(CASES) >= 20
    sources = []
    for script in CASES:
        fields, marks = case(script)
        assert set(FIELDS) <= set(fields), (script, sorted(fields))
        assert re.match(r"https://\S+$", fields["Source"].strip()), script
        assert hasattr(diagnosis, fields["Cause"].strip()), (script, fields["Cause"])
        assert "fails" in marks and ("made" in marks), script
        sources.append(fields["Source"].strip())
    assert len(set(sources)) == len(sources), "two cases cite the same thread"
    listed = (CORPUS / "README.md").read_text()
    assert all(f"| {script} |" in listed for script in CASES)


@pytest.mark.scripts
@pytest.mark.parametrize("script", CASES)
def test_the_note_is_right(script):
    fields, marks = case(script)
    result = run(script)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "autograd_lens.explain:" in result.stderr, result.stderr[-3000:]
    note = result.stderr[result.stderr.index("autograd_lens.explain:"):]
    at = lambda number: rf"\b{re.escape(script)}:{number}\b"  # noqa: E731
    # the lines
    assert any(re.search(rf"call #\d+, at {at(n)},", note) for n in marks["fails"]), note
    assert any(re.search(rf"was made at {at(n)}", note) for n in marks["made"]), note
    for mark, words in (("called", "called from"), ("freed", "freed by"), ("changed", "changed by")):
        for number in marks.get(mark, [])[:1]:
            assert re.search(rf"{words}[^\n]*{at(number)}", note), (mark, number, note)
    for number in marks.get("stored", []):
        assert re.search(at(number), note), ("stored", number, note)
    # the cause and the fix
    expected = getattr(diagnosis, fields["Cause"].strip())
    assert f"Likely cause: {expected.cause}." in note, note
    fix = re.search(r"Usual fix: (.*)", note)[1].lower()
    for phrase in phrases(fields["Fix mentions"]):
        assert phrase.lower() in fix, (phrase, fix)
    for phrase in phrases(fields["Fix must not say"]):
        assert phrase.lower() not in fix, (phrase, fix)
