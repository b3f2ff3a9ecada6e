"""nbgrader for real, on the course folder that `make classroom` writes (build/classroom/nbgrader),
with the nbgrader of .venv-nbgrader (`make nbgrader-env`, requirements-nbgrader.txt).

In a copy of the course folder: `nbgrader generate_assignment` for two lessons, five
students' submissions of each (correct: the worked solutions filled in; empty: as
released; wrong: one exercise answered wrong, the others right; and two cheats: the wrong
answer, then a line that makes the notebook's checker say yes), `nbgrader autograde`,
then the scores from `nbgrader export`: full points, zero, and the points of the right
exercises only (the cheats score nothing for the exercise they cheat on).

Two lessons, not seven, to keep the run short (autograde runs each submission, about 15 s
for these two): 02 (answers that are sets, and a function to write) and 07 (functions to
fix, a check cell that passes the lesson's set-up in). The teacher edition shows every
lesson's worked solutions correct (tests/test_classroom.py).

Without the nbgrader venv or build/classroom these tests skip, except under CI, where
they fail.
"""
import csv
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from project import NOTEBOOKS, ROOT
from solutions import assert_no_solution

sys.path.insert(0, str(ROOT))
from tools.classroom.exercises import exercises, lesson_number  # noqa: E402
from tools.classroom.nbgrader_course import STUB  # noqa: E402

pytestmark = [pytest.mark.kernel, pytest.mark.build]

NBGRADER_VENV = ROOT / ".venv-nbgrader"
COURSE = ROOT / "build" / "classroom" / "nbgrader"

# lesson -> {exercise: a wrong answer, in place of the stub}; the other exercises right.
WRONG = {
    "02_retain_graph": {1: 'answer = {"A", "B"}'},
    "07_debugging_a_second_backward_error": {
        2: 'error_step, failing_op = 0, "norm"  # the right prediction\n'
           'answer = train_on_directions  # but not fixed'},
}
GRADED = [path for path in NOTEBOOKS if path.stem in WRONG]
# Two ways a cell could fool a check cell that trusted the notebook's names, each put after
# the wrong answer: the checker's function replaced, or its module's name rebound to a stub.
CHEATS = {
    "cheat_lambda": "{module}.exercise_{number} = lambda *a, **k: True",
    "cheat_stub": ("class _Yes:\n"
                   "    def __getattr__(self, name):\n"
                   "        return lambda *a, **k: True\n"
                   "{module} = _Yes()"),
}
# What nbgrader itself logs, for each graded cell of each submission: it stores the cell's
# checksum taken before the hidden test was cleared (its issue 1961; README.md says so).
NBGRADER_WARNING = re.compile(r"WARNING\] Attribute 'checksum' for cell \w+ has changed!")


def unavailable(reason):
    """Skip on a learner's machine; fail under CI, where a skip would hide a missing set-up."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (not skipped under CI)")
    pytest.skip(reason)


def pins(path):
    return dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", path.read_text(), re.MULTILINE))


def test_the_nbgrader_venv_pins_the_lessons_packages_as_requirements_txt():
    lessons, nbgrader = pins(ROOT / "requirements.txt"), pins(ROOT / "requirements-nbgrader.txt")
    assert "nbgrader" in nbgrader and "torch" in nbgrader
    assert {name: nbgrader[name] for name in lessons if name in nbgrader} == \
        {name: lessons[name] for name in nbgrader if name in lessons}


def test_nbgrader_stays_out_of_the_lessons_environment():
    """nbgrader and its JupyterLab extension are in .venv-nbgrader, never in the
    environment that runs the lessons, these tests and the browser tests."""
    assert importlib.util.find_spec("nbgrader") is None
    labextensions = os.path.join(sys.prefix, "share", "jupyter", "labextensions")
    assert not os.path.exists(os.path.join(labextensions, "@jupyter", "nbgrader"))


# --- the course, graded --------------------------------------------------------------

def nbgrader(course, *args):
    """Run an nbgrader command in the course folder, with the nbgrader venv first on the
    PATH (nbgrader runs `alembic` from it) and Jupyter folders of its own."""
    env = dict(os.environ, PATH=f"{NBGRADER_VENV / 'bin'}{os.pathsep}{os.environ['PATH']}",
               JUPYTER_CONFIG_DIR=str(course / ".jupyter" / "config"),
               JUPYTER_DATA_DIR=str(course / ".jupyter" / "data"),
               JUPYTER_RUNTIME_DIR=str(course / ".jupyter" / "runtime"),
               JUPYTER_PREFER_ENV_PATH="1")
    run = subprocess.run([str(NBGRADER_VENV / "bin" / "nbgrader"), *args], cwd=course, env=env,
                         capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, f"nbgrader {' '.join(args)}:\n{run.stdout[-3000:]}{run.stderr[-6000:]}"
    return run


def submission(released, lesson, answers):
    """The released notebook with the answer lines given in place of the stub."""
    notebook = nbformat.from_dict(json.loads(json.dumps(released)))
    for exercise in exercises(nbformat.read(lesson, as_version=4), lesson_number(lesson)):
        if exercise.number in answers:
            cell = notebook.cells[exercise.answer_cell]
            assert cell.source.count(STUB) == 1, cell.source
            cell.source = cell.source.replace(STUB, answers[exercise.number])
    return notebook


def checker_module(lesson, number):
    """The name the check cell calls the checker by: `lesson02` in `lesson02.exercise_1(...)`."""
    notebook = nbformat.read(lesson, as_version=4)
    exercise = next(e for e in exercises(notebook, lesson_number(lesson)) if e.number == number)
    return re.match(r"(\w+)\.exercise_", notebook.cells[exercise.check_cell].source)[1]


def submissions(lesson):
    """Student id -> answers, for each of the five kinds of submission."""
    found = exercises(nbformat.read(lesson, as_version=4), lesson_number(lesson))
    right = {exercise.number: exercise.solution for exercise in found}
    wrong = {**right, **WRONG[lesson.stem]}
    cheats = {student: {**wrong, **{
        number: answer + "\n" + cheat.format(module=checker_module(lesson, number), number=number)
        for number, answer in WRONG[lesson.stem].items()}} for student, cheat in CHEATS.items()}
    return {"correct": right, "empty": {}, "wrong": wrong, **cheats}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    if not (NBGRADER_VENV / "bin" / "nbgrader").is_file():
        unavailable("the nbgrader venv is missing: run `make nbgrader-env`")
    if not all((COURSE / "source" / lesson.stem / lesson.name).is_file() for lesson in GRADED):
        unavailable("build/classroom/nbgrader is missing: run `make classroom`")
    course = tmp_path_factory.mktemp("nbgrader") / "course"
    shutil.copytree(COURSE, course)
    for lesson in GRADED:
        nbgrader(course, "generate_assignment", lesson.stem)
        released = nbformat.read(course / "release" / lesson.stem / lesson.name, as_version=4)
        for student, answers in submissions(lesson).items():
            folder = course / "submitted" / student / lesson.stem
            folder.mkdir(parents=True)
            nbformat.write(submission(released, lesson, answers), folder / lesson.name)
        run = nbgrader(course, "autograde", lesson.stem)
        (course / f"autograde-{lesson.stem}.log").write_text(run.stdout + run.stderr)
    nbgrader(course, "export", "--to", str(course / "grades.csv"))
    return course


@pytest.fixture(scope="module")
def scores(course):
    """(lesson, student) -> (score, max_score), as nbgrader exported them."""
    with open(course / "grades.csv", newline="") as grades:
        return {(row["assignment"], row["student_id"]): (float(row["score"]),
                                                         float(row["max_score"]))
                for row in csv.DictReader(grades)}


def points(lesson):
    return {e.number: e.points
            for e in exercises(nbformat.read(lesson, as_version=4), lesson_number(lesson))}


@pytest.mark.parametrize("lesson", GRADED, ids=[lesson.stem for lesson in GRADED])
def test_the_released_notebook_holds_no_solution(course, lesson):
    released = course / "release" / lesson.stem / lesson.name
    assert_no_solution(json.loads(released.read_text()), lesson)
    notebook = nbformat.read(released, as_version=4)
    for exercise in exercises(nbformat.read(lesson, as_version=4), lesson_number(lesson)):
        assert notebook.cells[exercise.answer_cell].source.endswith(STUB)


@pytest.mark.parametrize("lesson", GRADED, ids=[lesson.stem for lesson in GRADED])
def test_autograde_scores_the_three_submissions(scores, lesson):
    total = sum(points(lesson).values())
    wrong = sum(points(lesson)[number] for number in WRONG[lesson.stem])
    assert scores[lesson.stem, "correct"] == (total, total)
    assert scores[lesson.stem, "empty"] == (0, total)
    assert scores[lesson.stem, "wrong"] == (total - wrong, total)
    assert 0 < total - wrong < total


@pytest.mark.parametrize("lesson", GRADED, ids=[lesson.stem for lesson in GRADED])
@pytest.mark.parametrize("student", CHEATS)
def test_a_cheat_scores_nothing_for_its_exercise(scores, lesson, student):
    """The wrong answer, then the checker made to say yes: the hidden test grades with a
    fresh copy of the checker, so the exercise scores 0, the right ones their points."""
    total = sum(points(lesson).values())
    wrong = sum(points(lesson)[number] for number in WRONG[lesson.stem])
    assert scores[lesson.stem, student] == (total - wrong, total)


def check_cell_error(course, student, lesson, number):
    """The error the check cell of exercise `number` showed, in the autograded notebook."""
    notebook = nbformat.read(course / "autograded" / student / lesson.stem / lesson.name,
                             as_version=4)
    exercise = next(e for e in exercises(nbformat.read(lesson, as_version=4),
                                         lesson_number(lesson)) if e.number == number)
    errors = [o for o in notebook.cells[exercise.check_cell].outputs if o.output_type == "error"]
    return errors[0] if errors else None


@pytest.mark.parametrize("lesson", GRADED, ids=[lesson.stem for lesson in GRADED])
def test_a_wrong_answer_gets_the_checkers_hint_as_feedback(course, lesson):
    """The hidden test fails with the checker's verdict, hint included, not a bare
    "not correct yet"; the cheats get the same hint as the wrong answer they hide."""
    for number in WRONG[lesson.stem]:
        error = check_cell_error(course, "wrong", lesson, number)
        assert error is not None and error.ename == "AssertionError"
        assert error.evalue.startswith("✗ not yet: ") and len(error.evalue) > 40, error.evalue
        for student in CHEATS:
            assert check_cell_error(course, student, lesson, number).evalue == error.evalue


@pytest.mark.parametrize("lesson", GRADED, ids=[lesson.stem for lesson in GRADED])
def test_autograde_warns_only_of_what_nbgrader_itself_causes(course, lesson):
    """No "cannot be converted" warning (nbgrader reads a test cell's value as partial
    credit; the verdict is displayed, not returned); what is left is nbgrader's own."""
    log = (course / f"autograde-{lesson.stem}.log").read_text()
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert "cannot be converted" not in log
    assert all(NBGRADER_WARNING.search(line) for line in warnings), warnings
