"""lesson_checks/grading.py, what the nbgrader edition's hidden tests grade with
(tools/classroom/nbgrader_course.py): a fresh copy of the checkers, loaded from their
files, which nothing a notebook's cells do to the notebook's own copy can fool.
tests/test_classroom_nbgrader.py submits the same cheats through nbgrader itself."""
import runpy
import sys
import types

import pytest

from lesson_checks import lesson02, verdict
from project import ROOT
from solutions import solution

GRADING = ROOT / "course" / "lesson_checks" / "grading.py"
WRONG = {"A", "B"}  # lesson 02, exercise 1


def grade(*arguments):
    """As a hidden test calls it: the file run by its path, not imported."""
    return runpy.run_path(str(GRADING))["grade"](*arguments)


def test_a_right_answer_passes_and_a_wrong_one_fails_with_its_hint(monkeypatch):
    # the fresh copy speaks English (the package's `language` is a function: take the module)
    monkeypatch.setattr(sys.modules["lesson_checks.language"], "_current", "en")
    grade("02", 1, solution("02", 1))
    with pytest.raises(AssertionError) as failed:
        grade("02", 1, WRONG)
    assert str(failed.value) == repr(lesson02.exercise_1(WRONG))
    assert str(failed.value).startswith("✗ not yet: ")


def test_what_a_cell_can_change_does_not_count(monkeypatch):
    yes = lambda *a, **k: True  # noqa: E731
    monkeypatch.setattr(lesson02, "exercise_1", yes)
    monkeypatch.setattr(verdict.Verdict, "__bool__", lambda self: True)
    stub = types.SimpleNamespace(exercise_1=yes)
    monkeypatch.setitem(sys.modules, "lesson_checks.lesson02", stub)
    monkeypatch.setitem(sys.modules, "_graded_lesson_checks.lesson02", stub)
    assert lesson02.exercise_1(WRONG)  # the notebook's checker is fooled
    with pytest.raises(AssertionError, match="not yet"):
        grade("02", 1, WRONG)
