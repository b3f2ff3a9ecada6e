"""Re-make figures/ from the lessons' own code.

A figure is the value of a lesson cell tagged `figure:<name>` (a `draw(...)` call).
To make it, this runs the lesson's code cells in order as "Run All" does (a cell
tagged `raises-exception` may raise; IPython's %magics are skipped), and saves the
value of the tagged cell as figures/<name>.dot, .svg and .png. The README's picture
of `overview` is saved in the same way; it comes from tools/overview_figure.py, whose
model is built in code rather than in a lesson. The README's picture of `memory_timeline`
(tools/memory_figure.py) is a plot: figures/memory_two_losses.svg, with its data as text
in figures/memory_two_losses.txt.

    python tools/make_figures.py          # write every figure
    tests/test_figures.py                 # fails when a committed .dot is stale
"""
import ast
import contextlib
import io
import sys
from pathlib import Path

import nbformat

import memory_figure
import overview_figure

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
FIGURES = ROOT / "figures"
TAG = "figure:"


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _python_only(source):
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%"))


def _value_of_cell(namespace, source):
    """Run a cell like Jupyter does: its last expression is its value."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<lesson cell>", "exec"), namespace)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), "<lesson cell>", "eval"), namespace)


def figures_in(path):
    """Yield (name, GraphView) for every cell tagged figure:<name> in one lesson."""
    notebook = nbformat.read(path, as_version=4)
    cells = [c for c in notebook.cells if c.cell_type == "code"]
    made_here = [i for i, c in enumerate(cells) if any(t.startswith(TAG) for t in _tags(c))]
    namespace = {"__name__": "__lesson__"}
    for cell in cells[:made_here[-1] + 1] if made_here else []:  # no further than needed
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # what the lesson prints
                value = _value_of_cell(namespace, _python_only(cell.source))
        except Exception:
            if "raises-exception" not in _tags(cell):
                raise
            continue
        for tag in _tags(cell):
            if tag.startswith(TAG):
                yield tag[len(TAG):], value


def all_figures():
    """{name: GraphView} for every figure of every lesson, in lesson order, then the README's."""
    figures = {}
    for path in sorted(NOTEBOOKS.glob("[0-9]*.ipynb")):
        for name, view in figures_in(path):
            if name in figures:
                raise ValueError(f"two cells make figure {name!r}; the second is in {path.name}")
            figures[name] = view
    for name, make in overview_figure.FIGURES.items():
        if name in figures:
            raise ValueError(f"a lesson and tools/overview_figure.py both make {name!r}")
        figures[name] = make()
    return figures


def main():
    FIGURES.mkdir(exist_ok=True)
    for name, view in all_figures().items():
        for suffix in (".dot", ".svg", ".png"):
            view.save(FIGURES / f"{name}{suffix}")
        print(f"wrote figures/{name}.dot, .svg and .png")
    memory_figure.save(memory_figure.timelines(), FIGURES)
    print(f"wrote figures/{memory_figure.NAME}.svg and .txt")


if __name__ == "__main__":
    sys.exit(main())
