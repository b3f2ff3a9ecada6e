"""Alt text for the lessons' pictures, written where the site and the decks read it.

    python -m tools.alt_text                       # every lesson, English and Korean
    python -m tools.alt_text notebooks/02_retain_graph.ipynb

myst-nb (the site) takes a picture's alt text from its cell's metadata,
`{"mystnb": {"image": {"alt": ...}}}`, and the decks and handouts read the same key
(tools/classroom/templates). For each cell with a picture (image/png or image/svg+xml)
this sets that key to, first found:

1. the `alt` that the picture's output stores: what `draw` and `overview` say their
   picture shows (GraphView.description), refreshed on every run of the lesson;
2. the text written in AUTHORED below, for a picture the library did not draw (a
   matplotlib plot, torchviz's drawing), by lesson and cell id, in English and Korean;
3. what the cell's metadata says already (an author may write it by hand).

A picture left without alt text stops the tool with the cells to fix. Nothing is run:
the tool reads and writes the stored outputs' notebooks only. tools/run_notebooks.py
calls it after each run.
"""
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
PICTURES = ("image/svg+xml", "image/png")

# (lesson number, cell id) -> (English, Korean): what the plot shows, written after
# looking at it. Numbers that a re-run may change are left out.
AUTHORED = {
    ("01", "a083c4b1"): (
        "torchviz's drawing of the graph: leaf a (1, 4) feeds AccumulateGrad, then "
        "PowBackward0, then MulBackward0, which branches to MeanBackward0 giving d and to "
        "SumBackward0 giving e. It shows no saved tensors.",
        "torchviz가 그린 그래프: 잎 텐서 a (1, 4)가 AccumulateGrad, PowBackward0, MulBackward0으로 "
        "이어지고, MulBackward0에서 MeanBackward0(d)와 SumBackward0(e)로 갈라진다. 저장된 "
        "텐서는 보이지 않는다."),
    ("03", "da7e02c2"): (
        "Line plot of the MSE loss (log scale) over 40 steps. With optimizer.zero_grad() "
        "every step the loss falls smoothly by about three orders of magnitude; without "
        "zero_grad(), .grad is a running sum: the loss falls to about 0.4 by step 3, then "
        "swings between about 1 and 5 below its starting 6.2 and never settles.",
        "40스텝 동안의 MSE 손실(로그 눈금) 그래프. 매 스텝 optimizer.zero_grad()를 하면 손실이 "
        "약 천 분의 일로 매끄럽게 줄고, zero_grad()가 없으면 .grad가 누적 합이 되어 손실이 스텝 3에서 "
        "약 0.4까지 떨어졌다가, 처음 값 6.2보다 낮은 약 1에서 5 사이를 오가며 자리 잡지 못한다."),
    ("03", "51f92a67"): (
        "Two memory timelines, bytes held above the level at entry over allocations and "
        "frees. Top, one batch of 4,096: one forward and one backward band, peak marked "
        "in the backward. Bottom, 4 micro-batches of 1,024: four forward and backward pairs, "
        "the first peaking at a quarter of the one batch's peak, the other three a little "
        "higher, at 28%, as they also hold the .grad the first made.",
        "메모리 타임라인 두 개: 진입 시점보다 더 잡고 있는 바이트를 할당과 반환 순서로 보인다. "
        "위는 4,096개짜리 배치 하나: 순전파 하나와 역전파 하나, 역전파에 최고점 표시. 아래는 "
        "1,024개짜리 마이크로 배치 4개: 순전파와 역전파 네 쌍. 첫 쌍의 최고점은 배치 하나일 때 "
        "최고점의 4분의 1이고, 나머지 셋은 첫 쌍이 만든 .grad도 잡고 있어 조금 높은 28%이다."),
    ("04", "3e4fdfdd"): (
        "Line plot of both task losses over 150 training steps, log scale. loss2 "
        "(classification, cross-entropy) starts higher and falls fast to far below; loss1 "
        "(regression, MSE) falls slowly and steadily, wavering at the end. Both fall: one "
        "backward pass of their sum trains both heads.",
        "150 학습 스텝 동안 두 태스크의 손실(로그 눈금). loss2(분류, 교차 엔트로피)는 더 높게 "
        "시작해 빠르게 훨씬 아래로 떨어지고, loss1(회귀, MSE)은 천천히 꾸준히 줄며 끝에서 조금 "
        "흔들린다. 둘 다 줄어든다. 합에 대한 역전파 한 번이 두 헤드를 모두 학습시킨다."),
    ("05", "l05-plot"): (
        "Two panels of saved-tensor memory in KiB. Left: against depth (0 to 8 hidden "
        "layers, width 64), a straight rising line. Right: against width (16 to 256 units, "
        "depth 3), also a straight rising line. A dashed line in both marks the constant "
        "part, x and the output: memory grows linearly in depth and in width above it.",
        "저장된 텐서의 메모리(KiB)를 보이는 두 도표. 왼쪽은 깊이(은닉 계층 0~8개, 너비 64)에 "
        "따라, 오른쪽은 너비(16~256 유닛, 깊이 3)에 따라 곧게 오르는 직선이다. 두 도표의 "
        "점선은 상수 부분(x와 출력)이다. 메모리는 그 위로 깊이와 너비에 선형으로 늘어난다."),
}

GENERIC = "No description has been provided for this image"  # what nbconvert writes


def _language(path: Path) -> int:
    """0 for English, 1 for the Korean edition (notebooks/ko): the index into AUTHORED."""
    return 1 if path.parent.name == "ko" else 0


def _stored_alt(cell) -> str | None:
    """The alt text that the cell's picture outputs store (draw's, overview's)."""
    found = [output.get("metadata", {}).get(mime, {}).get("alt")
             for output in cell.get("outputs", []) for mime in PICTURES
             if mime in output.get("data", {})]
    found = [alt for alt in found if alt]
    return " ".join(dict.fromkeys(found)) or None  # a graph shown twice is said once


def has_picture(cell) -> bool:
    return any(mime in output.get("data", {}) for output in cell.get("outputs", [])
               for mime in PICTURES)


def cell_alt(cell) -> str | None:
    return cell.metadata.get("mystnb", {}).get("image", {}).get("alt")


def fill(notebook, lesson: str, language: int) -> list[str]:
    """Set each picture cell's alt text; return the ids of the cells left without any."""
    missing = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or not has_picture(cell):
            continue
        authored = AUTHORED.get((lesson, cell.get("id")))
        alt = _stored_alt(cell) or (authored[language] if authored else None) or cell_alt(cell)
        if not alt:
            missing.append(cell.get("id"))
            continue
        cell.metadata.setdefault("mystnb", {}).setdefault("image", {})["alt"] = alt
    return missing


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def fill_lesson(notebook, path: Path) -> list[str]:
    """fill() for the lesson stored at `path` (its number and language from the path);
    the problems, one line per picture left without alt text."""
    missing = fill(notebook, path.name[:2], _language(path))
    return [f"{_shown(path)}: cell {cell_id} has a picture and no alt text" for cell_id in missing]


HOW_TO_FIX = ("Re-run the lesson (python tools/run_notebooks.py PATH) if draw or overview "
              "made the picture; else add its text to AUTHORED in tools/alt_text.py.")


def main(paths) -> int:
    problems = []
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        before = nbformat.writes(notebook)
        problems += fill_lesson(notebook, path)
        if nbformat.writes(notebook) != before:
            nbformat.write(notebook, path)
            print(f"alt text written: {_shown(path)}")
    if problems:
        print("\n".join(problems + [HOW_TO_FIX]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main([Path(p).resolve() for p in sys.argv[1:]] or (
        sorted(NOTEBOOKS.glob("[0-9]*.ipynb")) + sorted((NOTEBOOKS / "ko").glob("[0-9]*.ipynb")))))
