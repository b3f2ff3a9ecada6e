"""Each lesson's size against its class-period budget, and the time it states.

    python tools/lesson_stats.py        # or: make stats

A lesson's core is its teaching: everything before its "## Exercises" heading (or before
"## Going further" if that comes first), counting the part of a cell that precedes the
heading. A word is a whitespace-separated token of a markdown cell; cells are markdown and
code cells. The budgets (../shared/design/CURRICULUM.md): a core of at most 1,500 words and
60 cells, a whole lesson of at most 2,200 words.

The time a lesson states on its "**Time:**" line is for its core, counted by part:
prose read at WORDS_PER_MINUTE, and the words of the text the code prints (messages,
tracebacks, tables) at the same rate; code read at CODE_LINES_PER_MINUTE (lines that are
not blank or comments only); MINUTES_PER_CODE_CELL to run each code cell and look at its
output (graphs and plots included); MINUTES_PER_PREDICTION to think through each "Predict"
prompt; the sum rounded up to the next 5 minutes. The rates come from independent readers'
times: the lessons as they stood before this rule took them 35 to 60 minutes, where the
first rule (130 words a minute, half a minute a code cell) gave 25 to 30; later rounds
read lessons 01-03 in 35 to 40 minutes, 04-06 in about 40 and 07, whose five `explain`
notes are 1,200 words of printed text, in 40 to 45. This rule gave those cores 36.0, 35.3,
33.5, 38.2, 33.3, 36.9 and 43.1 minutes; each was then cut to 35 or less.

The exercises are timed apart: MINUTES_PER_ANSWER for one whose answer is a value (a
prediction, a set of labels), MINUTES_PER_PROGRAM for one whose answer is code (its answer
cell defines a function), the sum rounded up to 5 minutes; readers took 5 to 10 minutes for
the first kind and 10 to 15 for the second. The line states both ("about 35 minutes for
the core, and about 25 for the three exercises").

A silent check is a code cell (exercise check cells aside) with an `assert` outside a
function: the reader sees nothing, and its source states the answer. Every lesson has
none; what only the tests need lives in tests/.

tests/test_lesson_budget.py fails when a lesson is over budget, states another time or
has a silent check.
"""
import ast
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE_WORDS, CORE_CELLS, TOTAL_WORDS = 1500, 60, 2200
WORDS_PER_MINUTE = 100
CODE_LINES_PER_MINUTE = 13
MINUTES_PER_CODE_CELL = 0.75
MINUTES_PER_PREDICTION = 1
MINUTES_PER_ANSWER = 7    # an exercise answered with a value
MINUTES_PER_PROGRAM = 10  # an exercise answered with code
CORE_MINUTES = 35  # a 50-minute class: the core, and time to discuss

CORE_END = re.compile(r"^##\s+(?:Exercises|Going further)", re.M)
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
STATED_TIME = re.compile(r"\*\*Time:\*\*\s+about\s+(\d+)\s+minutes")
STATED_EXERCISE_TIME = re.compile(r"\*\*Time:\*\*[^*]*?about\s+(\d+)\s+(?:minutes\s+)?for\s+the\s+\w+\s+exercises", re.S)
PREDICTION = re.compile(r"\bPredict\b")
CHECK_CELL = re.compile(r"\bexercise_\d+\(")
DEFINES_A_FUNCTION = re.compile(r"^def ", re.M)


@dataclass
class LessonStats:
    name: str
    core_words: int
    total_words: int
    core_cells: int
    core_code_cells: int
    exercises: int
    stated_minutes: int | None
    core_code_lines: int = 0
    core_output_words: int = 0
    predictions: int = 0
    silent_checks: int = 0
    stated_exercise_minutes: int | None = None
    programs: int = 0  # exercises answered with code (the rest with a value)

    @property
    def counted_minutes(self) -> float:
        """The core's time by the rule, before rounding up."""
        return ((self.core_words + self.core_output_words) / WORDS_PER_MINUTE
                + self.core_code_lines / CODE_LINES_PER_MINUTE
                + self.core_code_cells * MINUTES_PER_CODE_CELL
                + self.predictions * MINUTES_PER_PREDICTION)

    @property
    def estimated_minutes(self) -> int:
        return 5 * math.ceil(round(self.counted_minutes, 6) / 5)

    @property
    def exercise_minutes(self) -> int:
        minutes = (self.programs * MINUTES_PER_PROGRAM
                   + (self.exercises - self.programs) * MINUTES_PER_ANSWER)
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
        if self.estimated_minutes > CORE_MINUTES:
            over.append(f"core {self.estimated_minutes} min > {CORE_MINUTES}")
        return over


def _source(cell) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def _words(cells) -> int:
    return sum(len(_source(c).split()) for c in cells if c["cell_type"] == "markdown")


def _code_lines(cells) -> int:
    return sum(1 for c in cells if c["cell_type"] == "code"
               for line in _source(c).splitlines()
               if line.strip() and not line.strip().startswith(("#", "%")))


def _output_words(cells) -> int:
    """Words of the text the code cells print: streams, tracebacks, plain-text results."""
    count = 0
    for cell in cells:
        for output in cell.get("outputs", []) if cell["cell_type"] == "code" else []:
            data = output.get("data", {})
            if output["output_type"] == "stream":
                text = "".join(output["text"])
            elif output["output_type"] == "error":
                text = ANSI_COLOUR.sub("", "\n".join(output["traceback"]))
            elif not any(kind.startswith("image/") for kind in data):  # a picture's stand-in is not read
                text = "".join(data.get("text/plain", ""))
            else:
                text = ""
            count += len(text.split())
    return count


def _core(cells) -> list:
    """The cells before the core's end; a cell the heading cuts keeps the part before it."""
    core = []
    for cell in cells:
        end = CORE_END.search(_source(cell)) if cell["cell_type"] == "markdown" else None
        if end:
            if _source(cell)[:end.start()].strip():
                core.append(dict(cell, source=_source(cell)[:end.start()]))
            break
        core.append(cell)
    return core


def _is_answer_cell(cell) -> bool:
    """An exercise's answer cell: its worked solution is in the cell's classroom metadata."""
    return cell["cell_type"] == "code" and "exercise" in cell.get("metadata", {}).get("classroom", {})


def _is_silent_check(cell) -> bool:
    """An assert outside any function, in a code cell that is not an exercise's check."""
    source = _source(cell)
    if cell["cell_type"] != "code" or CHECK_CELL.search(source):
        return False
    try:
        tree = ast.parse("\n".join(line for line in source.splitlines()
                                   if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return False
    functions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)

    def asserts(node):
        if isinstance(node, ast.Assert):
            return True
        return any(asserts(child) for child in ast.iter_child_nodes(node)
                   if not isinstance(child, functions))
    return asserts(tree)


def lesson_stats(path: Path) -> LessonStats:
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    core = _core(cells)
    stated = next((STATED_TIME.search(_source(c)) for c in cells
                   if c["cell_type"] == "markdown" and STATED_TIME.search(_source(c))), None)
    stated_exercises = next((STATED_EXERCISE_TIME.search(_source(c)) for c in cells
                             if c["cell_type"] == "markdown"
                             and STATED_EXERCISE_TIME.search(_source(c))), None)
    return LessonStats(
        name=Path(path).stem,
        core_words=_words(core),
        total_words=_words(cells),
        core_cells=len(core),
        core_code_cells=sum(c["cell_type"] == "code" for c in core),
        exercises=sum(c["cell_type"] == "code" and bool(CHECK_CELL.search(_source(c)))
                      for c in cells),
        stated_minutes=int(stated.group(1)) if stated else None,
        core_code_lines=_code_lines(core),
        core_output_words=_output_words(core),
        predictions=sum(len(PREDICTION.findall(_source(c))) for c in core
                        if c["cell_type"] == "markdown"),
        silent_checks=sum(_is_silent_check(c) for c in cells),
        stated_exercise_minutes=int(stated_exercises.group(1)) if stated_exercises else None,
        programs=sum(_is_answer_cell(c) and bool(DEFINES_A_FUNCTION.search(_source(c))) for c in cells),
    )


def lessons(folder=ROOT / "notebooks"):
    return sorted(Path(folder).glob("[0-9][0-9]_*.ipynb"))


def table(paths) -> str:
    header = (f"{'lesson':38} {'core words':>10} {'total words':>11} {'core cells':>10} "
              f"{'code lines':>10} {'printed':>7} {'predict':>7} {'silent':>6} {'exercises':>9} "
              f"{'stated min':>10} {'estimate (counted)':>18} {'ex. min':>7}")
    rows = [header, "-" * len(header)]
    for path in paths:
        s = lesson_stats(path)
        stated = "-" if s.stated_minutes is None else str(s.stated_minutes)
        flag = "  over: " + "; ".join(s.over_budget) if s.over_budget else ""
        rows.append(f"{s.name[:38]:38} {s.core_words:>10} {s.total_words:>11} {s.core_cells:>10} "
                    f"{s.core_code_lines:>10} {s.core_output_words:>7} {s.predictions:>7} {s.silent_checks:>6} "
                    f"{s.exercises:>9} {stated:>10} {s.estimated_minutes:>11} ({s.counted_minutes:4.1f}) "
                    f"{s.exercise_minutes:>7}{flag}")
    rows.append(f"budget: core <= {CORE_WORDS} words, <= {CORE_CELLS} cells and <= "
                f"{CORE_MINUTES} min, total <= {TOTAL_WORDS} words; estimate = (core words + "
                f"printed words) / {WORDS_PER_MINUTE} + code lines / {CODE_LINES_PER_MINUTE} + "
                f"{MINUTES_PER_CODE_CELL} min per code cell + {MINUTES_PER_PREDICTION} min per "
                f"'Predict', rounded up to 5 min; exercises {MINUTES_PER_ANSWER} min each, "
                f"{MINUTES_PER_PROGRAM} if answered with code; "
                f"silent = code cells with an assert outside a function (should be 0)")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table([Path(p) for p in sys.argv[1:]] or lessons()))
