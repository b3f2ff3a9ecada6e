"""Run lessons top to bottom in a fresh kernel and store their outputs ("Restart & Run All").

    python tools/run_notebooks.py                 # every lesson, English and Korean
    python tools/run_notebooks.py notebooks/02_retain_graph.ipynb

Cells tagged `raises-exception` may raise (their error is stored); an error in
any other cell stops with a message. Each picture's alt text is then written into its
cell's metadata (tools/alt_text.py). Run from anywhere: each kernel starts in its
lesson's folder, as JupyterLab's does (notebooks/, or notebooks/ko/ for the Korean
edition; its lessons' set_language("ko") gives the plots a Korean font).
"""
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

try:
    from tools import alt_text
except ImportError:  # run as a script: tools/ is on the path, not the folder above it
    import alt_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def _refuse_missing_glyphs(notebook) -> None:
    """A plot whose text the font cannot draw warns "Glyph ... missing from font(s)"
    (matplotlib) or "findfont: Font family ... not found": stop instead of storing it."""
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            text = output.get("text", "")
            if "missing from font" in text or "findfont:" in text:
                raise RuntimeError(f"cell {index}: a plot has text its font lacks (install "
                                   f"the Korean font: make setup):\n{text.strip()}")


def coalesce_streams(notebook) -> None:
    """One output per stream where a cell printed in several pieces: how the kernel cut a
    cell's printing up varies from run to run, what it printed does not."""
    for cell in notebook.cells:
        merged = []
        for output in cell.get("outputs", []):
            if (merged and output.output_type == "stream" == merged[-1].output_type
                    and output.name == merged[-1].name):
                merged[-1].text += output.text
            else:
                merged.append(output)
        if "outputs" in cell:
            cell.outputs = merged


def execute(notebook, folder: Path, start_lock=None):
    """Run the notebook top to bottom in a fresh kernel started in `folder`, and keep
    what a reader needs of the outputs (the classroom's teacher edition runs this too).
    start_lock: held while the kernel starts, when several processes start kernels side by
    side: jupyter_client picks free ports and the kernel binds them a moment later, so two
    kernels started at once can pick the same port, and one dies ("Address already in use")."""
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                       "language": "python"}
    client = NotebookClient(notebook, kernel_name="python3", timeout=600,
                            resources={"metadata": {"path": str(folder)}})
    if start_lock is not None:
        with start_lock:
            client.km = client.create_kernel_manager()
            client.start_new_kernel()
            client.start_new_kernel_client()
    client.execute()
    coalesce_streams(notebook)
    _refuse_missing_glyphs(notebook)
    # Execution timestamps and the exact Python version would change on every run.
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    notebook.metadata.get("language_info", {}).pop("version", None)
    return notebook


def run(path: Path) -> None:
    notebook = execute(nbformat.read(path, as_version=4), path.parent)
    # The pictures' alt text, where the site and the decks read it (draw's is refreshed).
    problems = alt_text.fill_lesson(notebook, path)
    nbformat.write(notebook, path)
    print(f"ran {path.relative_to(ROOT)}")
    if problems:
        raise RuntimeError("\n".join(problems + [alt_text.HOW_TO_FIX]))


if __name__ == "__main__":
    paths = [Path(p).resolve() for p in sys.argv[1:]] or (
        sorted(NOTEBOOKS.glob("[0-9]*.ipynb")) + sorted((NOTEBOOKS / "ko").glob("[0-9]*.ipynb")))
    for path in paths:
        run(path)
