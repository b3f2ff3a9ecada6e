"""draw(): deterministic DOT, freed buffers marked, SVG in Jupyter, text summary, saving."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torchviz import make_dot

from autograd_lens import draw
from graphs import ALL, seed_graph, two_heads
from lookalikes import gpt2_loss

HERE = Path(__file__).resolve().parent


def seed_view(**kwargs):
    (d, e), (a,) = seed_graph()
    return draw(d, e, params=dict(a=a, d=d, e=e), **kwargs)


def test_same_source_in_one_process():
    assert seed_view().source == seed_view().source


def test_same_source_in_every_process():
    script = ("import sys; sys.path.insert(0, %r); import test_draw; "
              "sys.stdout.write(test_draw.seed_view().source)" % str(HERE))
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1] == seed_view().source


def test_no_ids_in_source():
    (d, e), (a,) = seed_graph()
    source = draw(d, e).source
    for tensor_or_node in (a, d, e, d.grad_fn, e.grad_fn):
        assert str(id(tensor_or_node)) not in source


def test_summary_of_the_seed_graph():
    assert repr(seed_view()) == "\n".join([
        "autograd graph of d (), e (): 5 nodes, 2 that saved tensors, 0 that freed them",
        "  MeanBackward0  saves no tensors -> d",
        "  MulBackward0   saved other () [shared by d, e]",
        "  PowBackward0   saved self = a (1, 4) [shared by d, e]",
        "  a              leaf (1, 4) [shared by d, e]",
        "  SumBackward0   saves no tensors -> e",
    ])


def test_freed_nodes_are_marked_with_a_legend():
    (d, e), (a,) = seed_graph()
    before = draw(d, e, params=dict(a=a, d=d, e=e))
    d.backward()
    after = draw(d, e, params=dict(a=a, d=d, e=e))
    assert "0 that freed them" in repr(before) and "2 that freed them" in repr(after)
    assert "freed" not in before.source.replace("were freed", "")
    assert after.source.count("color=red") == 3  # two freed nodes and their legend entry
    assert "saved tensor, freed" in after.source
    assert "cluster_legend" in after.source


def test_torchviz_raises_on_freed_buffers_but_draw_does_not():
    (d, e), _ = seed_graph()
    d.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        make_dot(d, show_saved=True)
    draw(d, e, show_saved=True).svg()


def test_show_saved_false_leaves_out_saved_tensor_boxes():
    assert "_saved" in seed_view().source
    assert "_saved" not in seed_view(show_saved=False).source


def test_nodes_shared_by_two_losses_are_marked():
    (loss1, loss2), _ = two_heads()
    view = draw(loss1, loss2)
    assert "thistle" in view.source
    assert "shared by output 0, output 1" in repr(view)
    assert "thistle" not in draw(loss1).source


@pytest.mark.parametrize("build", ALL)
def test_draws_before_and_after_backward(build):
    outputs, _ = build()
    assert "<svg" in draw(*outputs).svg()
    torch.autograd.backward(list(outputs))
    view = draw(*outputs)
    assert "<svg" in view.svg() and not repr(view).splitlines()[0].endswith(" 0 that freed them")


def test_jupyter_gets_svg_and_the_summary():
    bundle, metadata = seed_view()._repr_mimebundle_()
    assert bundle["text/plain"] == repr(seed_view())
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert metadata == {"image/svg+xml": {"alt": seed_view().description}}


def test_the_description_says_what_the_picture_shows():
    (d, e), (a,) = seed_graph()
    names = dict(a=a, d=d, e=e)
    assert draw(d, e, params=names).description == (
        "Autograd graph of d and e: 5 nodes, 1 of them a leaf. MulBackward0 and PowBackward0 "
        "saved tensors, none freed yet. The backward passes of d and e share MulBackward0 "
        "and PowBackward0.")
    d.backward()
    assert draw(d, e, params=names).description == (
        "Autograd graph of d and e: 5 nodes, 1 of them a leaf. MulBackward0 and PowBackward0 "
        "saved tensors, and backward has freed them all. The backward passes of d and e "
        "share MulBackward0 and PowBackward0.")


def test_the_description_names_what_was_freed_and_what_was_not():
    (loss1, loss2), params = two_heads()
    loss1.backward()  # frees the trunk's and head 1's saved tensors; head 2's stay
    assert draw(loss1, loss2, params=dict(loss1=loss1, loss2=loss2)).description == (
        "Autograd graph of loss1 and loss2: 17 nodes, 6 of them leaves. PowBackward0, "
        "3 AddmmBackward0, ReluBackward0, NllLossBackward0 and LogSoftmaxBackward0 saved "
        "tensors; PowBackward0, 2 AddmmBackward0 and ReluBackward0 have freed them. The "
        "backward passes of loss1 and loss2 share ReluBackward0, AddmmBackward0 and "
        "TBackward0.")


def test_the_svg_carries_the_description_as_its_label():
    view = seed_view()
    root = view.svg().split("<svg", 1)[1].split(">", 1)[0]
    assert 'role="img"' in root and f'aria-label="{view.description}"' in root


def test_without_graphviz_shows_dot_source_and_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere on PATH
    view = seed_view()
    bundle, metadata = view._repr_mimebundle_()
    assert set(bundle) == {"text/plain"} and metadata == {}
    assert "install Graphviz" in bundle["text/plain"] and view.source in bundle["text/plain"]
    with pytest.raises(RuntimeError, match="save as .dot"):
        view.save(tmp_path / "graph.png")
    assert view.save(tmp_path / "graph.dot").read_text() == view.source


@pytest.mark.parametrize("suffix, start", [(".svg", b"<?xml"), (".png", b"\x89PNG"),
                                           (".dot", b"digraph")])
def test_save_by_extension(tmp_path, suffix, start):
    path = seed_view().save(tmp_path / f"graph{suffix}")
    assert path.read_bytes().startswith(start)


def test_a_saved_tensor_modified_in_place_is_drawn_not_raised():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    loss = model(torch.randn(5, 3)).pow(2).sum()  # the last layer saves W.t() for the ReLU
    loss.backward(retain_graph=True)
    with torch.no_grad():
        model[2].weight.add_(1.0)
    view = draw(loss)
    assert "mat2 modified in place" in repr(view)
    assert "modified in place:" in view.source  # the legend entry
    assert "<svg" in view.svg()


def test_tensors_packed_by_a_hook_are_drawn_as_such_and_never_unpacked():
    unpacked = []
    x = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: unpacked.append(t) or t):
        y = x.exp().sum()
    view = draw(y)
    assert "ExpBackward0  saved result packed by a hook as (3) tensor" in repr(view)
    assert "1 hold tensors packed by a hook" in repr(view).splitlines()[0]
    assert "saved tensor packed by a hook" in view.source and "<svg" in view.svg()
    assert unpacked == []
    assert "packed" not in seed_view().source and "packed" not in repr(seed_view())


def test_a_long_summary_is_cut_in_its_repr():
    # A GPT-2-sized graph: its summary is 480 lines; a terminal gets the first 30 nodes.
    loss, model = gpt2_loss()
    view = draw(loss, params=model)
    lines = repr(view).splitlines()
    assert len(view.summary.splitlines()) == 1 + 479
    assert len(lines) == 1 + 30 + 1
    assert lines[0] == view.summary.splitlines()[0]
    assert lines[1:31] == view.summary.splitlines()[1:31]
    assert lines[-1] == "  ... 449 more nodes left out: print(draw(...).summary) shows all 479"
    assert view._repr_mimebundle_()[0]["text/plain"] == repr(view)
    assert repr(seed_view()) == seed_view().summary  # a short one is shown whole
