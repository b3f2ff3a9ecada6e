"""pytest's settings for the whole repository: which tests get which mark, and how
pytest-xdist spreads them over the cores. (The tests' own helpers are in tests/.)"""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
BROWSER_TESTS = ROOT / "tests" / "browser"

# --- Marks, and running on every core ------------------------------------------------
# Marks (pyproject.toml lists them): `kernel` for a test that runs a notebook or a
# Jupyter kernel, `browser` for the browser tests, `build` for a test that reads what
# `make site` or `make classroom` built. `make check` leaves out all three.
#
# `make test` and `make check` run pytest-xdist: each test goes to whichever worker is
# free, except the tests of one work unit, which go to one worker together, in order:
# - a notebook's cells: nbval runs them one after another in one kernel;
# - the JupyterLab tests of one edition (English, Korean): one server each;
# - the tests of a module whose fixtures are module-scoped (built once per worker).
# (xdist's own `xdist_group` mark cannot do this: the pytest pinned here ignores the
# test-id suffix that it works by.) Under xdist the work is queued longest first, so that
# no worker is left with a long tail; on one core, the quick tests come first and the
# browser tests last.
SHARE_MODULE_FIXTURES = {"test_classroom_nbgrader.py", "test_expected_errors.py",
                         "test_packaging.py", "test_exercises_lesson07.py"}
LONGEST_FIRST = ("test_browser_lab.py", "test_classroom_nbgrader.py", ".ipynb",
                 "test_explain.py", "test_browser_site.py", "test_browser_slides.py")


def work_unit(nodeid: str) -> str:
    """What must run on one worker with this test: its notebook, its JupyterLab server,
    its module, or only itself."""
    path, _, test = nodeid.partition("::")
    name = Path(path).name
    if name.endswith(".ipynb") or name in SHARE_MODULE_FIXTURES:
        return path
    if name == "test_browser_lab.py":
        return f"{path} (the Korean edition)" if "[ko-" in test else f"{path} (English)"
    return nodeid


@pytest.hookimpl(optionalhook=True)  # xdist's hook: unknown when xdist is not loaded
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    return ByWorkUnit(config, log)


def _longest_first(item, cells_in: dict) -> tuple:
    name = item.path.name
    rank = next((i for i, end in enumerate(LONGEST_FIRST) if name.endswith(end)),
                len(LONGEST_FIRST))
    return (rank, -cells_in.get(item.path, 0))  # notebooks: the most cells first


def pytest_collection_modifyitems(config, items):
    cells_in = {}
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.kernel)
            cells_in[item.path] = cells_in.get(item.path, 0) + 1
        if BROWSER_TESTS in item.path.parents:
            item.add_marker(pytest.mark.browser)
            if "jupyterlab" in item.fixturenames:
                item.add_marker(pytest.mark.kernel)
    if hasattr(config, "workerinput"):  # an xdist worker: the order the work is queued in
        items.sort(key=lambda item: _longest_first(item, cells_in))  # a stable sort
    else:
        items.sort(key=lambda item: item.get_closest_marker("browser") is not None)
