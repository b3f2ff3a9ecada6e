"""The exercises' worked solutions, read from the lessons, the one place they live (each
answer cell's `classroom` metadata: see tools/classroom/exercises.py).

The tests/test_exercises_lessonNN.py files take their right answers from here, so a
solution stored wrong in a notebook fails them:

    solution("02", 1)   # {"A", "C", "E"}: what the worked solution sets `answer` to
    solution("02", 3)   # the function one_pass, as the worked solution defines it
"""
import sys
from functools import lru_cache

import nbformat

from conftest import ROOT

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
