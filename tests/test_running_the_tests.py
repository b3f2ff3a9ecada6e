"""How `make test` runs the suite: which tests must share a pytest-xdist worker
(conftest.py's work units), and the phase times it prints at the end (tools/phases.sh)."""
import ast
import subprocess
import sys

from project import ROOT

sys.path.insert(0, str(ROOT))
from conftest import SHARE_MODULE_FIXTURES, work_unit  # noqa: E402  (the repository's conftest.py)


def test_what_must_share_a_worker_shares_one():
    notebook = "notebooks/02_retain_graph.ipynb"
    assert work_unit(f"{notebook}::Cell 0") == work_unit(f"{notebook}::Cell 7") == notebook
    lab = "tests/browser/test_browser_lab.py::test_lesson_runs_in_jupyterlab"
    assert work_unit(f"{lab}[01_backward_and_the_graph]") == work_unit(f"{lab}[07_debugging]")
    assert work_unit(f"{lab}[ko-01_backward_and_the_graph]") != work_unit(f"{lab}[01_backward]")
    module = "tests/test_classroom_nbgrader.py"
    assert work_unit(f"{module}::test_a[02]") == work_unit(f"{module}::test_b") == module
    # any other test goes on its own, to whichever worker is free
    assert work_unit("tests/test_draw.py::test_a[x]") != work_unit("tests/test_draw.py::test_b")


def _module_scoped_fixtures(path):
    """The names of the fixtures with scope="module" that a test file defines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and any(
                        keyword.arg == "scope" and getattr(keyword.value, "value", None) == "module"
                        for keyword in decorator.keywords):
                    found.append(node.name)
    return found


def test_every_module_scoped_fixture_keeps_its_tests_on_one_worker():
    """A module-scoped fixture is built once per worker that runs the module's tests:
    a new one (an expensive set-up, say) must be listed in conftest.py."""
    with_fixtures = {path.name for path in (ROOT / "tests").rglob("test_*.py")
                     if _module_scoped_fixtures(path)}
    assert with_fixtures == SHARE_MODULE_FIXTURES


def test_the_phase_report_times_each_phase_and_keeps_a_failure(tmp_path):
    phases = ROOT / "tools" / "phases.sh"

    def run(*args):
        return subprocess.run(["sh", str(phases), *args], cwd=tmp_path, capture_output=True,
                              text=True)

    assert run("start").returncode == 0
    assert run("run", "quick", "true").returncode == 0
    assert run("run", "slow", "sh", "-c", "sleep 1; exit 3").returncode == 3
    report = run("report").stdout
    lines = dict(line.split(None, 1) for line in report.splitlines()[1:])
    assert list(lines) == ["quick", "slow", "total"], report
    assert lines["slow"].startswith("1 s") or lines["slow"].startswith("2 s"), report
    assert "(failed)" in lines["slow"] and "(failed)" not in lines["quick"], report
