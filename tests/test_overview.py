"""overview(): big models in a few readable boxes, freed and shared parts kept visible.

The models are built here (nothing downloaded): a ResNet-like network of residual conv
blocks with BatchNorm, and a 12-layer nn.TransformerEncoder of small width, with one
head or two; tests/lookalikes.py has small models with the module names of torchvision's
ViT and MobileNetV3-small and of GPT-2. "Fits on a screen" means a 1920x1080 px screen
at 96 dpi, that is 1440x810 pt, with the picture at its natural scale (Graphviz did not
shrink it).
"""
import doctest
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from autograd_lens import draw, overview, retained_bytes
from autograd_lens.overview import _block_name, _forward_order, _inputs_first
from autograd_lens.graph import walk
from graphs import Counts, counting_hooks
from lookalikes import gpt2_loss, mobilenet_loss, vit_loss

HERE = Path(__file__).resolve().parent
SCREEN_PT = (1440, 810)  # 1920x1080 px at 96 dpi; 1 pt = 1/72 inch


class ResidualBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.shortcut = nn.Identity()
        if stride != 1 or c_in != c_out:
            self.shortcut = nn.Sequential(nn.Conv2d(c_in, c_out, 1, stride, bias=False),
                                          nn.BatchNorm2d(c_out))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNetLike(nn.Module):
    """ResNet-34's shape at a tiny width: a stem, stages of 3, 4, 6, 3 blocks, a head."""

    def __init__(self, width=4, blocks=(3, 4, 6, 3)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(width), nn.ReLU())
        stages, c_in = [], width
        for k, repeats in enumerate(blocks):
            c_out = width * 2 ** k
            stages.append(nn.Sequential(ResidualBlock(c_in, c_out, 1 if k == 0 else 2),
                                        *(ResidualBlock(c_out, c_out, 1)
                                          for _ in range(repeats - 1))))
            c_in = c_out
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(c_in, 10)

    def forward(self, x):
        x = self.stem(x)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(x.mean((2, 3)))


class TransformerLike(nn.Module):
    """An input projection, a 12-layer encoder of width 32, and one head per task."""

    def __init__(self, heads=1, layers=12):
        super().__init__()
        self.embed = nn.Linear(8, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.heads = nn.ModuleList(nn.Linear(32, 1) for _ in range(heads))

    def forward(self, x):
        features = self.encoder(self.embed(x))
        return [head(features).pow(2).mean() for head in self.heads]


def resnet_loss():
    torch.manual_seed(0)
    model = ResNetLike()
    loss = nn.functional.cross_entropy(model(torch.randn(2, 3, 16, 16)), torch.tensor([1, 2]))
    return loss, model


def transformer_losses(heads=1):
    torch.manual_seed(0)
    model = TransformerLike(heads)
    return model(torch.randn(2, 10, 8)), model


def svg_size(view):
    svg = view.svg()
    width, height = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg).groups()
    return float(width), float(height), svg


@pytest.mark.parametrize("build, at_least", [(resnet_loss, 200),
                                              (lambda: transformer_losses(heads=2), 900)],
                         ids=["resnet", "transformer"])
def test_a_big_model_fits_on_a_screen(build, at_least):
    losses, model = build()
    losses = losses if isinstance(losses, list) else [losses]
    params = dict(model.named_parameters())
    assert len(walk(losses, params).nodes) > at_least  # draw shows every one of them
    view = overview(*losses, params=params)
    assert len(view.blocks) <= 15
    width, height, svg = svg_size(view)
    assert width <= SCREEN_PT[0] and height <= SCREEN_PT[1], (width, height)
    assert "scale(1 1)" in svg  # drawn at its natural size, text as large as draw's
    full_width, full_height, _ = svg_size(draw(*losses, params=params))
    assert full_width * full_height > 20 * width * height


def test_repeated_layers_are_one_box():
    (loss,), model = transformer_losses()
    view = overview(loss, params=dict(model.named_parameters()))
    assert [(b.name, b.repeats) for b in view.blocks] == [
        ("embed", 1), ("encoder.layers.0-11", 12), ("heads.0", 1)]
    assert "encoder.layers.0-11 (12 alike)" in repr(view)
    layers = view.blocks[1]
    assert layers.params == 12 * 12  # each layer's 12 parameter tensors
    assert layers.nodes == 12 * 64
    assert "(12 alike)" in view.source
    assert "b1 -> b1" in view.source  # a loop: each layer feeds the next


def test_resnet_blocks_follow_the_module_names():
    loss, model = resnet_loss()
    view = overview(loss, params=dict(model.named_parameters()))
    assert [(b.name, b.repeats) for b in view.blocks] == [
        ("stem.0", 1), ("stem.1", 1), ("layer1.0-2", 3), ("layer2.0", 1), ("layer2.1-3", 3),
        ("layer3.0", 1), ("layer3.1-5", 5), ("layer4.0", 1), ("layer4.1-2", 2), ("fc", 1)]
    # The stage's first block has the shortcut conv: 3 more parameters than the second.
    assert view.blocks[3].params == view.blocks[4].params // 3 + 3


@pytest.mark.parametrize("build", [resnet_loss, transformer_losses], ids=["resnet", "transformer"])
def test_the_boxes_bytes_add_up_to_retained_bytes(build):
    losses, model = build()
    losses = losses if isinstance(losses, list) else [losses]
    view = overview(*losses, params=dict(model.named_parameters()))
    assert sum(b.saved_bytes for b in view.blocks) == retained_bytes(*losses) > 0
    assert sum(b.nodes + b.params + b.leaves for b in view.blocks) == \
        len(walk(losses).nodes)


def test_freed_and_shared_blocks_stay_visible():
    (loss1, loss2), model = transformer_losses(heads=2)
    params = dict(model.named_parameters(), loss1=loss1, loss2=loss2)
    before = overview(loss1, loss2, params=params)
    loss1.backward()  # frees the trunk's and head 0's saved tensors; head 1's stay
    after = overview(loss1, loss2, params=params)
    boxes = {b.name: b for b in after.blocks}
    assert set(boxes) == {"embed", "encoder.layers.0-11", "heads.0", "heads.1"}
    for trunk in ("embed", "encoder.layers.0-11"):
        box = boxes[trunk]
        assert box.freed == box.holding > 0 and box.saved_bytes == 0
        assert box.shared == box.nodes and box.shared_by == ["loss1", "loss2"]
    assert boxes["heads.0"].freed == boxes["heads.0"].holding > 0
    assert boxes["heads.1"].freed == 0 and boxes["heads.1"].saved_bytes > 0
    assert boxes["heads.1"].shared == boxes["heads.0"].shared == 0
    # In the picture: red dashed borders on the freed boxes, thistle on the shared ones,
    # each with its legend entry; none of that before backward except the sharing.
    assert after.source.count("color=red") == 3 + 1  # 3 freed boxes, 1 legend entry
    assert after.source.count("fillcolor=thistle") == 2 + 1
    assert "color=red" not in before.source and "freed" not in before.source
    assert "0 that freed them, 675.4 kB kept alive" in repr(before)
    assert "168 that saved tensors, 168 that freed them" in repr(after)
    assert "all nodes run by the backward passes of loss1 and loss2" in repr(after)
    assert after.description == (
        "Overview of loss1 and loss2: 933 nodes in 4 boxes, one per block of the model "
        "(embed, encoder.layers.0-11 (12 alike), heads.0 and heads.1). 173 nodes saved "
        "tensors, keeping 2.6 kB alive; 171 have freed them. The backward passes of loss1 "
        "and loss2 share nodes in embed and encoder.layers.0-11 (12 alike).")


def test_summary_of_a_small_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(),
                          nn.Linear(8, 1))
    loss = model(torch.randn(3, 4)).pow(2).mean()
    # Each ReLU goes with the Linear before it, the loss with the last Linear. Each
    # storage counts once: the ReLU's result that the next Linear saves too counts in "0".
    assert repr(overview(loss, params=dict(model.named_parameters()))) == "\n".join([
        "overview of output 0 (): 16 nodes in 3 boxes, 6 that saved tensors, 0 that freed them, "
        "252 B kept alive",
        "  0  3 nodes, 2 params, 2 that saved tensors; kept alive: 144 B, most by ReluBackward0",
        "  2  3 nodes, 2 params, 2 that saved tensors; kept alive: 96 B, most by ReluBackward0",
        "  4  4 nodes, 2 params, 2 that saved tensors; kept alive: 12 B, most by PowBackward0"
        " -> output 0",
    ])


def test_the_description_of_a_small_model():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    view = overview(model(torch.randn(3, 4)).pow(2).mean(), params=model)
    assert view.description == (
        "Overview of output 0: 11 nodes in 2 boxes, one per block of the model (0 and 2). "
        "4 nodes saved tensors, keeping 156 B alive; none freed yet.")
    bundle, metadata = view._repr_mimebundle_()
    assert metadata == {"image/svg+xml": {"alt": view.description}}
    assert f'aria-label="{view.description}"' in bundle["image/svg+xml"]


def test_a_trunk_keeps_the_result_that_two_heads_use():
    torch.manual_seed(0)
    model = nn.ModuleDict(dict(trunk=nn.Linear(4, 8), head1=nn.Linear(8, 1),
                               head2=nn.Linear(8, 1)))
    features = torch.relu(model["trunk"](torch.randn(3, 4)))
    loss1, loss2 = model["head1"](features).sum(), model["head2"](features).sum()
    view = overview(loss1, loss2, params=dict(model.named_parameters()))
    assert [(b.name, b.nodes) for b in view.blocks] == [("trunk", 3), ("head1", 3),
                                                        ("head2", 3)]


def test_depth_cuts_module_names():
    (loss,), model = transformer_losses()
    view = overview(loss, params=dict(model.named_parameters()), depth=1)
    assert [b.name for b in view.blocks] == ["embed", "encoder", "heads"]
    view = overview(loss, params=dict(model.named_parameters()), depth=3)
    assert [b.name for b in view.blocks] == ["embed", "encoder.layers.0-11", "heads.0"]
    view = overview(loss, params=dict(model.named_parameters()), depth=4)
    assert [b.name for b in view.blocks][:5] == [
        "embed", "encoder.layers.0.self_attn", "encoder.layers.0.norm1",
        "encoder.layers.0.linear1", "encoder.layers.0.linear2"]


def test_same_source_in_every_process():
    script = ("import sys; sys.path.insert(0, %r); import test_overview as t; "
              "(loss,), model = t.transformer_losses(); "
              "sys.stdout.write(t.overview(loss, params=dict(model.named_parameters())).source)"
              % str(HERE))
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    (loss,), model = transformer_losses()
    assert runs[0] == runs[1] == overview(loss, params=dict(model.named_parameters())).source


def test_without_sequence_numbers_a_topological_order_stands_in():
    (loss,), model = transformer_losses()
    graph = walk([loss])
    order = _inputs_first(graph)
    position = {node.index: k for k, node in enumerate(order)}
    assert sorted(position) == [n.index for n in graph.nodes if not n.is_leaf]
    assert all(position[i] < position[node.index]
               for node in order for i in node.inputs if i in position)
    assert [n.index for n in _forward_order(graph)] != [n.index for n in order]  # both exist


def test_saves_like_draw(tmp_path):
    (loss,), model = transformer_losses(heads=1)
    view = overview(loss, params=dict(model.named_parameters()))
    for suffix in (".dot", ".svg", ".png"):
        assert view.save(tmp_path / f"big{suffix}").stat().st_size > 0
    assert view._repr_mimebundle_()[0]["text/plain"] == repr(view)


def test_bad_input_says_what_to_do():
    (loss,), model = transformer_losses()
    for params in (None, {}, nn.ReLU()):
        with pytest.raises(ValueError, match=r"pass params=dict\(model.named_parameters\(\)\), "
                                             r"or the model itself"):
            overview(loss, params=params)
    with pytest.raises(TypeError, match=r"tensors without names \(model.parameters\(\), say\)"):
        overview(loss, params=model.parameters())
    with pytest.raises(TypeError, match="fit must be True"):
        overview(loss, params=model, fit="yes")
    with pytest.raises(ValueError, match="depth must be a whole number"):
        overview(loss, params=dict(model.named_parameters()), depth=0)
    with pytest.raises(ValueError, match="has no grad_fn"):
        overview(torch.ones(2), params=dict(model.named_parameters()))


def test_docstring_example():
    module = importlib.import_module("autograd_lens.overview")  # the package's name is the function
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_never_unpacks_and_shows_packed_tensors():
    """checkpoint (both kinds), save_on_cpu and a hand-written pair: no hook runs."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                          nn.Linear(16, 1))
    params = dict(model.named_parameters())
    counts = Counts()

    def segment(h):
        counts.pack += 1  # a run of the checkpointed forward
        return model[2:4](h)

    x = torch.randn(4, 8)
    losses = [model[4](checkpoint(segment, model[:2](x), use_reentrant=reentrant)).sum()
              for reentrant in (False, True)]
    with torch.autograd.graph.save_on_cpu():
        losses.append(model(x).sum())
    with counting_hooks(counts, copy=True):
        losses.append(model(x).sum())
    before = (counts.pack, counts.unpack)
    for loss in losses:
        view = overview(loss, params=params)
        view.source, repr(view)
    overview(*losses, params=params).source
    assert (counts.pack, counts.unpack) == before
    hooked = overview(losses[3], params=params)
    assert sum(b.lost.get("packed by a hook", 0) for b in hooked.blocks) == \
        sum(len(n.saved) for n in walk([losses[3]]).nodes)
    assert "saved tensors packed by a hook" in repr(hooked)
    assert sum(b.saved_bytes for b in hooked.blocks) == retained_bytes(losses[3]) > 0


def test_leaves_not_in_params_and_nodes_before_any_parameter_have_boxes():
    torch.manual_seed(0)
    linear = nn.Linear(4, 2)
    x = torch.randn(3, 4, requires_grad=True)
    loss = linear(x.exp()).sum()  # exp saves its result before any parameter is used
    view = overview(loss, params=dict(linear.named_parameters()))
    assert repr(view).splitlines()[1:] == [
        "  (leaves not in params)  1 leaf",
        "  (before any parameter)  1 node, 1 that saved tensors; kept alive: 48 B, "
        "most by ExpBackward0",
        "  (top level)             3 nodes, 2 params, 1 that saved tensors; kept alive: 0 B"
        " -> output 0",
    ]
    assert "fillcolor=lightblue" in view.source  # the leaf's box, as draw colours leaves


def test_a_graph_built_in_two_threads_is_ordered_by_its_edges():
    # Each thread numbers its nodes on its own: here the transpose, made in this thread
    # after 50 other nodes, has a higher number than the nodes the other thread built on
    # top of it, and the sequence numbers alone would put it after its user.
    import threading

    torch.manual_seed(0)
    linear = nn.Linear(4, 4)
    for _ in range(50):
        torch.ones(1, requires_grad=True) * 2
    h = linear(torch.randn(2, 4)).t()
    built = {}
    thread = threading.Thread(target=lambda: built.setdefault("loss", (h * 3).sum()))
    thread.start()
    thread.join()
    view = overview(built["loss"], params=dict(linear.named_parameters()))
    assert "7 nodes in 1 box," in str(view)


# Names numbered inside a part, too tall a picture, totals, wording, compiled models.

@pytest.mark.parametrize("module, block", [
    ("encoder.layers.encoder_layer_11.mlp.0", "encoder.layers.encoder_layer_11"),  # ViT
    ("transformer.h.3.attn.c_attn", "transformer.h.3"),  # GPT-2
    ("stack.layer_3.conv", "stack.layer_3"),
    ("blocks.block3.conv1", "blocks.block3"),
    ("layer2.0.downsample.0", "layer2.0"),  # ResNet: a stage, then its numbered blocks
    ("features.1.0.attn", "features.1"),  # a whole number first: cut there, as before
    ("conv1", "conv1"), ("head.fc", "head"),
])
def test_a_block_is_cut_where_a_number_sits_in_a_name_part(module, block):
    assert _block_name(module, None) == block


def test_vit_s_numbered_layer_names_fold():
    # torchvision's ViT names its layers encoder.layers.encoder_layer_0 ... _11. Before,
    # each layer's mlp.0 and mlp.3 were boxes of their own: 28 boxes, 4,315 pt wide.
    loss, model = vit_loss()
    view = overview(loss, params=model)
    assert [(b.name, b.repeats) for b in view.blocks] == [
        ("conv_proj", 1), ("encoder", 1), ("(top level)", 1),
        ("encoder.layers.encoder_layer_0-10", 11), ("encoder.layers.encoder_layer_11", 1),
        ("heads", 1)]
    assert view.blocks[3].params == 11 * 12 and view.depth is None
    width, height, _ = svg_size(view)
    assert width <= SCREEN_PT[0] and height <= SCREEN_PT[1], (width, height)  # 974x250 pt


def test_a_picture_too_tall_for_the_screen_is_drawn_coarser():
    # MobileNetV3-small: 15 distinct blocks, one under the other, 947 pt tall by default.
    loss, model = mobilenet_loss()
    default = overview(loss, params=model, fit=False)
    assert len(default.blocks) == 15 and svg_size(default)[1] > SCREEN_PT[1]
    view = overview(loss, params=model)
    assert view.depth == 1 and [b.name for b in view.blocks] == ["features", "classifier"]
    width, height, _ = svg_size(view)
    assert width <= SCREEN_PT[0] and height <= SCREEN_PT[1], (width, height)
    assert repr(view).splitlines()[1] == (
        "note: drawn at depth=1, so that the picture fits a 1920x1080 screen (1440x810 pt): "
        f"the default view, 15 boxes, would be {svg_size(default)[0]:.0f}x"
        f"{svg_size(default)[1]:.0f} pt. overview(..., fit=False) draws the default view.")
    assert overview(loss, params=model, depth=2).depth == 2  # a depth asked for is kept
    assert "note:" not in repr(overview(loss, params=model, depth=2))
    assert sum(b.saved_bytes for b in view.blocks) == retained_bytes(loss, params=model)


def test_a_folded_box_says_its_counts_are_totals():
    (loss,), model = transformer_losses()
    text = repr(overview(loss, params=model))
    assert ("encoder.layers.0-11 (12 alike)  in all: 768 nodes, 144 params, 168 that saved "
            "tensors; kept alive: 672.0 kB in all, most by BmmBackward0") in text
    assert "  embed                           3 nodes, 2 params" in text  # one block: no total


def test_a_block_named_shared_is_not_read_as_shared_state():
    torch.manual_seed(0)
    model = nn.ModuleDict(dict(shared=nn.Linear(4, 8), head1=nn.Linear(8, 1),
                               head2=nn.Linear(8, 1)))
    features = torch.relu(model["shared"](torch.randn(3, 4)))
    loss1, loss2 = model["head1"](features).sum(), model["head2"](features).sum()
    view = overview(loss1, loss2, params=dict(model.named_parameters(), loss1=loss1,
                                              loss2=loss2))
    assert repr(view).splitlines()[1] == (
        "  shared  3 nodes, 2 params, 2 that saved tensors; kept alive: 144 B, most by "
        "ReluBackward0; all nodes run by the backward passes of loss1 and loss2")
    assert "shared by" not in repr(view) and "shared by" not in view.source
    assert "run by the backward passes of loss1 and loss2" in view.source


class CompiledFunction(torch.autograd.Function):
    """Stands for the region torch.compile makes (its class has this name, so its node is
    a CompiledFunctionBackward): one node taking every parameter of the region."""

    @staticmethod
    def forward(ctx, x, *weights_and_biases):
        ctx.save_for_backward(x, *weights_and_biases)
        for k in range(0, len(weights_and_biases), 2):
            x = torch.tanh(x @ weights_and_biases[k].t() + weights_and_biases[k + 1])
        return x

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError  # never run here


class OptimizedModule(nn.Module):
    """torch.compile's wrapper: the model under `_orig_mod`, run as one compiled region."""

    def __init__(self, model):
        super().__init__()
        self._orig_mod = model

    def forward(self, x):
        return CompiledFunction.apply(x, *self._orig_mod.parameters())


def test_a_compiled_model_is_one_box_named_after_it():
    # Before: a "(top level)" box with the compiled node beside one empty box per layer.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
    compiled = OptimizedModule(model)
    loss = compiled(torch.randn(5, 4)).sum()
    assert [n for n, _ in compiled.named_parameters()][0] == "_orig_mod.0.weight"
    note = ("note: torch.compile made each compiled region one backward node "
            "(CompiledFunctionBackward): the layers inside it are not shown.")
    for params, name in [(compiled, "Sequential (compiled)"), (model, "Sequential (compiled)"),
                         (dict(compiled.named_parameters()), "(compiled model)"),
                         (dict(model.named_parameters()), "(compiled model)")]:
        view = overview(loss, params=params)
        assert [(b.name, b.nodes, b.params) for b in view.blocks] == [(name, 2, 4)]
        assert repr(view).splitlines()[1].startswith(note)


def test_a_compiled_submodule_is_named_after_it():
    torch.manual_seed(0)
    model = nn.ModuleDict(dict(embed=nn.Linear(4, 8),
                               encoder=OptimizedModule(nn.Sequential(nn.Linear(8, 8))),
                               head=nn.Linear(8, 1)))
    loss = model["head"](model["encoder"](model["embed"](torch.randn(3, 4)).relu())).sum()
    view = overview(loss, params=model)
    assert [(b.name, b.nodes, b.params) for b in view.blocks] == [
        ("embed", 3, 2), ("encoder (compiled)", 1, 2), ("head", 3, 2)]


def test_params_may_be_the_model():
    (loss,), model = transformer_losses()
    assert overview(loss, params=model).source == \
        overview(loss, params=dict(model.named_parameters())).source


def test_frozen_weights_count_in_no_box():
    loss, model = gpt2_loss(freeze_embeddings=True)
    view = overview(loss, params=model)
    assert sum(b.saved_bytes for b in view.blocks) == retained_bytes(loss, params=model) \
        < retained_bytes(loss)


def test_a_long_text_form_is_cut():
    loss, model = vit_loss()
    view = overview(loss, params=model, depth=5)
    assert len(view.blocks) == 77
    lines = repr(view).splitlines()
    assert len(lines) == 1 + 30 + 1
    assert lines[-1] == "  ... 47 more boxes left out: print(overview(...).summary) shows all 77"
    assert len(view.summary.splitlines()) == 1 + 77
    assert view._repr_mimebundle_()[0]["text/plain"] == repr(view)


def test_without_graphviz_the_default_view_is_kept(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` to measure the picture with
    loss, model = mobilenet_loss()
    view = overview(loss, params=model)
    assert view.depth is None and len(view.blocks) == 15 and "note:" not in repr(view)
