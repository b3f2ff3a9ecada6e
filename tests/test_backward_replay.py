"""backward_replay: one frame per node the backward pass ran, in the order it ran them,
with what each let go and the bytes held after it; the picture it shows; its errors."""
import re

import pytest
import torch
from torch import nn

from autograd_lens import backward_replay, saved_tensors
from autograd_lens.graph import walk

from graphs import seed_graph


def mlp(depth=3, width=32, seed=0):
    torch.manual_seed(seed)
    layers = [nn.Linear(16, width), nn.Tanh()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(width, 4))
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    return model, nn.functional.cross_entropy(model(x), y)


def test_a_frame_per_node_run_and_every_saved_tensor_let_go_by_the_last():
    model, loss = mlp()
    nodes = walk([loss]).nodes
    saved_before = len(saved_tensors(loss))
    replay = backward_replay(loss, params=dict(model.named_parameters()))
    assert len(replay.frames) == 1 + len(nodes)  # frame 0: before; then one per node
    assert [f.step for f in replay.frames] == list(range(len(nodes) + 1))
    assert sorted(f.node_index for f in replay.frames[1:]) == [n.index for n in nodes]
    assert replay.frames[1].node == "NllLossBackward0"  # the engine starts at the loss
    assert sum(len(f.freed) for f in replay.frames) == saved_before
    assert all(row.freed for row in saved_tensors(loss))  # ... and autograd agrees


def test_nodes_run_after_the_nodes_that_feed_them_gradients():
    _, loss = mlp(depth=2)
    nodes = walk([loss]).nodes
    replay = backward_replay(loss)
    position = {f.node_index: f.step for f in replay.frames[1:]}
    for node in nodes:  # a node's inputs (next_functions) run after it
        assert all(position[node.index] < position[i] for i in node.inputs), node.name


def test_with_retain_graph_nothing_is_let_go_and_the_gradients_are_backward_s():
    model, loss = mlp(seed=3)
    replay = backward_replay(loss, retain_graph=True)
    assert all(f.freed == () for f in replay.frames)
    assert not any(row.freed for row in saved_tensors(loss))
    twin, twin_loss = mlp(seed=3)
    twin_loss.backward()
    for (name, p), (_, q) in zip(model.named_parameters(), twin.named_parameters()):
        assert torch.equal(p.grad, q.grad), name


def test_the_level_follows_the_saved_tensors_memory_going():
    """x.exp() saves its result (4,000 bytes), held by nothing but the graph: it goes when
    ExpBackward0 runs, and x.grad (4,000 bytes) comes; the root's 4-byte gradient goes at
    the end: nothing more is held than before."""
    x = torch.randn(1000, requires_grad=True)
    loss = x.exp().sum()
    replay = backward_replay(loss, params={"x": x})
    steps = {f.node: f for f in replay.frames[1:]}
    assert list(steps) == ["SumBackward0", "ExpBackward0", "x"]
    assert steps["ExpBackward0"].freed == ("result (1000)",)
    # After ExpBackward0: the result is gone, and the gradient it made for x (4,000 bytes)
    # is held: at most the root's 4-byte gradient and the sum's expanded view besides.
    assert steps["ExpBackward0"].level - steps["SumBackward0"].level <= 4004
    assert replay.frames[-1].level == 0  # x.grad in, the result out
    assert x.grad is not None


def test_a_saved_tensor_someone_else_holds_is_let_go_but_not_freed():
    x = torch.randn(1000, requires_grad=True)
    h = x.exp()                           # we keep h: its memory stays
    replay = backward_replay(h.sum())
    exp = next(f for f in replay.frames if f.node == "ExpBackward0")
    assert exp.freed == ("result (1000)",)
    assert replay.frames[-1].level >= 4000  # x.grad came, h's 4,000 bytes did not go
    del h


def test_the_seed_graph_replays_in_order():
    (d, e), (a,) = seed_graph()
    replay = backward_replay(d, e, params={"a": a})
    assert {f.node for f in replay.frames[1:]} == {"MeanBackward0", "SumBackward0",
                                                   "MulBackward0", "PowBackward0", "a"}
    assert replay.frames[-1].node == "a"
    assert torch.allclose(a.grad, 4 * a / 4 + 4 * a)  # both outputs' gradients, once each
    # the caption names the leaf's node, not the leaf: a tensor does not run
    assert replay.frames[-1].caption == f"Step {len(replay.frames) - 1}: a's AccumulateGrad ran."
    assert replay.frames[1].caption.startswith("Step 1: ") and "AccumulateGrad" not in replay.frames[1].caption


def test_bad_input_says_what_to_do():
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(ValueError, match="one element per output"):
        backward_replay(x * 2)
    loss = (x * 2).sum()
    loss.backward()
    with pytest.raises(ValueError, match="Replay a fresh forward pass"):
        backward_replay(loss)
    with pytest.raises(ValueError, match="no grad_fn"):
        backward_replay(torch.ones(1))


# --- the picture ------------------------------------------------------------------------

def test_the_picture_is_one_self_contained_fragment():
    model, loss = mlp(depth=6, width=16)  # 30 nodes and more
    replay = backward_replay(loss, params=dict(model.named_parameters()))
    assert len(replay.frames) - 1 >= 30
    page = replay.html()
    assert len(page.encode()) < 500_000
    assert "<script" not in page and not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    radios = re.findall(r'<input type="radio" name="([^"]+)" id="([^"]+)"', page)
    assert len(radios) == len(replay.frames) and len({name for name, _ in radios}) == 1
    for frame in replay.frames:
        assert f'class="alr-cap alr-cap-{frame.step}"' in page
        assert f'class="alr-mark alr-mark-{frame.step}"' in page
    for frame in replay.frames[1:]:
        assert f"g-n{frame.node_index}" in page  # its node can be styled
    assert ' id="node' not in page  # Graphviz's ids dropped: the page may show it twice


def test_two_pictures_on_one_page_do_not_share_buttons():
    first = backward_replay(torch.ones(2, requires_grad=True).exp().sum()).html()
    second = backward_replay(torch.ones(2, requires_grad=True).exp().sum()).html()
    name = re.compile(r'<input type="radio" name="([^"]+)"')
    assert name.search(first)[1] != name.search(second)[1]


def test_the_text_form_lists_the_steps():
    x = torch.randn(10, requires_grad=True)
    text = repr(backward_replay(x.tanh().sum(), params={"x": x}))
    assert text.startswith("backward_replay ran backward() once: 3 nodes ran")
    assert re.search(r"\n\s+2\s+TanhBackward0\s+\S+ \S+ (above|below)\s+result \(10\)", text), text


def test_a_steps_temporary_buffers_are_measured_from_the_same_level():
    """Inside a step the level is counted as after one: less the saved tensors' memory
    let go in earlier steps (x * 3 then sin then exp: each 1 MB)."""
    x = torch.randn(250_000, requires_grad=True)
    replay = backward_replay((x * 3).sin().exp().sum(), params={"x": x})
    megabyte = 1_000_000
    # two 1 MB gradients at once, and the 4-byte 1 the pass starts from
    assert max(frame.inside for frame in replay.frames) == 2 * megabyte + 4
    assert all(frame.inside >= frame.level for frame in replay.frames)
    assert "during a step: at most 2 MB (SinBackward0)" in repr(replay)
    assert "While it ran: up to 2 MB above." in replay.html()


def test_without_graphviz_it_shows_the_text_and_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere on PATH
    x = torch.randn(10, requires_grad=True)
    replay = backward_replay(x.exp().sum())
    bundle = replay._repr_mimebundle_()
    assert list(bundle) == ["text/plain"] and "graphviz" in bundle["text/plain"].lower()
    with pytest.raises(RuntimeError, match="Graphviz"):
        replay.html()
