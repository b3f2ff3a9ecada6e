"""An nbgrader course folder made from the lessons (`make classroom`): build/classroom/nbgrader.

    nbgrader/
      nbgrader_config.py          # the stub a student sees: `answer = None  # your answer`
      README.md                   # how to use it
      source/NN_name/NN_name.ipynb  # one assignment per lesson, for `nbgrader generate_assignment`

In each source notebook, for each exercise:

- the answer cell is an nbgrader solution cell: its starter code (if any) stays, its
  `answer = None  # hint` line becomes the hint as a comment, then the worked solution
  between `### BEGIN SOLUTION` and `### END SOLUTION`. `generate_assignment` replaces that
  region with the stub `answer = None  # your answer`, set in nbgrader_config.py;
- the check cell is a locked, autograded test cell worth the exercise's points: before
  the verdict it shows, a hidden test that fails unless the answer is correct,

      ### BEGIN HIDDEN TESTS
      # graded by a fresh copy of the checker (lesson_checks/grading.py), not by the notebook's names
      import importlib.machinery as _machinery, os as _os, runpy as _runpy
      _checks = _machinery.PathFinder.find_spec("lesson_checks").submodule_search_locations[0]
      _runpy.run_path(_os.path.join(_checks, "grading.py"))["grade"]("04", 1, answer, TwoHeadNet)
      ### END HIDDEN TESTS
      display(lesson04.exercise_1(answer, TwoHeadNet))

  `generate_assignment` strips the hidden test from the student's copy, `autograde`
  puts it back and runs it: the exercise scores its points if the answer is correct,
  0 if not (or not answered), and the student's feedback shows the checker's verdict
  and hint (the error the hidden test raises). The hidden test trusts no name a cell can
  rebind (`lesson04`, its `exercise_1`, `lesson_checks` in sys.modules): it loads the
  checker anew from its files and takes from the notebook only the answer and what the
  check cell passes with it (here the lesson's TwoHeadNet). The verdict is displayed, not
  the cell's value: nbgrader reads a test cell's value as partial credit, and warns that
  a verdict "cannot be converted" to points.

Outputs are cleared; the metadata nbgrader reads is written here, from the lesson's
`classroom` metadata, which is then dropped.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat

from .exercises import answer_line, exercises, lesson_number, replace_answer_line
from .editions import student_edition

STUB = "answer = None  # your answer"
SCHEMA_VERSION = 3

CONFIG = f'''\
# nbgrader's settings for this course folder (made by `make classroom`).
c = get_config()  # noqa: F821 (nbgrader provides it)

c.CourseDirectory.course_id = "autograd-memory"
# What a student gets in place of a worked solution, as in the self-learner's lessons.
c.ClearSolutions.code_stub = {{"python": {STUB!r}}}
# Some lessons train small models: give a cell time.
c.Execute.timeout = 600
'''

README = """\
# The lessons as an nbgrader course

Made by `make classroom` from notebooks/ (do not edit here: edit the lessons, then re-run
`make classroom`). One assignment per lesson, in `source/`; each exercise is a solution
cell (the worked solution between `### BEGIN SOLUTION` / `### END SOLUTION`) followed by
an autograded cell (a hidden test, then the one-line verdict the student sees).

In a Python environment with nbgrader, PyTorch and this repository's packages
(`autograd_lens`, `lesson_checks`: `pip install -e . -e course` in the repository; `make
nbgrader-env` makes one in `.venv-nbgrader`), from this folder:

    nbgrader generate_assignment 01_backward_and_the_graph   # release/ for the students
    # students' work goes in submitted/<student>/01_backward_and_the_graph/
    nbgrader autograde 01_backward_and_the_graph
    nbgrader export                                          # grades.csv

Points per exercise are in the lessons (1 for a prediction, 2 for code to write or fix).
The hidden tests grade with a fresh copy of the checker (`lesson_checks/grading.py`), not
with the notebook's `lessonNN`, which a student's cell could rebind; a wrong answer's
feedback is the checker's verdict and hint.

`nbgrader autograde` logs, for each graded cell of each submission, "Attribute 'checksum'
for cell ... has changed!": nbgrader's own (https://github.com/jupyter/nbgrader/issues/1961),
harmless: autograde grades with the cell as stored, hidden test included.
"""


# A check cell's one line: `lesson04.exercise_1(answer, TwoHeadNet)` or `exercise_1(answer)`.
CHECK = re.compile(r"(?:\w+\.)?exercise_(\d+)\((answer\b.*)\)")


def hidden_test(check: str, lesson: str) -> str:
    """The check cell of the nbgrader edition: the hidden test, then the verdict shown."""
    match = CHECK.fullmatch(check)
    if match is None:
        raise ValueError(f"lesson {lesson}: a check cell must be one call: {check!r}")
    number, arguments = match.groups()
    return "\n".join([
        "### BEGIN HIDDEN TESTS",
        f"# graded by a fresh copy of the checker (lesson_checks/grading.py), not by the "
        f"notebook's names",
        "import importlib.machinery as _machinery, os as _os, runpy as _runpy",
        '_checks = _machinery.PathFinder.find_spec("lesson_checks").submodule_search_locations[0]',
        f'_runpy.run_path(_os.path.join(_checks, "grading.py"))["grade"]'
        f'("{lesson}", {number}, {arguments})',
        "### END HIDDEN TESTS",
        f"display({check})"])


def solution_region(answer_source: str, solution: str) -> str:
    """The answer cell with its `answer = None  # hint` line turned into the hint (as a
    comment) and the solution between nbgrader's markers."""
    line = answer_line(answer_source)
    hint = line.split("#", 1)[1].strip() if "#" in line else ""
    region = ([f"# {hint}"] if hint else []) + ["### BEGIN SOLUTION", solution,
                                                "### END SOLUTION"]
    return replace_answer_line(answer_source, "\n".join(region))


def source_notebook(notebook, lesson: str):
    """The lesson as an nbgrader source notebook (no outputs)."""
    source = student_edition(notebook)
    for exercise in exercises(notebook, lesson):
        answer, check = source.cells[exercise.answer_cell], source.cells[exercise.check_cell]
        answer.source = solution_region(answer.source, exercise.solution)
        answer.metadata["nbgrader"] = {
            "grade": False, "grade_id": f"{exercise.grade_id}_answer", "locked": False,
            "schema_version": SCHEMA_VERSION, "solution": True, "task": False}
        check.source = hidden_test(check.source.strip(), lesson)
        check.metadata["nbgrader"] = {
            "grade": True, "grade_id": exercise.grade_id, "locked": True,
            "points": exercise.points, "schema_version": SCHEMA_VERSION, "solution": False,
            "task": False}
    return source


def build_course(lessons: list[Path], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nbgrader_config.py").write_text(CONFIG)
    (folder / "README.md").write_text(README)
    for path in lessons:
        assignment = folder / "source" / path.stem
        assignment.mkdir(parents=True, exist_ok=True)
        notebook = nbformat.read(path, as_version=4)
        nbformat.write(source_notebook(notebook, lesson_number(path)), assignment / path.name)
    return folder


def points(notebook, lesson: str) -> dict[str, int]:
    """grade_id -> points, for one lesson (what nbgrader's gradebook should record)."""
    return {e.grade_id: e.points for e in exercises(notebook, lesson)}

