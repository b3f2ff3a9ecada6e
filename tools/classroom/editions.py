"""The student and teacher editions of the lessons (`make classroom`).

- student/NN_name.ipynb: the lesson as a self-learner gets it (exercises unanswered,
  `answer = None`), with its outputs cleared and the classroom metadata (the worked
  solutions) removed: "Run All" in a fresh kernel goes to the end, every check cell says
  "not answered yet".
- teacher/NN_name.ipynb: each answer cell's `answer = None` line replaced by its worked
  solution, then run top to bottom in a fresh kernel (nbclient, from the teacher folder;
  the lessons side by side, one kernel per core),
  so that it is stored with the outputs of "Restart & Run All" and each check cell shows
  "✓ correct"; building it fails otherwise. The answer cells keep their `classroom`
  metadata, so that a tool (the slides) can tell them apart.

Everything else in a cell (tags such as `raises-exception`, ids) is kept as it is.
"""
from __future__ import annotations

import copy
import multiprocessing
import os
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat

from tools.run_notebooks import execute  # the teacher edition runs as the lessons do

from .exercises import exercises, lesson_number, solved

CORRECT = ("✓ correct", "✓ 정답")  # how a verdict starts, in English and in Korean
UNANSWERED = ("not answered yet", "아직 답하지 않음")
# A lesson folder's matplotlibrc (notebooks/ko's gives the plots a Korean font) goes with
# its editions: Jupyter starts their kernels in their folder, where matplotlib reads it.
FOLDER_SETTINGS = ("matplotlibrc",)


def copy_folder_settings(lessons: list[Path], folder: Path) -> None:
    for name in FOLDER_SETTINGS:
        source = lessons[0].parent / name if lessons else None
        if source is not None and source.is_file():
            shutil.copy2(source, folder / name)


def student_edition(notebook):
    """The lesson without outputs and without its solutions (which are only in metadata)."""
    student = copy.deepcopy(notebook)
    for cell in student.cells:
        cell.metadata.pop("classroom", None)
        cell.metadata.pop("nbgrader", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return student


def teacher_edition(notebook, lesson: str):
    """The lesson with the worked solutions in place, not yet executed."""
    teacher = student_edition(notebook)
    for exercise in exercises(notebook, lesson):
        cell = teacher.cells[exercise.answer_cell]
        cell.source = solved(cell.source, exercise)
        cell.metadata["classroom"] = copy.deepcopy(
            notebook.cells[exercise.answer_cell].metadata["classroom"])
    return teacher


def output_text(cell) -> str:
    """What a code cell showed, as text."""
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts.append(output.get("data", {}).get("text/plain", ""))
        elif output.output_type == "error":
            parts.append(f"{output.ename}: {output.evalue}")
    return "".join(parts)


def verdicts(executed, lesson_exercises) -> dict[int, str]:
    """Exercise number -> what its check cell showed, in an executed edition."""
    return {exercise.number: output_text(executed.cells[exercise.check_cell])
            for exercise in lesson_exercises}


def build_student(lessons: list[Path], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    copy_folder_settings(lessons, folder)
    written = []
    for path in lessons:
        notebook = nbformat.read(path, as_version=4)
        exercises(notebook, lesson_number(path))  # fail here on a malformed exercise
        nbformat.write(student_edition(notebook), folder / path.name)
        written.append(folder / path.name)
    return written


_START_LOCK = None  # in each worker: the lock its kernels start under (one at a time)


def _share_start_lock(lock):
    global _START_LOCK
    _START_LOCK = lock


def _teacher_notebook(path: Path, folder: Path):
    """Run one lesson's teacher edition; fail unless every check cell says correct."""
    lesson = lesson_number(path)
    source = nbformat.read(path, as_version=4)
    notebook = execute(teacher_edition(source, lesson), folder, start_lock=_START_LOCK)
    wrong = {k: text for k, text in verdicts(notebook, exercises(source, lesson)).items()
             if not text.startswith(CORRECT)}
    if wrong:
        raise RuntimeError(f"{path.name}: a worked solution is not correct: {wrong}")
    nbformat.write(notebook, folder / path.name)
    return folder / path.name


def build_teacher(lessons: list[Path], folder: Path) -> list[Path]:
    """The lessons' teacher editions, run side by side, one kernel per core."""
    folder.mkdir(parents=True, exist_ok=True)
    copy_folder_settings(lessons, folder)
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1, initializer=_share_start_lock,
                             initargs=(multiprocessing.Lock(),)) as pool:
        runs = [pool.submit(_teacher_notebook, path, folder) for path in lessons]
        for path, run in zip(lessons, runs):
            run.result()  # raises what the run raised
            print(f"teacher edition: ran {path.relative_to(path.parents[1])}", flush=True)
    return [folder / path.name for path in lessons]
