"""Alt text for the lessons' pictures, written where the site and the decks read it.

    python -m tools.alt_text                       # every lesson, English and Korean
    python -m tools.alt_text notebooks/02_retain_graph.ipynb

myst-nb (the site) takes a picture's alt text from its cell's metadata,
`{"mystnb": {"image": {"alt": ...}}}`, and the decks and handouts read the same key
(tools/classroom/templates). For each cell with a picture (image/png or image/svg+xml)
this sets that key to, first found:

1. the `alt` that the picture's output stores: what `draw` and `overview` say their
   picture shows (GraphView.description), refreshed on every run of the lesson. The
   Korean edition gets it in Korean, translated sentence by sentence (KOREAN below); a
   sentence without a Korean form stops the tool, naming the cell;
2. the text written in AUTHORED below, for a picture the library did not draw (a
   matplotlib plot, torchviz's drawing), by lesson and cell id, in English and Korean;
3. what the cell's metadata says already (an author may write it by hand).

A picture left without alt text stops the tool with the cells to fix. Nothing is run:
the tool reads and writes the stored outputs' notebooks only. tools/run_notebooks.py
calls it after each run.
"""
import re
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
        "torchviz가 그린 그래프입니다. 잎 텐서 a (1, 4)가 AccumulateGrad, PowBackward0, "
        "MulBackward0으로 이어지고, MulBackward0에서 MeanBackward0(d)과 SumBackward0(e)으로 "
        "갈라집니다. 저장된 텐서는 보이지 않습니다."),
    ("03", "da7e02c2"): (
        "Line plot of the MSE loss (log scale) over 40 steps. With optimizer.zero_grad() "
        "every step the loss falls smoothly by about three orders of magnitude; without "
        "zero_grad(), .grad is a running sum: the loss falls to about 0.4 by step 3, then "
        "swings between about 1 and 5 below its starting 6.2 and never settles.",
        "40스텝 동안의 MSE 손실(로그 스케일) 그래프입니다. 매 스텝 optimizer.zero_grad()를 하면 "
        "손실이 약 천 분의 일로 매끄럽게 줄어듭니다. zero_grad()가 없으면 .grad가 누적 합계가 되어, "
        "손실이 스텝 3에서 약 0.4까지 떨어졌다가 처음 값 6.2보다 낮은 약 1에서 5 사이를 오가며 끝내 "
        "안정되지 않습니다."),
    ("03", "51f92a67"): (
        "Two memory timelines, bytes held above the level at entry over allocations and "
        "frees. Top, one batch of 4,096: one forward and one backward band, peak marked "
        "in the backward. Bottom, 4 micro-batches of 1,024: four forward and backward pairs, "
        "the first peaking at a quarter of the one batch's peak, the other three a little "
        "higher, at 28%, as they also hold the .grad the first made.",
        "메모리 타임라인 두 개입니다. 진입 시점보다 더 잡고 있는 바이트를 할당과 반환 순서로 "
        "보여 줍니다. 위는 4,096개짜리 배치 하나로, 순전파와 역전파가 한 번씩 있고 역전파에 "
        "최고점이 표시되어 있습니다. 아래는 1,024개짜리 마이크로 배치 4개로, 순전파와 역전파가 네 쌍 "
        "있습니다. 첫 쌍의 최고점은 배치 하나일 때 최고점의 4분의 1이고, 나머지 셋은 첫 쌍이 만든 "
        ".grad도 잡고 있어 조금 높은 28%입니다."),
    ("04", "3e4fdfdd"): (
        "Line plot of both task losses over 150 training steps, log scale. loss2 "
        "(classification, cross-entropy) starts higher and falls fast to far below; loss1 "
        "(regression, MSE) falls slowly and steadily, wavering at the end. Both fall: one "
        "backward pass of their sum trains both heads.",
        "150 학습 스텝 동안 두 태스크의 손실을 로그 스케일로 그린 그래프입니다. loss2(분류, 교차 "
        "엔트로피)는 더 높게 시작해 빠르게 훨씬 아래로 떨어지고, loss1(회귀, MSE)은 천천히 꾸준히 "
        "줄며 끝에서 조금 흔들립니다. 둘 다 줄어듭니다. 합에 대한 역전파 한 번이 두 헤드를 모두 "
        "학습시킵니다."),
    ("05", "l05-plot"): (
        "Two panels of saved-tensor memory in KiB. Left: against depth (0 to 8 hidden "
        "layers, width 64), a straight rising line. Right: against width (16 to 256 units, "
        "depth 3), also a straight rising line. A dashed line in both marks the constant "
        "part, x and the output: memory grows linearly in depth and in width above it.",
        "저장된 텐서의 메모리(KiB)를 보여 주는 두 도표입니다. 왼쪽은 깊이(은닉 계층 0~8개, 너비 "
        "64)에 따라, 오른쪽은 너비(16~256 유닛, 깊이 3)에 따라 곧게 오르는 직선입니다. 두 도표의 "
        "점선은 상수 부분(x와 출력)입니다. 메모리는 그 위로 깊이와 너비에 선형으로 늘어납니다."),
}

GENERIC = "No description has been provided for this image"  # what nbconvert writes

# The Korean edition's alt text for a picture the library drew: its description (English,
# src/autograd_lens/describe.py describe_graph and overview.py _description) translated
# sentence by sentence. Each sentence must match one pattern (the first that matches
# wins); `{name}` is the group as the library wrote it, turned into Korean by _korean_group,
# and `{name:이}` adds the particle that suits how the group's last word is read (이/가,
# 을/를, 과/와, 은/는). A sentence that no pattern matches stops the tool: the library
# says something new, and it needs its Korean form here.
KOREAN = [
    # describe_graph (draw)
    (r"Autograd graph of (?P<outputs>.+): (?P<n>\d+) nodes\.",
     "{outputs}의 autograd 그래프입니다. 노드는 {n}개입니다."),
    (r"Autograd graph of (?P<outputs>.+): (?P<n>\d+) nodes, (?P<m>\d+) of them (a leaf|leaves)\.",
     "{outputs}의 autograd 그래프입니다. 노드 {n}개 중 {m}개가 잎 텐서입니다."),
    (r"No node saved tensors\.", "텐서를 저장한 노드는 없습니다."),
    (r"(?P<kinds>.+) saved tensors, none freed yet\.",
     "{kinds:이} 저장한 텐서는 아직 해제되지 않았습니다."),
    (r"(?P<kinds>.+) saved tensors, and backward has freed them\.",
     "역전파가 {kinds:이} 저장한 텐서를 해제했습니다."),
    (r"(?P<kinds>.+) saved tensors, and backward has freed them all\.",
     "역전파가 {kinds:이} 저장한 텐서를 모두 해제했습니다."),
    (r"(?P<kinds>.+) saved tensors; (?P<freed>.+) (has|have) freed them\.",
     "{kinds:이} 텐서를 저장했고, 역전파가 그중 {freed:이} 저장한 텐서를 해제했습니다."),
    (r"(?P<n>\d+) saved tensors? modified in place\.",
     "저장된 텐서 {n}개는 제자리 연산으로 바뀌었습니다."),
    (r"(?P<n>\d+) saved tensors? packed by a hook\.",
     "저장된 텐서 {n}개는 pack 훅이 받아 보관하고 있습니다."),
    (r"(?P<n>\d+) saved tensors? not shown by this torch\.",
     "저장된 텐서 {n}개는 이 버전의 torch가 보여 주지 않습니다."),
    # overview's _description ("share nodes in" before draw's "share")
    (r"Overview of (?P<outputs>.+): (?P<n>\d+) nodes in (?P<m>\d+) box(es)?, one per block of "
     r"the model \((?P=m) of them\)\.",
     "{outputs}의 그래프를 모델의 블록마다 상자 하나로 그린 overview 그림입니다. 노드 {n}개가 "
     "상자 {m}개에 들어 있습니다."),
    (r"Overview of (?P<outputs>.+): (?P<n>\d+) nodes in (?P<m>\d+) box(es)?, one per block of "
     r"the model \((?P<boxes>.+)\)\.",
     "{outputs}의 그래프를 모델의 블록마다 상자 하나로 그린 overview 그림입니다. 노드 {n}개가 "
     "상자 {m}개에 들어 있습니다. 상자는 {boxes}입니다."),
    (r"(?P<n>\d+) nodes? saved tensors, keeping (?P<size>[\d.]+ [kM]?B) alive; none freed yet\.",
     "노드 {n}개가 텐서를 저장해 {size:을} 살려 두고 있습니다. 저장된 텐서는 아직 해제되지 "
     "않았습니다."),
    (r"(?P<n>\d+) nodes? saved tensors, keeping (?P<size>[\d.]+ [kM]?B) alive; (?P<m>\d+) "
     r"(has|have) freed them\.",
     "노드 {n}개가 텐서를 저장해 {size:을} 살려 두고 있습니다. 역전파가 그중 노드 {m}개가 "
     "저장한 텐서를 해제했습니다."),
    (r"The backward passes of (?P<outputs>.+) share nodes in (?P<boxes>.+)\.",
     "{outputs}의 역전파는 {boxes}의 노드를 함께 지나갑니다."),
    (r"The backward passes of (?P<outputs>.+) share (?P<kinds>.+)\.",
     "{outputs}의 역전파는 {kinds:을} 함께 지나갑니다."),
]
PARTICLES = {"이": "가", "을": "를", "과": "와", "은": "는"}  # after a consonant: after a vowel


def _ends_in_consonant(words: str) -> bool:
    """Whether `words` read in Korean end in a consonant (받침): Hangul by its last
    syllable, a number by its last digit (영, 일, 삼, 육, 칠, 팔; 10 is 십, 100 백),
    English by its sound (a letter alone by its name: 엘, 엠, 엔, 알). A name ending in
    brackets, "1-4 (4 alike)", is read before them."""
    words = re.sub(r"(?<=\S) \([^()]*\)$", "", words).rstrip(")")
    last = words[-1]
    if "가" <= last <= "힣":
        return (ord(last) - ord("가")) % 28 != 0
    if last.isdigit():
        return last in "013678"
    if len(words) == 1 or not words[-2].isalpha():  # a letter read by its name
        return last.lower() in "lmnr"
    return words.lower().endswith(("l", "m", "n", "ng"))  # ...Backward: 백워드, no 받침


class _Korean(str):
    """A group in Korean; `{group:이}` in a template adds the particle that suits it."""

    def __format__(self, particle):
        if particle in PARTICLES and not _ends_in_consonant(self):
            particle = PARTICLES[particle]
        return str(self) + particle


def _korean_list(items) -> str:
    """"a", "a와 b", "a, b와 c": the library's and_list in Korean."""
    *head, last = items
    return f"{_Korean(', '.join(head)):과} {last}" if head else last


def _korean_group(name: str, text: str) -> _Korean:
    """A group of a sentence in Korean: a list of names ("d and e" -> "d와 e"), of node
    kinds ("4 AddmmBackward0" -> "AddmmBackward0 4개", "12 nodes" -> "노드 12개") or of
    boxes ("3 boxes" -> "상자 3개"); names, numbers and sizes as they are."""
    if name in ("outputs", "kinds", "freed", "boxes"):
        head, _, last = text.rpartition(" and ")
        items = head.split(", ") + [last] if head else [text]
        counted = re.fullmatch(r"(\d+) (nodes|boxes)", text)
        if counted:
            text = f"{'노드' if counted[2] == 'nodes' else '상자'} {counted[1]}개"
        elif name in ("kinds", "freed"):
            text = _korean_list([re.sub(r"^(\d+) (\S+)$", r"\2 \1개", kind) for kind in items])
        else:
            text = _korean_list(items)
    return _Korean(text)


def korean(description: str) -> str:
    """The library's description of its picture, in Korean. ValueError, naming the
    sentence, for a sentence that KOREAN has no form for."""
    said = []
    for sentence in re.split(r"(?<=\.) (?=\S)", description.strip()):
        for pattern, template in KOREAN:
            match = re.fullmatch(pattern, sentence)
            if match:
                said.append(template.format_map({name: _korean_group(name, text) for name, text
                                                 in match.groupdict().items()}))
                break
        else:
            raise ValueError(f"the library's sentence {sentence!r} has no Korean form: add "
                             "one to KOREAN in tools/alt_text.py")
    return " ".join(said)


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
        stored = _stored_alt(cell)
        if stored and language:
            try:
                stored = korean(stored)
            except ValueError as error:
                raise ValueError(f"lesson {lesson} (Korean), cell {cell.get('id')}: "
                                 f"{error}") from None
        alt = stored or (authored[language] if authored else None) or cell_alt(cell)
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
        try:
            problems += fill_lesson(notebook, path)
        except ValueError as error:  # a description with no Korean form: nothing written
            print(f"{_shown(path)}: {error}", file=sys.stderr)
            return 1
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
