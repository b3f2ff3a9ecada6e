"""Each lesson's size against its class-period budget, and the time it states.

    python tools/lesson_stats.py        # or: make stats

A lesson's core is everything before an optional last section headed "## Going
further". A word is a whitespace-separated token of a markdown cell; cells are markdown
and code cells. The budgets (../shared/design/CURRICULUM.md): a core of at most 1,500
words and 60 cells, a whole lesson of at most 2,200 words.

The time a lesson states on its "**Time:**" line is for its core, estimated from its
size: reading at WORDS_PER_MINUTE, plus MINUTES_PER_CODE_CELL for each code cell (read
the code, predict, run, look at the output), rounded up to the next 5 minutes.
tests/test_lesson_budget.py fails when a lesson is over budget or states another time.
"""
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_WORDS, CORE_CELLS, TOTAL_WORDS = 1500, 60, 2200
WORDS_PER_MINUTE = 130
MINUTES_PER_CODE_CELL = 0.5

GOING_FURTHER = re.compile(r"\s*##\s+Going further")
STATED_TIME = re.compile(r"\*\*Time:\*\*\s+about\s+(\d+)\s+minutes")
CHECK_CELL = re.compile(r"\bexercise_\d+\(")


@dataclass
class LessonStats:
    name: str
    core_words: int
    total_words: int
    core_cells: int
    core_code_cells: int
    exercises: int
    stated_minutes: int | None

    @property
    def estimated_minutes(self) -> int:
        minutes = (self.core_words / WORDS_PER_MINUTE
                   + self.core_code_cells * MINUTES_PER_CODE_CELL)
        return 5 * math.ceil(minutes / 5)

    @property
    def over_budget(self) -> list:
        over = []
        if self.core_words > CORE_WORDS:
            over.append(f"core {self.core_words} words > {CORE_WORDS}")
        if self.core_cells > CORE_CELLS:
            over.append(f"core {self.core_cells} cells > {CORE_CELLS}")
        if self.total_words > TOTAL_WORDS:
            over.append(f"total {self.total_words} words > {TOTAL_WORDS}")
        return over


def _source(cell) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _words(cells) -> int:
    return sum(len(_source(c).split()) for c in cells if c["cell_type"] == "markdown")


def lesson_stats(path: Path) -> LessonStats:
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    cut = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                and GOING_FURTHER.match(_source(c))), len(cells))
    core = cells[:cut]
    stated = next((STATED_TIME.search(_source(c)) for c in cells
                   if c["cell_type"] == "markdown" and STATED_TIME.search(_source(c))), None)
    return LessonStats(
        name=Path(path).stem,
        core_words=_words(core),
        total_words=_words(cells),
        core_cells=len(core),
        core_code_cells=sum(c["cell_type"] == "code" for c in core),
        exercises=sum(c["cell_type"] == "code" and bool(CHECK_CELL.search(_source(c)))
                      for c in cells),
        stated_minutes=int(stated.group(1)) if stated else None,
    )


def lessons(folder=ROOT / "notebooks"):
    return sorted(Path(folder).glob("[0-9][0-9]_*.ipynb"))


def table(paths) -> str:
    header = (f"{'lesson':40} {'core words':>10} {'total words':>11} {'core cells':>10} "
              f"{'exercises':>9} {'stated min':>10} {'estimate':>8}")
    rows = [header, "-" * len(header)]
    for path in paths:
        s = lesson_stats(path)
        stated = "-" if s.stated_minutes is None else str(s.stated_minutes)
        flag = "  over: " + "; ".join(s.over_budget) if s.over_budget else ""
        rows.append(f"{s.name:40} {s.core_words:>10} {s.total_words:>11} {s.core_cells:>10} "
                    f"{s.exercises:>9} {stated:>10} {s.estimated_minutes:>8}{flag}")
    rows.append(f"budget: core <= {CORE_WORDS} words and <= {CORE_CELLS} cells, "
                f"total <= {TOTAL_WORDS} words; estimate = core words / {WORDS_PER_MINUTE} "
                f"+ {MINUTES_PER_CODE_CELL} min per core code cell, rounded up to 5 min")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table([Path(p) for p in sys.argv[1:]] or lessons()))
