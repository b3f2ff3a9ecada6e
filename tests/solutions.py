"""The exercises' worked solutions, read from the lessons, the one place they live (each
answer cell's `classroom` metadata: see tools/classroom/exercises.py).

The tests/test_exercises_lessonNN.py files take their right answers from here, so a
solution stored wrong in a notebook fails them:

    solution("02", 1)   # {"A", "C", "E"}: what the worked solution sets `answer` to
    solution("02", 3)   # the function backwards, as the worked solution defines it
"""
import json
import sys
from functools import lru_cache

import nbformat

from project import ROOT

sys.path.insert(0, str(ROOT))
from lesson_checks.seeding import seeded  # noqa: E402
from tools.classroom.exercises import (exercises, lesson_number, lesson_paths,  # noqa: E402
                                       solved)


@lru_cache(maxsize=None)
def _lesson(lesson):
    path = next(p for p in lesson_paths() if lesson_number(p) == lesson)
    notebook = nbformat.read(path, as_version=4)
    return path, notebook, {e.number: e for e in exercises(notebook, lesson)}


def set_up_source(lesson):
    """The lesson's first code cell (imports, seed), without its IPython magics."""
    _, notebook, _ = _lesson(lesson)
    first = next(c for c in notebook.cells if c.cell_type == "code")
    return "\n".join(line for line in first.source.splitlines() if not line.startswith("%"))


def answer_cell(lesson, number):
    """The answer cell as the teacher edition has it: starter code, then the solution."""
    _, notebook, found = _lesson(lesson)
    exercise = found[number]
    return solved(notebook.cells[exercise.answer_cell].source, exercise)


def solution(lesson, number):
    """What `answer` is after the lesson's set-up cell and the teacher's answer cell run
    (the global random state is left as it was)."""
    path, _, _ = _lesson(lesson)
    names = {}
    with seeded(0):
        exec(compile(set_up_source(lesson), f"{path.name}: set-up", "exec"), names)
        exec(compile(answer_cell(lesson, number),
                     f"{path.name}: exercise {number}'s worked solution", "exec"), names)
    return names["answer"]


def points(lesson):
    """Exercise number -> points, as the lesson gives them."""
    _, _, found = _lesson(lesson)
    return {number: exercise.points for number, exercise in found.items()}


# What no student's notebook may hold.

def stripped_lines(text):
    return {line.strip() for line in text.splitlines() if line.strip()}


def secret_lines(lesson):
    """Each worked solution's lines that the self-learner's notebook does not show
    (lesson: the notebook's path): exercise number -> set of lines, stripped, each with
    a letter or digit."""
    notebook = nbformat.read(lesson, as_version=4)
    found = exercises(notebook, lesson_number(lesson))
    shown = set().union(*(stripped_lines(cell.source) for cell in notebook.cells))
    secrets = {}
    for exercise in found:
        # a line of brackets alone (a dict's closing "}") says nothing of the answer
        lines = {line for line in stripped_lines(exercise.solution) - shown
                 if any(character.isalnum() for character in line)}
        assert lines, f"exercise {exercise.number}'s solution is all on the page already"
        secrets[exercise.number] = lines
    return secrets


def every_string(value):
    """Every string in a JSON value (keys and values, nested)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from every_string(item)
    elif isinstance(value, list):
        for item in value:
            yield from every_string(item)


def solution_lines_in(notebook_json, secrets):
    """The secret lines that appear as a line of any string of the notebook's JSON."""
    present = set().union(*(stripped_lines(text) for text in every_string(notebook_json)))
    return {number: lines & present for number, lines in secrets.items() if lines & present}


def assert_no_solution(notebook_json, lesson):
    leaked = solution_lines_in(notebook_json, secret_lines(lesson))
    assert not leaked, f"solution lines in a student's notebook: {leaked}"
    text = json.dumps(notebook_json)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", '"classroom"'):
        assert marker not in text, marker
