"""What a lesson's stored outputs say the reader must see, cell by cell.

The committed notebook is the reference: a cell that stores a graph (image/svg+xml) must
show one in JupyterLab and on the site, a cell tagged `raises-exception` that stores an
error must show that error with its message, and no other cell may show an error.
"""
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
LESSONS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
KOREAN_LESSONS = sorted((ROOT / "notebooks" / "ko").glob("[0-9]*.ipynb"))  # same names


def lesson_id(lesson: Path) -> str:
    """01_backward_and_the_graph, or ko-01_backward_and_the_graph for the Korean edition."""
    return f"ko-{lesson.stem}" if lesson.parent.name == "ko" else lesson.stem
RAISES = "raises-exception"


@dataclass
class StoredCell:
    index: int                 # position among all cells, as in JupyterLab's DOM
    code: bool
    has_source: bool           # JupyterLab does not execute an empty code cell
    tags: list = field(default_factory=list)
    svg: int = 0               # graphs drawn by autograd_lens.draw
    png: int = 0               # plots
    errors: list = field(default_factory=list)   # (ename, evalue) of stored error outputs
    stderr: int = 0            # stored stderr stream outputs (warnings shown on purpose)

    @property
    def expects_error(self):
        return RAISES in self.tags and bool(self.errors)


def read_lesson(path: Path):
    """The notebook as stored, and one StoredCell per cell."""
    notebook = nbformat.read(path, as_version=4)
    cells = []
    for index, cell in enumerate(notebook.cells):
        stored = StoredCell(index=index, code=cell.cell_type == "code",
                            has_source=bool(cell.source.strip()),
                            tags=list(cell.get("metadata", {}).get("tags", [])))
        for output in cell.get("outputs", []) if stored.code else []:
            data = output.get("data", {})
            stored.svg += "image/svg+xml" in data
            stored.png += "image/png" in data
            if output.output_type == "error":
                stored.errors.append((output.ename, output.evalue))
            elif output.output_type == "stream" and output.name == "stderr":
                stored.stderr += 1
        cells.append(stored)
    return notebook, cells


def squash(text: str) -> str:
    """Whitespace-insensitive form, to find a message in rendered text."""
    return re.sub(r"\s+", " ", text).strip()
