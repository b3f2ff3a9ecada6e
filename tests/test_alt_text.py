"""Every picture in the lessons says what it shows (issue 20): alt text in its cell's
metadata, where the site (myst-nb), the decks and the handouts read it."""
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools import alt_text  # noqa: E402
from autograd_lens import draw, overview  # noqa: E402
from autograd_lens.describe import describe_graph  # noqa: E402
from autograd_lens.graph import UNKNOWN  # noqa: E402
from test_korean_edition import glossary_rows  # noqa: E402

LESSONS = (sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))
           + sorted((ROOT / "notebooks" / "ko").glob("[0-9]*.ipynb")))
FILE_NAME = re.compile(r"^\S+\.(png|svg|jpe?g|gif)$", re.I)  # what Sphinx writes without alt


def _id(path: Path) -> str:
    return f"ko-{path.stem}" if path.parent.name == "ko" else path.stem


@pytest.mark.parametrize("lesson", LESSONS, ids=[_id(p) for p in LESSONS])
def test_every_picture_has_alt_text(lesson):
    notebook = nbformat.read(lesson, as_version=4)
    problems = []
    for cell in notebook.cells:
        if not alt_text.has_picture(cell):
            continue
        alt = (alt_text.cell_alt(cell) or "").strip()
        if not alt or FILE_NAME.match(alt) or alt == alt_text.GENERIC:
            problems.append(f"cell {cell.get('id')}: alt text {alt!r}")
    assert not problems, (f"{lesson.relative_to(ROOT)}: pictures without alt text (run "
                          "`python -m tools.alt_text`):\n" + "\n".join(problems))


def test_the_authored_texts_belong_to_pictures_that_exist():
    """A plot moved to another cell, or gone, leaves its text behind: say so."""
    pictures = set()
    for lesson in LESSONS:
        for cell in nbformat.read(lesson, as_version=4).cells:
            if alt_text.has_picture(cell):
                pictures.add((lesson.name[:2], cell.get("id")))
    assert set(alt_text.AUTHORED) <= pictures, set(alt_text.AUTHORED) - pictures
    for english, korean in alt_text.AUTHORED.values():
        assert english.isascii() and re.search("[\uac00-\ud7a3]", korean)


def _picture_cell(cell_id, output_alt=None, cell_alt=None):
    output = nbformat.v4.new_output("display_data", data={"image/svg+xml": "<svg/>",
                                                          "text/plain": "a graph"})
    if output_alt:
        output.metadata = {"image/svg+xml": {"alt": output_alt}}
    cell = nbformat.v4.new_code_cell("draw(y)", id=cell_id, outputs=[output])
    if cell_alt:
        cell.metadata["mystnb"] = {"image": {"alt": cell_alt}}
    return cell


def test_fill_prefers_what_the_picture_stores_then_the_table_then_the_cell(monkeypatch):
    monkeypatch.setitem(alt_text.AUTHORED, ("09", "plot"), ("A rising line.", "오르는 선."))
    notebook = nbformat.v4.new_notebook(cells=[
        _picture_cell("graph", output_alt="Autograd graph of y: 2 nodes, 1 of them a leaf. "
                      "No node saved tensors.", cell_alt="stale"),
        _picture_cell("plot", cell_alt="stale"),
        _picture_cell("by-hand", cell_alt="Written by the author."),
        _picture_cell("nothing"),
        nbformat.v4.new_code_cell("print(1)", id="no-picture"),
    ])
    assert alt_text.fill(notebook, "09", language=1) == ["nothing"]
    said = {cell.id: alt_text.cell_alt(cell) for cell in notebook.cells}
    assert said == {"graph": "y의 autograd 그래프입니다. 노드 2개 중 1개가 잎 텐서입니다. "
                             "텐서를 저장한 노드는 없습니다.", "plot": "오르는 선.",
                    "by-hand": "Written by the author.", "nothing": None, "no-picture": None}


def test_the_command_names_the_cells_to_fix(tmp_path, capsys):
    path = tmp_path / "09_lesson.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[_picture_cell("nothing")]), path)
    assert alt_text.main([path]) == 1
    assert "cell nothing has a picture and no alt text" in capsys.readouterr().err


def test_the_authored_texts_are_for_pictures_the_library_did_not_draw():
    """A picture that draw or overview describes gets its Korean from KOREAN, from what the
    picture stores: a text in AUTHORED for it would never be read, and would go stale."""
    for lesson, cell_id in alt_text.AUTHORED:
        for path in [p for p in LESSONS if p.name.startswith(lesson + "_")]:
            cell = next(c for c in nbformat.read(path, as_version=4).cells
                        if c.get("id") == cell_id)
            assert alt_text._stored_alt(cell) is None, (path.name, cell_id)


# --- The Korean edition: the library's descriptions in Korean (alt_text.KOREAN) ------------

def _leaf():
    return torch.ones(3, requires_grad=True)


def _shared(backward):
    a = _leaf()
    c = a.exp()
    d, e = (c * c).sum(), c.sin().sum()
    if backward:
        d.backward()
    return draw(d, e, params={"a": a, "d": d, "e": e}).description


def _all_freed(one_node):
    a = _leaf()
    y = a.exp().sum() if one_node else (a.exp() * a.exp()).sum()
    y.backward()
    return draw(y, params={"a": a, "y": y}).description


def _seven_kinds(backward):
    a = _leaf()
    c = a.exp().sin().cos().tanh().sigmoid().log().relu()
    p, q = c.sum(), (c * c).sum()
    if backward:
        p.backward()
    return draw(p, q, params={"a": a, "p": p, "q": q}).description


def _other_states():
    a = _leaf()
    y = a.exp()
    y.add_(1)  # ExpBackward0 saved its result: modified in place
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = (y * a.sin()).sum()
    return draw(z, params={"a": a, "z": z}).description


def _no_saved():
    a = _leaf()
    y = (a + 1).sum()
    return draw(y, params={"a": a, "y": y}).description


def _unseen_and_no_leaf():
    """What this torch shows of every graph here: a node whose saved tensors it hides,
    and a graph without leaves, as describe_graph words them."""
    node = SimpleNamespace(name="MyFunctionBackward", is_leaf=False, freed=False,
                           saved=[SimpleNamespace(lost=UNKNOWN)] * 2, reached_by=["y"])
    return describe_graph(SimpleNamespace(nodes=[node], outputs=[("y", None, 0)]))


class _TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk, self.head1, self.head2 = (torch.nn.Linear(4, n) for n in (4, 1, 1))


def _overview_two_heads(backward):
    torch.manual_seed(0)
    net = _TwoHeads()
    h = net.trunk(torch.randn(2, 4)).relu()
    loss1, loss2 = net.head1(h).sum(), net.head2(h).sum()
    if backward:
        loss1.backward()
    return overview(loss1, loss2, params=net).description


def _overview_seven_boxes():
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(8 + i, 9 + i) for i in range(7)])
    out = model(torch.randn(4, 8))
    return overview(out.sum(), out.pow(2).sum(), params=model).description


def _overview_no_saved():
    bias = torch.nn.Linear(1, 3).bias
    return overview((torch.ones(3) + bias).sum(), params={"bias": bias}).description


KOREAN_CASES = {  # the library's description of a small graph -> its Korean
    "none freed, shared": (lambda: _shared(False),
        "d와 e의 autograd 그래프입니다. 노드 6개 중 1개가 잎 텐서입니다. MulBackward0, "
        "ExpBackward0과 SinBackward0이 저장한 텐서는 아직 해제되지 않았습니다. d와 e의 역전파는 "
        "ExpBackward0을 함께 지나갑니다."),
    "some freed": (lambda: _shared(True),
        "d와 e의 autograd 그래프입니다. 노드 6개 중 1개가 잎 텐서입니다. MulBackward0, "
        "ExpBackward0과 SinBackward0이 텐서를 저장했고, 역전파가 그중 MulBackward0과 "
        "ExpBackward0이 저장한 텐서를 해제했습니다. d와 e의 역전파는 ExpBackward0을 함께 "
        "지나갑니다."),
    "all freed, one node": (lambda: _all_freed(True),
        "y의 autograd 그래프입니다. 노드 3개 중 1개가 잎 텐서입니다. 역전파가 ExpBackward0이 "
        "저장한 텐서를 해제했습니다."),
    "all freed": (lambda: _all_freed(False),
        "y의 autograd 그래프입니다. 노드 5개 중 1개가 잎 텐서입니다. 역전파가 MulBackward0과 "
        "ExpBackward0 2개가 저장한 텐서를 모두 해제했습니다."),
    "more than 6 kinds": (lambda: _seven_kinds(False),
        "p와 q의 autograd 그래프입니다. 노드 11개 중 1개가 잎 텐서입니다. 노드 8개가 저장한 "
        "텐서는 아직 해제되지 않았습니다. p와 q의 역전파는 노드 7개를 함께 지나갑니다."),
    "more than 6 kinds, some freed": (lambda: _seven_kinds(True),
        "p와 q의 autograd 그래프입니다. 노드 11개 중 1개가 잎 텐서입니다. 노드 8개가 텐서를 "
        "저장했고, 역전파가 그중 노드 7개가 저장한 텐서를 해제했습니다. p와 q의 역전파는 노드 "
        "7개를 함께 지나갑니다."),
    "modified, packed": (_other_states,
        "z의 autograd 그래프입니다. 노드 6개 중 1개가 잎 텐서입니다. MulBackward0, "
        "ExpBackward0과 SinBackward0이 저장한 텐서는 아직 해제되지 않았습니다. 저장된 텐서 "
        "3개는 pack 훅이 받아 보관하고 있습니다. 저장된 텐서 1개는 제자리 연산으로 "
        "바뀌었습니다."),
    "no saved tensors": (_no_saved,
        "y의 autograd 그래프입니다. 노드 3개 중 1개가 잎 텐서입니다. 텐서를 저장한 노드는 "
        "없습니다."),
    "unseen, no leaf": (_unseen_and_no_leaf,
        "y의 autograd 그래프입니다. 노드는 1개입니다. MyFunctionBackward가 저장한 텐서는 아직 "
        "해제되지 않았습니다. 저장된 텐서 2개는 이 버전의 torch가 보여 주지 않습니다."),
    "overview": (lambda: _overview_two_heads(False),
        "output 0과 output 1의 그래프를 모델의 블록마다 상자 하나로 그린 overview "
        "그림입니다. 노드 15개가 상자 3개에 들어 있습니다. 상자는 trunk, head1과 head2입니다. "
        "노드 4개가 텐서를 저장해 64 B를 살려 두고 있습니다. 저장된 텐서는 아직 해제되지 "
        "않았습니다. output 0과 output 1의 역전파는 trunk의 노드를 함께 지나갑니다."),
    "overview, some freed": (lambda: _overview_two_heads(True),
        "output 0과 output 1의 그래프를 모델의 블록마다 상자 하나로 그린 overview "
        "그림입니다. 노드 15개가 상자 3개에 들어 있습니다. 상자는 trunk, head1과 head2입니다. "
        "노드 4개가 텐서를 저장해 32 B를 살려 두고 있습니다. 역전파가 그중 노드 3개가 저장한 "
        "텐서를 해제했습니다. output 0과 output 1의 역전파는 trunk의 노드를 함께 "
        "지나갑니다."),
    "overview, more than 6 boxes": (_overview_seven_boxes,
        "output 0과 output 1의 그래프를 모델의 블록마다 상자 하나로 그린 overview "
        "그림입니다. 노드 31개가 상자 7개에 들어 있습니다. 노드 8개가 텐서를 저장해 1.5 kB를 "
        "살려 두고 있습니다. 저장된 텐서는 아직 해제되지 않았습니다. output 0과 output 1의 "
        "역전파는 상자 7개의 노드를 함께 지나갑니다."),
    "overview, one box, no saved tensors": (_overview_no_saved,
        "output 0의 그래프를 모델의 블록마다 상자 하나로 그린 overview 그림입니다. 노드 "
        "3개가 상자 1개에 들어 있습니다. 상자는 (top level)입니다. 텐서를 저장한 노드는 "
        "없습니다."),
}


@pytest.mark.parametrize("case", KOREAN_CASES)
def test_the_library_descriptions_in_korean(case):
    describe, expected = KOREAN_CASES[case]
    assert alt_text.korean(describe()) == expected


def _template(sentence):
    return next(p for p, _ in alt_text.KOREAN if re.fullmatch(p, sentence))


def test_every_korean_form_is_one_the_library_writes():
    """Each pattern of KOREAN matched by what draw or overview said above: none is dead."""
    used = {_template(sentence) for describe, _ in KOREAN_CASES.values()
            for sentence in re.split(r"(?<=\.) ", describe())}
    assert used == {pattern for pattern, _ in alt_text.KOREAN}


def test_the_korean_follows_the_glossary():
    """No colon, no word the glossary rules out, and 은/이/을/과 after a node name
    (…Backward0 read 백워드 영)."""
    texts = [expected for _, expected in KOREAN_CASES.values()]
    ruled_out = [word for _, _, avoid, _ in glossary_rows() for word in avoid]
    for text in texts:
        assert ":" not in text and not [w for w in ruled_out if w in text], text
        assert not re.search(r"Backward\d(는|가|를|와|로)(?![가-힣])", text), text


@pytest.mark.parametrize("words,consonant", [
    ("MulBackward0", True), ("AddmmBackward0 4개", False), ("노드 12개", False), ("d", False),
    ("loss1", True), ("loss2", False), ("MyFunctionBackward", False), ("64 B", False),
    ("1-4 (4 alike)", False), ("(top level)", True), ("m", True), ("MyModel (compiled)", True)])
def test_the_particle_follows_how_the_word_is_read(words, consonant):
    assert alt_text._ends_in_consonant(words) is consonant


def test_a_sentence_without_a_korean_form_stops_the_tool(tmp_path, capsys):
    new = "Autograd graph of y: 3 nodes, 1 of them a leaf. Some new sentence here."
    with pytest.raises(ValueError, match="'Some new sentence here.' has no Korean form"):
        alt_text.korean(new)
    path = tmp_path / "ko" / "09_lesson.ipynb"
    path.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[_picture_cell("g1", output_alt=new)]), path)
    before = path.read_text()
    assert alt_text.main([path]) == 1
    assert "lesson 09 (Korean), cell g1: the library's sentence" in capsys.readouterr().err
    assert path.read_text() == before  # nothing left in English


@pytest.mark.parametrize("lesson", [p for p in LESSONS if p.parent.name == "ko"],
                         ids=[_id(p) for p in LESSONS if p.parent.name == "ko"])
def test_the_korean_lessons_say_the_library_pictures_in_korean(lesson):
    """What `python -m tools.alt_text` writes: each picture draw or overview made has its
    description in Korean, up to date with what the picture stores."""
    notebook = nbformat.read(lesson, as_version=4)
    stale = [(cell.get("id"), alt_text.cell_alt(cell)) for cell in notebook.cells
             if alt_text.has_picture(cell) and alt_text._stored_alt(cell)
             and alt_text.cell_alt(cell) != alt_text.korean(alt_text._stored_alt(cell))]
    assert not stale, (f"{lesson.relative_to(ROOT)}: run `python -m tools.alt_text`; "
                       f"English or stale alt text in {stale}")
