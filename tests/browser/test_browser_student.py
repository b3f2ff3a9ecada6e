"""The student edition (build/classroom/student, `make classroom`), used as a student uses it.

Lesson 01 opens in JupyterLab in a real browser; Run > Restart Kernel and Run All Cells
goes through to the end: every code cell runs, no cell shows an error except those
tagged `raises-exception`, and every check cell says "not answered yet". Then, in the
page, the student types exercise 1's worked solution (kept in notebooks/ with the
lesson) into its answer cell and runs it and the check cell, which now says "correct".
Screenshots: test-artifacts/screenshots/student-*.png.
"""
import nbformat

from .conftest import CLASSROOM, unavailable
from .stored_outputs import LESSONS, RAISES, squash
from .test_browser_lab import CELLS_IN_DOM, PROMPT_RAN, _open, _restart_and_run_all, _wait_until_done

LESSON = LESSONS[0]
EXERCISE = 1
CHECK_CELL = f"exercise_{EXERCISE}(answer"


def _exercise(source, student):
    """(answer cell index, check cell index, solution lines) of EXERCISE, in the student edition."""
    for cell in source.cells:
        meta = cell.metadata.get("classroom", {})
        if meta.get("exercise") == EXERCISE and "solution" in meta:
            solution = meta["solution"]
            solution = solution if isinstance(solution, list) else solution.splitlines()
            ids = [c.get("id") for c in student.cells]
            answer = ids.index(cell.get("id"))
            assert CHECK_CELL in student.cells[answer + 1].source
            return answer, answer + 1, solution
    raise AssertionError(f"{LESSON.name} keeps no solution of exercise {EXERCISE} "
                         "(metadata classroom.solution of its answer cell)")


def _output_text(page, index):
    return page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(index).locator(
        ".jp-OutputArea-output").all_inner_texts()


def test_student_runs_all_then_answers(jupyterlab, page, screenshots):
    path = CLASSROOM / "student" / LESSON.name
    if not path.is_file():
        unavailable(f"no student edition of {LESSON.name} in build/classroom/student: "
                    "run `make classroom` first")
    student = nbformat.read(path, as_version=4)
    answer, check, solution = _exercise(nbformat.read(LESSON, as_version=4), student)
    name, problems = LESSON.name, []
    try:
        _open(page, jupyterlab, name, len(student.cells), folder="student")
        _restart_and_run_all(page)
        _wait_until_done(page, jupyterlab, name, folder="student")
        cells = page.evaluate(CELLS_IN_DOM)
        page.screenshot(path=screenshots / f"student-{LESSON.stem}-run-all.png")

        for index, (stored, shown) in enumerate(zip(student.cells, cells)):
            if stored.cell_type != "code" or not stored.source.strip():
                continue
            if not PROMPT_RAN.search(shown["prompt"]):
                problems.append(f"cell {index} did not run")
            errors = [o for o in shown["outputs"] if o["mime"] == "application/vnd.jupyter.stderr"]
            if errors and RAISES not in stored.metadata.get("tags", []):
                problems.append(f"cell {index}: error {squash(errors[0]['text'])[:200]!r}")
            if "(answer" in stored.source and "exercise_" in stored.source:
                verdict = " ".join(o["text"] for o in shown["outputs"])
                if "not answered yet" not in verdict:
                    problems.append(f"check cell {index} says {squash(verdict)[:200]!r}, "
                                    "not 'not answered yet'")
        assert not problems, f"{name}, student edition, Run All:\n" + "\n".join(problems)

        # The student answers exercise 1 in the page: types the solution over the stub.
        editor = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(answer).locator(".cm-content")
        editor.scroll_into_view_if_needed()
        editor.click()
        page.keyboard.press("Control+a")
        page.keyboard.press("Delete")
        for number, line in enumerate(solution):
            if number:
                page.keyboard.press("Enter")
                page.keyboard.press("Shift+Home")  # drop the editor's automatic indent
                page.keyboard.press("Delete")
            page.keyboard.type(line)
        typed = editor.inner_text()
        assert squash(typed) == squash("\n".join(solution)), f"typed {typed!r}"
        page.keyboard.press("Shift+Enter")  # runs the answer cell, selects the check cell
        page.keyboard.press("Shift+Enter")  # runs the check cell
        page.wait_for_function(
            """([index]) => {
                const cell = document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')[index];
                return cell && /✓ correct/.test(cell.querySelector('.jp-OutputArea') ?
                    cell.querySelector('.jp-OutputArea').innerText : '');
            }""", arg=[check], timeout=60_000)
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(answer).scroll_into_view_if_needed()
        page.screenshot(path=screenshots / f"student-{LESSON.stem}-answered.png")
        verdict = squash(" ".join(_output_text(page, check)))
        assert verdict.startswith("✓ correct"), verdict
    except Exception:
        try:
            page.screenshot(path=screenshots / f"student-{LESSON.stem}-failed.png")
        except Exception:
            pass
        raise
    finally:
        jupyterlab.shutdown_kernels()
