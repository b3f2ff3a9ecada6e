"""Measure what the lessons' nbval run costs against its floor, in one run.

The floor is what no lesson can avoid: for each notebook, nbval starting a kernel
and running the lesson's set-up cell (its imports). The cost is nbval on the real
lessons. The series' budget is cost <= 2 x floor.

    python tools/nbval_budget.py        # or: make budget

A benchmark, not a test: wall times depend on the machine and its load.
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


def nbval_seconds(paths):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), *map(str, paths)],
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def setup_cells_only(folder):
    """Copies of the lessons that keep only their first code cell (the set-up)."""
    copies = []
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        first = next(c for c in notebook.cells if c.cell_type == "code")
        notebook.cells = [first]
        copy = Path(folder) / path.name
        nbformat.write(notebook, copy)
        copies.append(copy)
    return copies


def main():
    with tempfile.TemporaryDirectory() as folder:
        floor = nbval_seconds(setup_cells_only(folder))
    cost = nbval_seconds(NOTEBOOKS)
    print(f"{len(NOTEBOOKS)} lessons: floor (kernel start + set-up cell) {floor:.1f} s, "
          f"nbval on the lessons {cost:.1f} s, ratio {cost / floor:.2f} (budget 2.00)")


if __name__ == "__main__":
    main()
