"""Each lesson, run as a learner runs it: its student edition (the lesson without outputs
or solutions, build/classroom/student, `make classroom`) opened in JupyterLab in a real
browser, then Run > Restart Kernel and Run All Cells…, confirmed in the dialog.

Then, in the page itself, against the lesson as stored in notebooks/ (the same cells;
tests/test_classroom.py checks that): every cell ran; every graph (and plot) that the
stored lesson has is shown as an image that loaded; every cell tagged `raises-exception`
shows its stored error, name and message; no other cell shows an error (or anything on
stderr that the stored lesson does not have); every exercise's check cell says "not
answered yet". The edition has no outputs, so everything checked was produced by this
run. In lesson 01, the student then types exercise 1's worked solution into its answer
cell and runs it and the check cell, which now says "✓ correct".
"""
import re
import sys
import time

from .conftest import fonts_drawing_korean, is_korean_font
from .replay_steps import has_a_replay, steps_in_place
from .stored_outputs import LESSONS, ROOT, lesson_id, read_lesson, squash

sys.path.insert(0, str(ROOT))
from tools.classroom.editions import CORRECT, UNANSWERED  # noqa: E402
from tools.classroom.exercises import exercises, lesson_number  # noqa: E402

RUN_TIMEOUT = 600  # seconds for one lesson to run all its cells
PROMPT_RAN = re.compile(r"\[\d+\]")

CELLS_IN_DOM = """() => [...document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')].map(cell => ({
    code: cell.classList.contains('jp-CodeCell'),
    prompt: (cell.querySelector('.jp-InputArea-prompt') || {}).textContent || '',
    outputs: [...cell.querySelectorAll('.jp-OutputArea-output')].map(output => ({
        mime: output.getAttribute('data-mime-type') || '',
        text: output.innerText,
        images: [...output.querySelectorAll('img, svg')].map(image => image.tagName === 'IMG'
            ? image.complete && image.naturalWidth > 0 && image.getBoundingClientRect().width > 0
            : image.getBoundingClientRect().width > 0),
    })),
}))"""

IMAGES_SETTLED = """() => [...document.querySelectorAll('.jp-OutputArea-output img')]
    .every(image => image.complete)"""


def _open(page, jupyterlab, name, cell_count, folder):
    page.goto(jupyterlab.lab_url(name, folder))
    page.wait_for_function(
        "n => document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell').length === n",
        arg=cell_count, timeout=120_000)
    deadline = time.monotonic() + 120
    while jupyterlab.kernel_state(name, folder) != "idle":
        assert time.monotonic() < deadline, f"the kernel of {name} did not start:\n{jupyterlab.log_tail()}"
        time.sleep(0.5)


def _restart_and_run_all(page):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text="Restart Kernel and Run All Cells").click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for()
    assert "Restart Kernel?" in dialog.inner_text()
    dialog.locator("button.jp-mod-accept", has_text="Restart").click()
    dialog.wait_for(state="detached")


def _wait_until_done(page, jupyterlab, name, folder):
    """Done when no cell is running ([*]) and the kernel is idle, for 2 s running: Run All
    goes cell by cell, so between two cells there is a moment when neither holds."""
    deadline = time.monotonic() + RUN_TIMEOUT
    quiet_since = None
    while time.monotonic() < deadline:
        prompts = page.eval_on_selector_all(
            ".jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt", "ps => ps.map(p => p.textContent)")
        ran = sum(bool(PROMPT_RAN.search(p)) for p in prompts)
        quiet = (ran > 0 and not any("*" in p for p in prompts)
                 and jupyterlab.kernel_state(name, folder) == "idle")
        if not quiet:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = (time.monotonic(), ran)
        elif quiet_since[1] != ran:
            quiet_since = (time.monotonic(), ran)
        elif time.monotonic() - quiet_since[0] >= 2:
            return
        time.sleep(0.25)
    raise AssertionError(f"{name}: Run All did not finish within {RUN_TIMEOUT} s")


def _problems(stored_cells, dom_cells, check_cells, unanswered):
    problems, not_run = [], []
    if len(dom_cells) != len(stored_cells):
        return [f"JupyterLab shows {len(dom_cells)} cells, the notebook has {len(stored_cells)}"]
    for stored, shown in zip(stored_cells, dom_cells):
        if not stored.code:
            continue
        where = f"cell {stored.index}"
        if stored.has_source and not PROMPT_RAN.search(shown["prompt"]):
            not_run.append(stored.index)
            continue
        by_mime = {}
        for output in shown["outputs"]:
            by_mime.setdefault(output["mime"], []).append(output)
        for mime, kind, expected in (("image/svg+xml", "graph", stored.svg), ("image/png", "plot", stored.png)):
            outputs = by_mime.get(mime, [])
            if len(outputs) != expected:
                problems.append(f"{where}: {len(outputs)} {kind}(s) shown, {expected} stored")
            for output in outputs:
                if not output["images"] or not all(output["images"]):
                    problems.append(f"{where}: a {kind} output is not a rendered image")
        errors = list(by_mime.get("application/vnd.jupyter.stderr", []))
        if stored.expects_error:
            for ename, evalue in stored.errors:
                wanted = squash(f"{ename}: {evalue}")
                match = next((e for e in errors if wanted in squash(e["text"])), None)
                if match is None:
                    shown_text = " | ".join(squash(e["text"])[:300] for e in errors) or "no error"
                    problems.append(f"{where} (raises-exception): expected {wanted[:200]!r}, shown: {shown_text}")
                    match = errors[0] if errors else None  # reported here, not again below
                if match is not None:
                    errors.remove(match)
        # What is left is an error, or stderr, that the stored lesson does not have.
        # (JupyterLab renders both with the same stderr mime type.)
        if len(errors) > stored.stderr:
            for error in errors:
                problems.append(f"{where}: unexpected error output: {squash(error['text'])[:300]!r}")
        if stored.index in check_cells:
            verdict = squash(" ".join(output["text"] for output in shown["outputs"]))
            if unanswered not in verdict:
                problems.append(f"{where}: the check cell says {verdict[:200]!r}, not {unanswered!r}")
    if not_run:
        problems.append(f"Run All stopped: {len(not_run)} code cells did not run, from cell {not_run[0]} on")
    return problems


def _screenshot(page, path, selector=None):
    if selector:
        target = page.locator(selector).first
        if target.count():
            target.scroll_into_view_if_needed()
    page.screenshot(path=path)


def _type_answer(page, answer, check, solution, correct):
    """Type the solution over the answer cell's stub, as a student would, run the answer
    cell and the check cell, and return the check cell's verdict."""
    cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    editor = cells.nth(answer).locator(".cm-content")
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
        """([index, correct]) => {
            const area = document.querySelectorAll('.jp-NotebookPanel .jp-Notebook .jp-Cell')[index]
                .querySelector('.jp-OutputArea');
            return area && area.innerText.includes(correct);
        }""", arg=[check, correct], timeout=60_000)
    cells.nth(answer).scroll_into_view_if_needed()
    return squash(" ".join(cells.nth(check).locator(".jp-OutputArea-output").all_inner_texts()))


def test_lesson_runs_in_jupyterlab(lesson, jupyterlab, page, screenshots):
    notebook, stored_cells = read_lesson(lesson)
    korean = lesson.parent.name == "ko"
    found = exercises(notebook, lesson_number(lesson))
    name, shot = lesson.name, lesson_id(lesson)
    folder = "ko/student" if korean else "student"
    korean_fonts, verdict = None, None
    try:
        _open(page, jupyterlab, name, len(stored_cells), folder)
        _restart_and_run_all(page)
        _wait_until_done(page, jupyterlab, name, folder)
        page.wait_for_function(IMAGES_SETTLED)
        dom_cells = page.evaluate(CELLS_IN_DOM)
        if korean:  # the Korean edition: its text drawn in a Korean font
            korean_fonts = fonts_drawing_korean(page, ".jp-Notebook")
            _screenshot(page, screenshots / f"lab-{shot}-top.png", ".jp-Notebook .jp-Cell")
        # Pictures for a person to look at: the first graph, and the first expected error.
        _screenshot(page, screenshots / f"lab-{shot}.png",
                    '.jp-OutputArea-output[data-mime-type="image/svg+xml"]')
        if any(cell.expects_error for cell in stored_cells):
            _screenshot(page, screenshots / f"lab-{shot}-error.png",
                        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        problems = _problems(stored_cells, dom_cells, {e.check_cell for e in found},
                             UNANSWERED[1 if korean else 0])
        if has_a_replay(lesson) and not problems:  # its step-through picture, made just now
            problems += steps_in_place(page, ".jp-Notebook")
        if lesson == LESSONS[0] and not problems:  # then the student answers exercise 1
            first = found[0]
            verdict = _type_answer(page, first.answer_cell, first.check_cell,
                                   first.solution.splitlines(), CORRECT[0])
            page.screenshot(path=screenshots / f"lab-{shot}-answered.png")
    except Exception:
        try:
            page.screenshot(path=screenshots / f"lab-{shot}-failed.png")
        except Exception:
            pass
        raise
    finally:
        jupyterlab.shutdown_kernels()
    if korean_fonts is not None:
        text, families = korean_fonts
        if text is None or not any(map(is_korean_font, families)):
            problems.append(f"Korean text {text!r} drawn with {families}, not a Korean font")
    if verdict is not None and not verdict.startswith(CORRECT[0]):
        problems.append(f"exercise 1, answered in the page: {verdict[:200]!r}")
    assert not problems, f"{folder}/{name} in JupyterLab:\n" + "\n".join(problems)


def test_load_ext_explains_errors_in_jupyterlab(jupyterlab, page, screenshots):
    """`%load_ext autograd_lens` in a notebook that a reader runs in JupyterLab: the
    freed-buffer error of a later cell shows explain's note under the traceback."""
    import nbformat

    cells = ["%xmode Minimal\nimport torch", "%load_ext autograd_lens",
             "x = torch.ones(3, requires_grad=True)\ny = x.exp()\n"
             "y.sum().backward()\ny.sum().backward()"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    (jupyterlab.root / "scratch").mkdir(exist_ok=True)
    nbformat.write(notebook, jupyterlab.root / "scratch" / "load_ext.ipynb")
    try:
        _open(page, jupyterlab, "load_ext.ipynb", len(cells), "scratch")
        _restart_and_run_all(page)
        _wait_until_done(page, jupyterlab, "load_ext.ipynb", "scratch")
        shown = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(2).inner_text()
        page.screenshot(path=screenshots / "lab-load-ext.png")
    finally:
        jupyterlab.shutdown_kernels()
    assert "Trying to backward through the graph a second time" in shown, shown
    assert "autograd_lens.explain: backward() call #2" in squash(shown), shown
    assert "ExpBackward0 was made at cell In[3], line 2" in squash(shown), shown
