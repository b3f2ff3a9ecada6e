"""Keep the Korean edition (notebooks/ko/) in step with the English lessons.

A Korean lesson has the same cells (same ids) as its English lesson, and the same code: only
comments and the text inside string literals may differ. Its metadata stores a hash
of the English lesson's cells as they were when the Korean one was last brought in
step, so that a later change to the English shows up (tests/test_korean_edition.py).

    python -m tools.korean_edition check                 # every Korean lesson
    python -m tools.korean_edition synced notebooks/ko/03_gradient_accumulation.ipynb

`synced` records that a Korean lesson now matches its English lesson: it checks the
code first, and refuses if the code differs. Run it after translating a change.
"""
import ast
import hashlib
import json
import sys
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path(__file__).resolve().parent.parent
ENGLISH = ROOT / "notebooks"
KOREAN = ENGLISH / "ko"
LESSONS = "[0-9]*.ipynb"
KEY = "korean_edition"  # the Korean notebook's metadata entry


def korean_lessons():
    return sorted(KOREAN.glob(LESSONS))


def english_of(korean_path: Path) -> Path:
    return ENGLISH / korean_path.name


def source_hash(notebook) -> str:
    """A hash of what a translator translates: each cell's type, source, tags and
    worked solution (not outputs or execution counts, which a re-run changes)."""
    cells = [[cell.cell_type, cell.source, cell.metadata.get("tags", []),
              cell.metadata.get("classroom", {})] for cell in notebook.cells]
    text = json.dumps(cells, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class _BlankStrings(ast.NodeTransformer):
    """Every string's text made empty, so that only code is left to compare."""

    def visit_JoinedStr(self, node):
        # an f-string: its {expressions} in order; the text around them may differ
        values = [self.visit(value) for value in node.values
                  if isinstance(value, ast.FormattedValue)]
        return ast.copy_location(ast.JoinedStr(values=values), node)

    def visit_Constant(self, node):
        if isinstance(node.value, str):
            return ast.copy_location(ast.Constant(""), node)
        return node


def code_shape(source: str) -> str:
    """The cell's code with comments dropped and string texts emptied, as an AST dump.
    IPython's %magics become Python first, as the kernel does."""
    python = TransformerManager().transform_cell(source)
    tree = _BlankStrings().visit(ast.parse(python))
    return ast.dump(tree)


def _text(solution) -> str:
    """A worked solution is stored as a list of lines (tools/classroom/exercises.py)."""
    return "\n".join(solution) if isinstance(solution, list) else solution


def code_differences(english, korean) -> list[str]:
    """What differs between the two lessons beyond comments and string texts."""
    if len(english.cells) != len(korean.cells):
        return [f"{len(english.cells)} cells in English, {len(korean.cells)} in Korean"]
    problems = []
    for index, (en, ko) in enumerate(zip(english.cells, korean.cells)):
        where = f"cell {index}"
        if en.cell_type != ko.cell_type:
            problems.append(f"{where}: {en.cell_type} in English, {ko.cell_type} in Korean")
            continue
        if en.get("id") != ko.get("id"):  # the decks' fragments name cells by id
            problems.append(f"{where}: cell id {ko.get('id')} in Korean, {en.get('id')} in English")
        if en.metadata.get("tags", []) != ko.metadata.get("tags", []):
            problems.append(f"{where}: tags differ")
        en_exercise = en.metadata.get("classroom", {})
        ko_exercise = ko.metadata.get("classroom", {})
        if {k: v for k, v in en_exercise.items() if k != "solution"} != \
           {k: v for k, v in ko_exercise.items() if k != "solution"}:
            problems.append(f"{where}: the classroom metadata (exercise, points) differ")
        pairs = [("code", en.source, ko.source)] if en.cell_type == "code" else []
        if "solution" in en_exercise or "solution" in ko_exercise:
            pairs.append(("worked solution", _text(en_exercise.get("solution", "")),
                          _text(ko_exercise.get("solution", ""))))
        for what, en_source, ko_source in pairs:
            try:
                same = code_shape(en_source) == code_shape(ko_source)
            except SyntaxError as error:
                problems.append(f"{where}: the {what} does not parse ({error.msg}, "
                                f"line {error.lineno})")
                continue
            if not same:
                problems.append(f"{where}: the {what} differs beyond comments and strings")
    return problems


def sync_problems(korean_path: Path) -> list[str]:
    """Everything that keeps a Korean lesson from being in step with its English one."""
    english_path = english_of(korean_path)
    if not english_path.exists():
        return [f"no English lesson {english_path.name}"]
    english = nbformat.read(english_path, as_version=4)
    korean = nbformat.read(korean_path, as_version=4)
    problems = code_differences(english, korean)
    stored = korean.metadata.get(KEY, {}).get("english_source_sha256")
    if stored != source_hash(english):
        problems.append(f"the English {english_path.name} changed since the Korean lesson "
                        f"was last synced: translate the change, then run "
                        f"`python -m tools.korean_edition synced {korean_path.relative_to(ROOT)}`")
    return problems


def mark_synced(korean_path: Path) -> None:
    korean = nbformat.read(korean_path, as_version=4)
    english = nbformat.read(english_of(korean_path), as_version=4)
    problems = code_differences(english, korean)
    if problems:
        sys.exit(f"{korean_path.name} is not in step with the English:\n  " + "\n  ".join(problems))
    korean.metadata[KEY] = {"english": f"../{korean_path.name}",
                            "english_source_sha256": source_hash(english)}
    nbformat.write(korean, korean_path)
    print(f"{korean_path.relative_to(ROOT)}: synced with notebooks/{korean_path.name}")


def main(argv):
    if argv[:1] == ["synced"] and len(argv) > 1:
        for path in argv[1:]:
            mark_synced(Path(path).resolve())
        return 0
    if argv == ["check"]:
        failed = False
        for path in korean_lessons():
            for problem in sync_problems(path):
                failed = True
                print(f"{path.name}: {problem}")
        if not failed:
            print(f"{len(korean_lessons())} Korean lessons in step with the English")
        return int(failed)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
