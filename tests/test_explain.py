"""autograd_lens.explain on real scripts, one per pattern (tests/explain_scripts/).

Each script marks its lines: `# made` where the node whose saved tensors are lost was
made, `# freed` the backward call that freed them, `# changed` the line that changed
them in place, `# keeps` the line that carries a tensor into the next iteration, `# fails`
the backward call that fails. The note must name those lines,
through the runner (`python -m autograd_lens.explain script.py`, in a subprocess) and
through the context manager (`with explain(): main()`, here).
"""
import re
import runpy
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
import torch

from autograd_lens.explain import diagnosis, explain

SCRIPTS = Path(__file__).parent / "explain_scripts"
PATTERNS = {
    "before_loop.py": diagnosis.BEFORE_THE_LOOP,
    "carried.py": diagnosis.CARRIED,
    "carried_in_function.py": diagnosis.CARRIED,
    "cached.py": diagnosis.CARRIED,
    "running_total.py": diagnosis.RUNNING_TOTAL,
    "two_losses.py": diagnosis.TWO_LOSSES,
    "grad_twice.py": diagnosis.TWO_LOSSES,
    "gan.py": diagnosis.GAN,
    "optimizer_step.py": diagnosis.STEP_BETWEEN_BACKWARDS,
    "in_place.py": diagnosis.IN_PLACE,
    # Patterns for which no public thread was found: our own reductions.
    "grad_penalty.py": diagnosis.GRAD_PENALTY,
    "stale_loss.py": diagnosis.STALE_LOSS,
    "running_center.py": diagnosis.CARRIED,
}


def marked(script, mark):
    """The line number of the one line of `script` whose comment has `mark`."""
    lines = [number for number, line in enumerate((SCRIPTS / script).read_text().splitlines(), 1)
             if re.search(rf"#.*\b{mark}\b", line)]
    assert len(lines) <= 1, (script, mark, lines)
    return lines[0] if lines else None


def run(*args, runner=True):
    command = [sys.executable, *(["-m", "autograd_lens.explain"] if runner else []), *args]
    return subprocess.run(command, cwd=SCRIPTS, capture_output=True, text=True, timeout=120)


def check_note(note, script):
    name = script
    made, freed, changed, fails, keeps = (marked(script, m)
                                          for m in ("made", "freed", "changed", "fails", "keeps"))
    assert re.search(rf"call #\d+, at \S*{name}:{fails},", note), note
    assert re.search(rf"was made at \S*{name}:{made}:", note), note
    if freed is not None:
        assert re.search(rf"freed by .*call #\d+, at \S*{name}:{freed}, without retain_graph",
                         note), note
    if changed is not None:
        assert re.search(rf"changed by .* at \S*{name}:{changed}:", note), note
    if keeps is not None:  # the line that carries the tensor into the next iteration
        assert re.search(rf"Here: \S*{name}:{keeps} folds .* under torch.no_grad\(\)", note), note
    pattern = PATTERNS[script]
    assert f"Likely cause: {pattern.cause}." in note and "\n  Usual fix: " in note, note
    for other in {p for p in PATTERNS.values() if p != pattern}:
        assert other.cause not in note


@pytest.mark.scripts
@pytest.mark.parametrize("script", PATTERNS)
def test_the_runner_names_the_lines_and_the_pattern(script):
    result = run(script)
    assert result.returncode == 1
    plain = run(script, runner=False)
    # The original error stays, word for word, and the note follows it.
    assert plain.stderr.strip().splitlines()[-1] in result.stderr
    check_note(result.stderr[result.stderr.index("autograd_lens.explain:"):], script)


@pytest.mark.parametrize("script", PATTERNS)
def test_the_context_manager_adds_the_same_note(script):
    main = runpy.run_path(str(SCRIPTS / script), run_name="explained")["main"]
    with pytest.raises(RuntimeError) as caught:
        with explain():
            main()
    (note,) = caught.value.__notes__
    check_note(note, script)


def test_nested_explain_adds_one_note():
    main = runpy.run_path(str(SCRIPTS / "two_losses.py"), run_name="explained")["main"]
    with pytest.raises(RuntimeError) as caught:
        with explain():
            with explain():
                main()
    assert len(caught.value.__notes__) == 1
    check_note(caught.value.__notes__[0], "two_losses.py")


@pytest.mark.scripts
def test_without_an_error_the_output_is_the_same():
    explained = run("arguments.py", "3", "--flag")
    plain = run("arguments.py", "3", "--flag", runner=False)
    assert plain.returncode == explained.returncode == 0
    assert explained.stdout == plain.stdout and explained.stderr == plain.stderr
    assert "name: __main__" in plain.stdout and "argv: ['3', '--flag']" in plain.stdout


@pytest.mark.scripts
def test_the_exit_code_is_the_scripts():
    result = run("exits_3.py")
    assert result.returncode == 3 and result.stdout == "about to exit\n"


@pytest.mark.scripts
def test_other_errors_pass_through_untouched():
    result, plain = run("other_error.py"), run("other_error.py", runner=False)
    assert result.returncode == plain.returncode == 1
    assert result.stderr.splitlines()[-1] == plain.stderr.splitlines()[-1]
    assert "autograd_lens.explain:" not in result.stderr
    main = runpy.run_path(str(SCRIPTS / "other_error.py"), run_name="explained")["main"]
    with pytest.raises(RuntimeError) as caught:
        with explain():
            main()
    assert not hasattr(caught.value, "__notes__")


@pytest.mark.scripts
def test_the_runner_needs_a_script():
    assert run(runner=True).returncode == 2
    result = run("no_such_script.py")
    assert result.returncode == 2 and "no such file" in result.stderr


def test_it_keeps_nothing_alive():
    with explain():
        a = torch.rand(3, requires_grad=True)
        hidden = a.exp().sin()
        saved = weakref.ref(hidden.grad_fn._saved_self)  # a.exp(), saved by SinBackward0
        hidden.sum().backward()
        del hidden
        assert saved() is None


def test_it_changes_no_number():
    def train():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.GELU(), torch.nn.Linear(8, 1))
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        for _ in range(5):
            loss = model(torch.randn(16, 3)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return [p.detach().clone() for p in model.parameters()]

    plain = train()
    with explain():
        explained = train()
    assert all(torch.equal(p, q) for p, q in zip(plain, explained))


@pytest.mark.scripts
def test_the_readmes_note_is_what_the_runner_prints():
    readme = (SCRIPTS.parent.parent / "README.md").read_text()
    shown = readme[readme.index("```text\nautograd_lens.explain:") + len("```text\n"):]
    shown = shown[:shown.index("```")]
    printed = run("before_loop.py").stderr
    assert printed[printed.index("autograd_lens.explain:"):] == shown


ALL_PATTERNS = [value for value in vars(diagnosis).values() if isinstance(value, diagnosis.Pattern)]


@pytest.mark.parametrize("pattern", ALL_PATTERNS, ids=lambda p: p.cause[:40])
def test_each_fix_points_to_a_lesson_that_exists(pattern):
    match = re.fullmatch(r"lesson (\d\d)(?:, section (\d+))?", pattern.lesson)
    assert match, pattern.lesson
    (lesson,) = (SCRIPTS.parent.parent / "notebooks").glob(f"{match[1]}_*.ipynb")
    if match[2]:
        assert re.search(rf'"## {match[2]}\. ', lesson.read_text()), (lesson.name, match[2])


def test_a_node_made_before_explain_is_not_given_a_later_line():
    x = torch.randn(3, requires_grad=True)
    h = x.exp()  # made before explain() starts: no line of the program is known for it
    with pytest.raises(RuntimeError) as caught:
        with explain():
            h.sum().backward()
            h.mean().backward()
    (note,) = caught.value.__notes__
    assert "ExpBackward0 was made before explain() started." in note


# --- torch.compile -------------------------------------------------------------------

def _compiled_mlp(**options):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    return model, torch.compile(model, backend="aot_eager", **options)


def test_compiled_code_is_traced_whole_under_explain():
    """No graph break per op: explain stays out of what torch.compile traces."""
    import torch._dynamo as dynamo

    dynamo.reset()
    model, compiled = _compiled_mlp(fullgraph=True)  # a graph break would be an error
    x = torch.randn(3, 4)
    with explain():
        loss = compiled(x).sum()
        loss.backward()
    assert dict(dynamo.utils.counters["graph_break"]) == {}
    plain = model(x).sum()
    assert torch.allclose(loss, plain)


def test_an_error_only_compilation_raises_still_surfaces():
    import torch._dynamo as dynamo

    def branchy(x):
        if x.sum() > 0:  # data-dependent control flow: fullgraph=True refuses it
            return x * 2
        return x * 3

    errors = []
    for watched in (False, True):
        dynamo.reset()
        compiled = torch.compile(branchy, backend="eager", fullgraph=True)
        with pytest.raises(Exception) as caught:
            if watched:
                with explain():
                    compiled(torch.ones(3))
            else:
                compiled(torch.ones(3))
        errors.append((type(caught.value), str(caught.value).splitlines()[0]))
    assert errors[0] == errors[1]


def test_a_freed_graph_through_a_compiled_model_gets_its_note():
    model, compiled = _compiled_mlp()
    x = torch.randn(3, 4)
    with pytest.raises(RuntimeError) as caught:
        with explain():
            features = compiled(x)
            features.sum().backward()
            features.mean().backward()
    (note,) = caught.value.__notes__
    assert "CompiledFunctionBackward" in note and "freed by backward() call #1" in note


# --- in a notebook: %load_ext autograd_lens ---------------------------------------------

@pytest.mark.kernel
def test_load_ext_turns_explain_on_for_every_cell_and_unload_ext_off(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    failing = ("x = torch.ones(3, requires_grad=True)\n"
               "y = x.exp()\n"
               "y.sum().backward()\n"
               "y.sum().backward()")
    cells = ["%xmode Minimal\nimport torch", "%load_ext autograd_lens", failing,
             "%unload_ext autograd_lens", failing]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(notebook, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()

    def shown(cell):
        return "".join(o.get("text", "") + "\n".join(o.get("traceback", []))
                       for o in cell.outputs)

    assert "explain() is on for every cell" in shown(notebook.cells[1])
    assert "autograd_lens.explain: backward() call #2, at cell In[3], line 4" in shown(notebook.cells[2])
    assert "ExpBackward0 was made at cell In[3], line 2" in shown(notebook.cells[2])
    assert "explain() is off" in shown(notebook.cells[3])
    assert "Trying to backward through the graph a second time" in shown(notebook.cells[4])
    assert "autograd_lens.explain:" not in shown(notebook.cells[4])


@pytest.mark.scripts
def test_a_gradient_penalty_is_told_create_graph_not_retain_graph():
    note = run("grad_penalty.py").stderr
    line = marked("grad_penalty.py", "freed")
    assert f"Here: torch.autograd.grad(..., create_graph=True) at grad_penalty.py:{line}." in note
    assert "retain_graph=True also works" not in note
