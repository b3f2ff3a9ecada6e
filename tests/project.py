"""Where the project's lessons are, for the tests (`from project import ROOT, NOTEBOOKS`)."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
# The Korean edition: the same lessons, same file names (tests/test_korean_edition.py).
KOREAN_NOTEBOOKS = sorted((ROOT / "notebooks" / "ko").glob("[0-9]*.ipynb"))
