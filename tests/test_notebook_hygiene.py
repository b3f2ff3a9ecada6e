"""The stored lessons are a clean "Restart & Run All", safe to publish and to compare.

nbval (run on notebooks/ by the same `make test`) compares the outputs; these
tests check what nbval does not: how the outputs were made and what they show.
"""
import json
import re

import nbformat
import pytest

from project import KOREAN_NOTEBOOKS, NOTEBOOKS

MACHINE_SPECIFIC = re.compile(
    r"/tmp/|/root/|/home/|/Users/|[A-Za-z]:\\\\|site-packages|\.venv|ipykernel_\d+"
    r"|\bat 0x[0-9a-fA-F]{6,}"  # memory addresses in reprs
)
NOT_COMPARED = ("image/png",)  # binary; nbval skips it too


def code_cells(notebook):
    return [c for c in notebook.cells if c.cell_type == "code"]


def tags(cell):
    return cell.metadata.get("tags", [])


EVERY_LESSON = NOTEBOOKS + KOREAN_NOTEBOOKS  # both editions are held to the same rules
# The headings every lesson has, in its edition's language (notebooks/ko: Korean).
PARTS = {"en": ("what you will be able to do", "summary", "exercise"),
         "ko": ("이 강의를 마치면 할 수 있는 것", "요약", "연습 문제")}


def language_of(path):
    return "ko" if path.parent.name == "ko" else "en"


@pytest.fixture(params=EVERY_LESSON,
                ids=[f"{language_of(p)}/{p.name}" for p in EVERY_LESSON])
def lesson(request):
    return request.param


@pytest.fixture
def notebook(lesson):
    return nbformat.read(lesson, as_version=4)


def test_there_are_lessons():
    assert len(NOTEBOOKS) >= 2


def test_kernelspec_is_python3(notebook):
    assert notebook.metadata["kernelspec"]["name"] == "python3"


def test_executed_in_order_from_a_fresh_kernel(notebook):
    counts = [c.execution_count for c in code_cells(notebook)]
    assert counts == list(range(1, len(counts) + 1))


def test_errors_only_where_expected_and_stored_where_expected(notebook):
    for index, cell in enumerate(code_cells(notebook), start=1):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if "raises-exception" in tags(cell):
            # Stored name and message: strict nbval then fails if the error stops
            # being raised or its message changes (see test_expected_errors.py).
            assert len(errors) == 1 and errors[0].ename and errors[0].evalue, \
                f"code cell {index} is tagged raises-exception but stores no error"
        else:
            assert not errors, f"code cell {index} raised: {errors[0].ename if errors else ''}"


def test_no_machine_paths_or_addresses_in_outputs(notebook):
    for index, cell in enumerate(code_cells(notebook), start=1):
        for output in cell.outputs:
            shown = {k: v for k, v in output.get("data", {}).items() if k not in NOT_COMPARED}
            text = json.dumps([output.get("text", ""), shown, output.get("traceback", []),
                               output.get("evalue", "")])
            match = MACHINE_SPECIFIC.search(text)
            assert not match, f"code cell {index} shows {match.group(0)!r}"


def test_ignored_outputs_say_why(notebook):
    for index, cell in enumerate(code_cells(notebook), start=1):
        if "nbval-ignore-output" in tags(cell):
            assert re.search(r"^\s*#", cell.source, re.MULTILINE), \
                f"code cell {index} ignores its output without a comment saying why"


def test_lesson_has_objectives_summary_and_exercises(lesson, notebook):
    headings = [line for c in notebook.cells if c.cell_type == "markdown"
                for line in c.source.splitlines() if line.startswith("#")]
    text = "\n".join(headings).lower()
    for part in PARTS[language_of(lesson)]:
        assert part in text, f"no heading for {part!r}"
    checks = [c for c in code_cells(notebook) if re.search(r"\bexercise_\d+\(", c.source)]
    assert len(checks) >= 2, "each lesson has two or three exercises with check cells"


def test_tracebacks_are_short(notebook):
    # %xmode Minimal: a reader sees the error, not library internals.
    first = code_cells(notebook)[0]
    assert "%xmode Minimal" in first.source


ANSI = re.compile(r"\x1b\[[0-9;]*m")
# explain's note quotes the line it names: "... at cell In[2], line 2:\n      features = ..."
QUOTED_LINE = re.compile(r"cell In\[(\d+)\], line (\d+)[^\n]*:\n +(\S[^\n]*)")


def quoted_lines_that_differ(notebook):
    """Lines that a stored error quotes from a cell, where the cell's source now differs:
    nbval compares an error's name and message, not the note in its traceback."""
    sources = {c.execution_count: c.source.splitlines() for c in code_cells(notebook)}
    stale = []
    for cell in code_cells(notebook):
        for output in (o for o in cell.outputs if o.output_type == "error"):
            text = ANSI.sub("", "\n".join(output.traceback))
            for count, line, quoted in QUOTED_LINE.findall(text):
                lines = sources.get(int(count), [])
                now = lines[int(line) - 1].strip() if int(line) <= len(lines) else None
                if now != quoted.strip():
                    stale.append(f"In[{count}] line {line}: stored {quoted.strip()!r}, now {now!r}")
    return stale


def test_stored_errors_quote_the_code_as_it_is(notebook):
    assert not quoted_lines_that_differ(notebook)


def test_a_stale_quote_is_caught():
    notebook = nbformat.read(NOTEBOOKS[-1], as_version=4)  # lesson 07: its notes quote lines
    assert not quoted_lines_that_differ(notebook) and any(
        QUOTED_LINE.search(ANSI.sub("", "\n".join(o.get("traceback", []))))
        for c in code_cells(notebook) for o in c.outputs)
    cell = next(c for c in code_cells(notebook) if "features = encoder(x)  #" in c.source)
    cell.source = cell.source.replace("features = encoder(x)", "features = encoder(x * 1)")
    assert quoted_lines_that_differ(notebook)
