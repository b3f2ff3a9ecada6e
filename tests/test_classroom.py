"""The classroom editions that `make classroom` writes to build/classroom (tools/classroom):

- student/: the lessons' cells as they are, outputs cleared, and no line of any worked
  solution anywhere in the file (metadata included). That "Run All" goes to the end in
  JupyterLab, every check cell "not answered yet", is tests/browser/test_browser_lab.py's;
- teacher/: every worked solution in place, every check cell "✓ correct", and the stored
  outputs exactly what a fresh run gives (`make classroom` ran it; outside the exercises
  they are the lesson's stored outputs, as nbval compares them);
- nbgrader/: a solution region and a hidden test per exercise, with its points
  (tests/test_classroom_nbgrader.py runs nbgrader itself on it);
- ko/: the Korean edition's student/ and teacher/, held to the same rules (its verdicts
  in Korean: "아직 답하지 않음", "✓ 정답").

Without build/classroom (`make classroom`) these tests skip, except under CI, where they fail.
"""
import copy
import functools
import html
import json
import os
import re
import sys

import nbformat
import pytest

from project import KOREAN_NOTEBOOKS, NOTEBOOKS, ROOT
from outputs import checked_by_nbval, compared
from solutions import assert_no_solution, every_string, secret_lines, solution_lines_in

sys.path.insert(0, str(ROOT))
from tools.classroom.editions import CORRECT, output_text  # noqa: E402
from tools.classroom.exercises import exercises, lesson_number, solved  # noqa: E402
from tools.classroom.nbgrader_course import STUB, hidden_test  # noqa: E402

pytestmark = pytest.mark.build

CLASSROOM = ROOT / "build" / "classroom"
LESSON_IDS = [path.stem for path in NOTEBOOKS]
# Both editions' lessons, for the student and teacher editions (nbgrader's is English only).
BOTH = NOTEBOOKS + KOREAN_NOTEBOOKS
BOTH_IDS = LESSON_IDS + [f"ko-{path.stem}" for path in KOREAN_NOTEBOOKS]


def is_korean(lesson):
    return lesson.parent.name == "ko"


def classroom(lesson):
    """build/classroom, or build/classroom/ko for a Korean lesson."""
    return CLASSROOM / "ko" if is_korean(lesson) else CLASSROOM


def said(texts, lesson):
    """The English or the Korean of a (English, Korean) pair, as the lesson speaks."""
    return texts[1] if is_korean(lesson) else texts[0]


def unavailable(reason):
    """Skip on a learner's machine; fail under CI, where a skip would hide a missing set-up."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (not skipped under CI)")
    pytest.skip(reason)


def edition(name, lesson):
    path = classroom(lesson) / name / lesson.name
    if not path.is_file():
        unavailable(f"{path.relative_to(ROOT)} is missing: run `make classroom`")
    return nbformat.read(path, as_version=4)


def lesson_and_exercises(lesson):
    notebook = nbformat.read(lesson, as_version=4)
    return notebook, exercises(notebook, lesson_number(lesson))


def tags(cell):
    return cell.metadata.get("tags", [])


def test_the_solution_check_would_see_a_leak():
    """A notebook that carried a solution in its metadata is caught (the test can fail)."""
    lesson = NOTEBOOKS[0]
    leaky = json.loads(lesson.read_text())
    assert solution_lines_in(leaky, secret_lines(lesson))  # the self-learner's metadata has them


# --- student/ ------------------------------------------------------------------------

@pytest.mark.parametrize("lesson", BOTH, ids=BOTH_IDS)
def test_student_edition_has_no_solution(lesson):
    edition(lesson=lesson, name="student")
    assert_no_solution(json.loads((classroom(lesson) / "student" / lesson.name).read_text()), lesson)


@pytest.mark.parametrize("lesson", BOTH, ids=BOTH_IDS)
def test_student_edition_is_the_lesson_without_outputs(lesson):
    student, (notebook, _) = edition("student", lesson), lesson_and_exercises(lesson)
    assert [(c.cell_type, c.source, tags(c)) for c in student.cells] == \
        [(c.cell_type, c.source, tags(c)) for c in notebook.cells]
    assert all(not c.outputs and c.execution_count is None
               for c in student.cells if c.cell_type == "code")


# --- teacher/ ------------------------------------------------------------------------

@pytest.mark.parametrize("lesson", BOTH, ids=BOTH_IDS)
def test_teacher_edition_shows_every_solution_correct(lesson):
    teacher, (notebook, found) = edition("teacher", lesson), lesson_and_exercises(lesson)
    answer_cells = {exercise.answer_cell for exercise in found}
    for index, (ours, theirs) in enumerate(zip(teacher.cells, notebook.cells, strict=True)):
        if index not in answer_cells:
            assert ours.source == theirs.source
    for exercise in found:
        # the lesson's own answer cell, its worked solution in place
        assert teacher.cells[exercise.answer_cell].source == \
            solved(notebook.cells[exercise.answer_cell].source, exercise)
        shown = output_text(teacher.cells[exercise.check_cell])
        assert shown.startswith(said(CORRECT, lesson)), f"exercise {exercise.number}: {shown}"


@pytest.mark.parametrize("lesson", BOTH, ids=BOTH_IDS)
def test_teacher_edition_shows_what_a_fresh_run_gives(lesson):
    """`make classroom` ran the teacher edition top to bottom in a fresh kernel. Outside its
    exercises, what it stores must be what the lesson stores, compared as strict nbval
    compares (tests/outputs.py): nbval holds the lesson's stored outputs to a fresh run of
    its own, so a difference here is a cell whose output changes from run to run, or an
    answer that changes what the cells after it show. The exercises' cells are the test
    above's."""
    teacher, (notebook, found) = edition("teacher", lesson), lesson_and_exercises(lesson)
    exercise_cells = {cell for e in found for cell in (e.answer_cell, e.check_cell)}
    differ = [index for index, (ours, theirs) in enumerate(zip(teacher.cells, notebook.cells))
              if index not in exercise_cells and checked_by_nbval(theirs)
              and compared(ours) != compared(theirs)]
    assert not differ, (f"cells {differ}: the teacher edition shows "
                        f"{compared(teacher.cells[differ[0]])}, the lesson stores "
                        f"{compared(notebook.cells[differ[0]])}")


def test_the_teacher_comparison_would_see_a_change():
    """A cell that printed one character more, or drew another graph, is caught."""
    notebook, _ = lesson_and_exercises(NOTEBOOKS[0])
    cell = next(c for c in notebook.cells if c.cell_type == "code" and c.outputs
                and any(o.output_type == "stream" for o in c.outputs))
    printed = copy.deepcopy(cell)
    stream = next(o for o in printed.outputs if o.output_type == "stream")
    stream.text += "."
    assert compared(printed) != compared(cell)
    graph = next(c for c in notebook.cells if c.cell_type == "code" and any(
        "image/svg+xml" in o.get("data", {}) for o in c.outputs))
    redrawn = copy.deepcopy(graph)
    for output in redrawn.outputs:
        if "text/plain" in output.get("data", {}):
            output.data["text/plain"] += " "
    assert compared(redrawn) != compared(graph)


# --- nbgrader/ -----------------------------------------------------------------------

@pytest.mark.parametrize("lesson", NOTEBOOKS, ids=LESSON_IDS)
def test_nbgrader_source_marks_each_exercise(lesson):
    path = CLASSROOM / "nbgrader" / "source" / lesson.stem / lesson.name
    if not path.is_file():
        unavailable(f"{path.relative_to(ROOT)} is missing: run `make classroom`")
    source = nbformat.read(path, as_version=4)
    notebook, found = lesson_and_exercises(lesson)
    assert len(source.cells) == len(notebook.cells)
    graded = {}
    for exercise in found:
        answer, check = source.cells[exercise.answer_cell], source.cells[exercise.check_cell]
        assert f"### BEGIN SOLUTION\n{exercise.solution}\n### END SOLUTION" in answer.source
        assert answer.metadata["nbgrader"]["solution"] is True
        assert check.source == hidden_test(
            notebook.cells[exercise.check_cell].source.strip(), lesson_number(lesson))
        meta = check.metadata["nbgrader"]
        assert meta["grade"] and meta["locked"] and not meta["solution"]
        graded[meta["grade_id"]] = meta["points"]
    assert graded == {exercise.grade_id: exercise.points for exercise in found}
    assert not any("classroom" in cell.metadata for cell in source.cells)


def test_nbgrader_config_gives_the_lessons_stub():
    config = CLASSROOM / "nbgrader" / "nbgrader_config.py"
    if not config.is_file():
        unavailable("build/classroom/nbgrader is missing: run `make classroom`")
    assert f'c.ClearSolutions.code_stub = {{"python": {STUB!r}}}' in config.read_text()
    assert STUB.startswith("answer = None  # ")  # the line the lessons' answer cells have


# --- what the site shows ---------------------------------------------------------------

def page_text(path):
    """An HTML page's text as a reader sees it: tags dropped (highlighted code is split
    into many spans), entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(errors="replace")))


def solution_lines_on(path, lesson):
    """The lines of the lesson's worked solutions that the page shows, less those another
    lesson shows in its own cells (lesson 04 teaches loss2.backward(retain_graph=True) in
    the open; that line on its page is no leak of lesson 02's answer)."""
    text = {line.strip() for line in page_text(path).splitlines()} - lines_the_lessons_show()
    return {number: lines & text for number, lines in secret_lines(lesson).items()
            if lines & text}


@functools.cache
def lines_the_lessons_show():
    return {line.strip() for lesson in BOTH
            for cell in nbformat.read(lesson, as_version=4).cells
            for line in cell.source.splitlines()}


@pytest.mark.parametrize("lesson", BOTH, ids=BOTH_IDS)
def test_the_site_shows_no_solution(lesson):
    """The site is the self-learner's edition: no worked solution on any of its pages
    (lesson pages, the lesson's slides). The teacher's deck, read the same way, shows them."""
    site = ROOT / "build" / "site" / "html"
    page = site / lesson.relative_to(ROOT).with_suffix(".html")
    if is_korean(lesson):
        page = site / "ko" / lesson.relative_to(ROOT).with_suffix(".html")
    if not page.is_file():
        unavailable(f"{page.relative_to(ROOT)} is missing: run `make site`")
    teacher_deck = classroom(lesson) / "slides" / f"{lesson.stem}.html"
    if teacher_deck.is_file():
        assert solution_lines_on(teacher_deck, lesson)  # the reading can see code
    leaks = {str(page.relative_to(site)): found for page in sorted(site.rglob("*.html"))
             if (found := solution_lines_on(page, lesson))}
    assert not leaks, leaks


# Every file the site serves, whatever its kind (pages, search index, notebooks copied by
# myst-nb, decks, images): none may hold a worked solution. A file is read as it is, as
# its text once tags are dropped (an HTML page), and as its strings (a JSON file, where a
# solution line's quotes would be escaped).
SITE = ROOT / "build" / "site" / "html"
SOLUTION_KEY = re.compile(r'"classroom"\s*:\s*\{\s*"exercise"\s*:\s*\d')  # the lessons' metadata
LONG_ENOUGH = 16  # shorter solution lines ("state = None") could be anyone's code
# The authors' guide shows the metadata's shape, with a made-up solution.
SHOWS_THE_KEY = {"CONTRIBUTING.html"}


def readings(path):
    """The texts a file gives, as a program or a reader could take them from it."""
    raw = path.read_bytes().decode("utf-8", errors="replace")
    texts = [raw]
    if path.suffix in (".html", ".htm", ".svg", ".xml"):
        texts.append(html.unescape(re.sub(r"<[^>]+>", "", raw)))
    try:
        texts.append("\n".join(every_string(json.loads(raw))))
    except ValueError:
        pass
    return texts


def solutions_in(path, secrets):
    """(lesson, exercise) of each worked solution that the file holds, and whether it holds
    the solutions' metadata key."""
    texts = readings(path)
    found = {key for key, lines in secrets.items()
             if any(line in text for line in lines for text in texts)}
    return found, any(SOLUTION_KEY.search(text) for text in texts)


def site_secrets():
    """(lesson, exercise) -> its solution's lines that are long enough and that no lesson
    shows, even inside a longer line (a hint such as "when it is ready: answer = one_pass")."""
    shown = "\n".join(cell.source for lesson in BOTH
                      for cell in nbformat.read(lesson, as_version=4).cells)
    return {(lesson.relative_to(ROOT).as_posix(), number):
            {line for line in lines if len(line) >= LONG_ENOUGH and line not in shown}
            for lesson in BOTH for number, lines in secret_lines(lesson).items()}


def test_the_site_search_would_see_a_solution(tmp_path):
    """A lesson as stored (its metadata holds the solutions) is caught by both readings."""
    lesson = NOTEBOOKS[0]
    copy_ = tmp_path / lesson.name
    copy_.write_text(lesson.read_text())
    found, key = solutions_in(copy_, site_secrets())
    assert key and {number for path, number in found if path == "notebooks/" + lesson.name} \
        == set(secret_lines(lesson))
    assert all(site_secrets().values()), "an exercise with no solution line long enough"


def test_no_file_of_the_site_holds_a_worked_solution():
    """Solutions only where a teacher looks (build/classroom): nothing under build/site/html,
    the folder a web server serves, holds a line of one, or their metadata."""
    if not (SITE / "index.html").is_file():
        unavailable("build/site/html is missing: run `make site`")
    secrets = site_secrets()
    leaks = {}
    for path in sorted(p for p in SITE.rglob("*") if p.is_file()):
        found, key = solutions_in(path, secrets)
        key = key and str(path.relative_to(SITE)) not in SHOWS_THE_KEY
        if found or key:
            leaks[str(path.relative_to(SITE))] = sorted(found) + (["metadata"] if key else [])
    assert not leaks, leaks


# The exam items' answers (docs/exam.md, docs/exam.ko.md) are for teachers: built into
# build/classroom/guide/exam.html, never into the site.
EXAMS = {"en": (ROOT / "docs" / "exam.md", CLASSROOM / "guide"),
         "ko": (ROOT / "docs" / "exam.ko.md", CLASSROOM / "ko" / "guide")}


def exam_answers(path):
    """Each answer's paragraph, as a reader sees it (no markdown marks)."""
    answers = re.findall(r"^\*\*(?:Answer|답)\.\*\*\s+(.+?)\n\n", path.read_text(encoding="utf-8"), re.M | re.S)
    return {squashed(answer.replace("`", "").replace("**", "")) for answer in answers}


def squashed(text):
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("language", sorted(EXAMS))
def test_exam_items_are_in_the_classroom_guide(language):
    source, guide = EXAMS[language]
    if not (guide / "exam.html").is_file():
        unavailable(f"{guide.relative_to(ROOT)}/exam.html is missing: run `make classroom`")
    page = squashed(html.unescape(re.sub(r"<[^>]+>", "", (guide / "exam.html").read_text(encoding="utf-8"))))
    answers = exam_answers(source)
    assert len(answers) == 21 and all(answer in page for answer in answers)


def test_no_file_of_the_site_holds_an_exam_answer():
    if not (SITE / "index.html").is_file():
        unavailable("build/site/html is missing: run `make site`")
    answers = exam_answers(EXAMS["en"][0]) | exam_answers(EXAMS["ko"][0])
    leaks = []
    for path in sorted(p for p in SITE.rglob("*") if p.is_file() and p.suffix in (".html", ".js", ".json", ".txt", ".md", ".ipynb")):
        texts = [squashed(text) for text in readings(path)]
        if any(answer in text for answer in answers for text in texts):
            leaks.append(str(path.relative_to(SITE)))
    assert not leaks, leaks
