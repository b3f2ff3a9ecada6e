"""Measure what the lessons' nbval run costs against its floor, in one run.

The floor is what no lesson can avoid: for each notebook, nbval starting a kernel
and running the lesson's set-up cell (its imports). The cost is nbval on the real
lessons. The series' budget, measured with one nbval run for each side: cost <= 2 x
floor. Then each lesson alone (floor, then cost), for its own work (cost - floor),
which should stay under about five seconds.

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


def setup_cell_only(path, folder):
    """A copy of the lesson that keeps only its first code cell (the set-up)."""
    notebook = nbformat.read(path, as_version=4)
    notebook.cells = [next(c for c in notebook.cells if c.cell_type == "code")]
    copy = Path(folder) / path.name
    nbformat.write(notebook, copy)
    return copy


def main():
    with tempfile.TemporaryDirectory() as folder:
        floor = nbval_seconds([setup_cell_only(path, folder) for path in NOTEBOOKS])
    cost = nbval_seconds(NOTEBOOKS)
    print(f"the series: floor {floor:.1f} s, nbval {cost:.1f} s, "
          f"ratio {cost / floor:.2f} (budget 2.00)\n")

    floors, costs = [], []
    print(f"{'lesson':52} {'floor s':>8} {'nbval s':>8} {'own work s':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for path in NOTEBOOKS:
            floors.append(nbval_seconds([setup_cell_only(path, folder)]))
            costs.append(nbval_seconds([path]))
            print(f"{path.name:52} {floors[-1]:8.1f} {costs[-1]:8.1f} "
                  f"{costs[-1] - floors[-1]:10.1f}")


if __name__ == "__main__":
    main()
