"""An expected-error cell fails the test suite if its error stops being raised or changes.

This runs nbval, the way `make test` does, on a small notebook made here: the
check itself is checked, so a tagged cell can never pass silently.
"""
import subprocess
import sys

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.kernel


def make_notebook(path, source):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["tags"] = ["raises-exception"]
    notebook.cells = [nbformat.v4.new_code_cell("%xmode Minimal"), cell]
    NotebookClient(notebook, kernel_name="python3").execute()
    nbformat.write(notebook, path)
    return notebook


def nbval(path):
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", "/dev/null",
         "--rootdir", str(path.parent), "--nbval", "--nbval-current-env", str(path)],
        capture_output=True, text=True)
    return result.returncode, result.stdout


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    path = tmp_path_factory.mktemp("nb") / "expected_error.ipynb"
    notebook = make_notebook(path, "raise RuntimeError('saved tensors were freed')")
    return path, notebook


def with_source(stored, source, tmp_path):
    path, notebook = stored
    notebook.cells[1].source = source
    changed = tmp_path / path.name
    nbformat.write(notebook, changed)
    return changed


def test_passes_while_the_error_is_raised(stored):
    code, out = nbval(stored[0])
    assert code == 0, out


@pytest.mark.parametrize("source", [
    "x = 1  # the error is no longer raised",
    "raise ValueError('saved tensors were freed')  # another error",
    "raise RuntimeError('another message')",
])
def test_fails_when_the_error_changes_or_goes(stored, source, tmp_path):
    code, out = nbval(with_source(stored, source, tmp_path))
    assert code == 1, out
