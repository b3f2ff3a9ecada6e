"""autograd_lens.explain on real scripts, one per pattern (tests/explain_scripts/).

Each script marks its lines: `# made` where the node whose saved tensors are lost was
made, `# freed` the backward call that freed them, `# changed` the line that changed
them in place, `# fails` the backward call that fails. The note must name those lines,
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
    "cached.py": diagnosis.BEFORE_THE_LOOP,
    "running_total.py": diagnosis.RUNNING_TOTAL,
    "two_losses.py": diagnosis.TWO_LOSSES,
    "grad_twice.py": diagnosis.TWO_LOSSES,
    "gan.py": diagnosis.GAN,
    "optimizer_step.py": diagnosis.OPTIMIZER_STEP,
    "in_place.py": diagnosis.IN_PLACE,
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
    made, freed, changed, fails = (marked(script, m) for m in ("made", "freed", "changed", "fails"))
    assert re.search(rf"call #\d+, at \S*{name}:{fails},", note), note
    assert re.search(rf"was made at \S*{name}:{made}:", note), note
    if freed is not None:
        assert re.search(rf"freed by .*call #\d+, at \S*{name}:{freed}, without retain_graph",
                         note), note
    if changed is not None:
        assert re.search(rf"changed by .* at \S*{name}:{changed}:", note), note
    cause, fix, lesson = PATTERNS[script]
    assert f"Likely cause: {cause}." in note and f"Usual fix: {fix}" in note, note
    for other in {p for p in PATTERNS.values() if p != PATTERNS[script]}:
        assert other[0] not in note


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


def test_without_an_error_the_output_is_the_same():
    explained = run("arguments.py", "3", "--flag")
    plain = run("arguments.py", "3", "--flag", runner=False)
    assert plain.returncode == explained.returncode == 0
    assert explained.stdout == plain.stdout and explained.stderr == plain.stderr
    assert "name: __main__" in plain.stdout and "argv: ['3', '--flag']" in plain.stdout


def test_the_exit_code_is_the_scripts():
    result = run("exits_3.py")
    assert result.returncode == 3 and result.stdout == "about to exit\n"


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


def test_the_readmes_note_is_what_the_runner_prints():
    readme = (SCRIPTS.parent.parent / "README.md").read_text()
    shown = readme[readme.index("```text\nautograd_lens.explain:") + len("```text\n"):]
    shown = shown[:shown.index("```")]
    printed = run("before_loop.py").stderr
    assert printed[printed.index("autograd_lens.explain:"):] == shown


@pytest.mark.parametrize("pattern", sorted(set(PATTERNS.values())), ids=lambda p: p[2])
def test_each_fix_points_to_a_lesson_that_exists(pattern):
    match = re.fullmatch(r"lesson (\d\d)(?:, section (\d+))?", pattern[2])
    assert match, pattern[2]
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
