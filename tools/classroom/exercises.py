"""Where a lesson keeps its exercises' worked solutions, and how to read them.

Each exercise is two code cells in notebooks/NN_name.ipynb (the one source of a lesson):

- the answer cell, which the reader edits: maybe some starter code (a function to write
  or to fix), then one line `answer = None  # ...`;
- the check cell, `lessonNN.exercise_K(answer)` (or `exercise_K(answer, ...)`), which
  shows a one-line verdict.

The answer cell's metadata holds the worked solution and the exercise's points:

    "classroom": {"exercise": K, "points": P, "solution": ["line 1", "line 2", ...]}

The solution is the code that replaces the `answer = None` line (the starter code above
it stays): for a function, its definition, then `answer = the_function`. It is stored as a
list of lines, so that a diff of the notebook shows a changed solution line by line.
Every edition (tools/classroom) and tests/solutions.py read it through this module.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
LESSONS = "[0-9][0-9]_*.ipynb"

ANSWER_LINE = re.compile(r"^answer = None\b.*$", re.MULTILINE)
CHECK_CALL = re.compile(r"\bexercise_(\d+)\(answer\b")


@dataclass(frozen=True)
class Exercise:
    lesson: str        # "01"
    number: int        # K in exercise_K
    points: int
    solution: str      # the code that replaces the `answer = None` line
    answer_cell: int   # index in notebook.cells
    check_cell: int

    @property
    def grade_id(self) -> str:
        """nbgrader's id of the check cell (the graded cell) of this exercise."""
        return f"lesson{self.lesson}_exercise_{self.number}"


def lesson_paths(folder: Path = NOTEBOOKS) -> list[Path]:
    """The lessons in `folder`: notebooks/, or notebooks/ko/ for the Korean edition."""
    return sorted(Path(folder).glob(LESSONS))


def lesson_number(path: Path) -> str:
    return Path(path).name[:2]


def exercises(notebook, lesson: str) -> list[Exercise]:
    """The lesson's exercises in order, checked to be laid out as the docstring says:
    every check cell right after an answer cell that holds its solution, and no solution
    without a check cell."""
    found = []
    code = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    for answer_index, check_index in zip(code, code[1:]):
        meta = notebook.cells[answer_index].metadata.get("classroom")
        check = CHECK_CALL.search(notebook.cells[check_index].source)
        if meta is None and check is None:
            continue
        where = f"lesson {lesson}, cell {answer_index}"
        if meta is None:
            raise ValueError(f"lesson {lesson}, cell {check_index} checks exercise "
                             f"{check.group(1)}, but the cell before it holds no solution")
        if check is None or int(check.group(1)) != meta["exercise"]:
            raise ValueError(f"{where}: the solution of exercise {meta['exercise']} is not "
                             "followed by that exercise's check cell")
        answer_lines = ANSWER_LINE.findall(notebook.cells[answer_index].source)
        if len(answer_lines) != 1:
            raise ValueError(f"{where}: an answer cell needs exactly one `answer = None` line")
        solution = meta["solution"]
        if not isinstance(solution, list) or not all(isinstance(s, str) for s in solution):
            raise ValueError(f"{where}: the solution must be a list of lines")
        found.append(Exercise(lesson, meta["exercise"], int(meta["points"]),
                              "\n".join(solution), answer_index, check_index))
    if [e.number for e in found] != list(range(1, len(found) + 1)):
        raise ValueError(f"lesson {lesson}: exercises numbered {[e.number for e in found]}")
    return found


def answer_line(source: str) -> str:
    """The `answer = None  # ...` line of an answer cell."""
    return ANSWER_LINE.search(source).group(0)


def replace_answer_line(source: str, replacement: str) -> str:
    """The answer cell with its `answer = None` line replaced (the starter code kept)."""
    return ANSWER_LINE.sub(lambda _: replacement, source, count=1)


def solved(source: str, exercise: Exercise) -> str:
    """The answer cell as the teacher edition shows it: the worked solution in place."""
    return replace_answer_line(source, exercise.solution)
