"""No lens function ever runs a saved tensor's unpack hook, nor a checkpointed forward again.

Each case builds a graph whose saved tensors a hook packed, counts the calls of that
hook (or of the checkpointed segment), then calls every lens function on it: the
unpack count must not move, nor the pack count (it moves only when the user's forward
runs). Then backward runs the hooks as usual and gives the gradients it gives without
the lens, so the lens also left the graph as it was.
"""
import warnings

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from autograd_lens import draw, retained_bytes, saved_tensors, shared_nodes
from autograd_lens.explain import diagnosis
from autograd_lens.graph import _read_saved, walk
from graphs import Counts, counting_hooks

FLOAT32 = 4


def every_lens_call(outputs):
    """Call every lens function on `outputs`, and everything explain reads of a node."""
    view = draw(*outputs)
    view.source, repr(view)
    draw(*outputs, show_saved=False).source
    table = saved_tensors(*outputs)
    repr(table), table._repr_html_()
    retained_bytes(*outputs), retained_bytes(*outputs, include_leaves=True)
    shared_nodes(outputs[0], outputs[0] * 1)
    for node in walk(outputs).nodes:
        list(_read_saved(node.fn))
        diagnosis._lost(node.fn), diagnosis._saved_names(node.fn)
    return table


def segment_model():
    """A stem, a segment to checkpoint (Linear, Tanh, Linear) and its input batch."""
    torch.manual_seed(0)
    stem = nn.Linear(8, 8)
    segment = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 8))
    return stem, segment, torch.randn(4, 8)


def gradients(stem, segment):
    return [p.grad.clone() for p in [*stem.parameters(), *segment.parameters()]]


def reference_gradients():
    stem, segment, x = segment_model()
    segment(stem(x)).pow(2).sum().backward()
    return gradients(stem, segment)


def assert_lens_runs_nothing(outputs, counts):
    before = counts.now()
    table = every_lens_call(outputs)
    assert counts.now() == before, "a lens call ran a hook or the checkpointed forward"
    return table


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_is_never_run_again(use_reentrant):
    stem, segment, x = segment_model()
    runs = Counts()  # `pack` counts the runs of the checkpointed function

    def run_segment(h):
        runs.pack += 1
        return segment(h)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reentrant checkpoint's advice about use_reentrant
        loss = checkpoint(run_segment, stem(x), use_reentrant=use_reentrant).pow(2).sum()
    assert runs.pack == 1
    assert_lens_runs_nothing([loss], runs)
    loss.backward()
    assert runs.pack == 2  # backward, and backward only, ran the segment again
    assert all(torch.equal(a, b)
               for a, b in zip(gradients(stem, segment), reference_gradients()))


def test_non_reentrant_checkpoint_rows_say_packed_by_its_hook():
    stem, segment, x = segment_model()
    loss = checkpoint(segment, stem(x), use_reentrant=False).pow(2).sum()
    rows = saved_tensors(loss)
    packed = [r for r in rows if r.packed_by_hook]
    # Inside the segment: both Linear layers' input and weight, and Tanh's result.
    assert [(r.node, r.attribute) for r in packed] == [
        ("AddmmBackward0 #1", "mat1"), ("AddmmBackward0 #1", "mat2"),
        ("TanhBackward0", "result"),
        ("AddmmBackward0 #2", "mat1"), ("AddmmBackward0 #2", "mat2")]
    assert {r.packed_as for r in packed} == {"_Holder"}
    assert all(r.tensor is None and r.packed_tensors == [] for r in packed)
    assert ("packed by a hook: _Holder, size unknown "
            "(torch.utils.checkpoint._checkpoint_hook)") in repr(rows)
    view = draw(loss)
    assert "3 hold tensors packed by a hook" in repr(view)
    assert "TanhBackward0      saved result packed by a hook as _Holder" in repr(view)
    assert "packed by a hook:" in view.source and "khaki" in view.source  # legend, style
    assert "<svg" in view.svg()


def test_rows_keep_no_checkpoint_holder_alive():
    # Holders kept alive past backward would change what checkpoint recomputes and keeps.
    import weakref
    stem, segment, x = segment_model()
    loss = checkpoint(segment, stem(x), use_reentrant=False).pow(2).sum()
    holders = [weakref.ref(node.fn._raw_saved_result.data) for node in walk([loss]).nodes
               if node.name == "TanhBackward0"]
    rows, view = saved_tensors(loss), draw(loss)
    assert holders[0]() is not None
    loss.backward()
    assert holders[0]() is None and len(rows) == 7 and view.source


def test_retained_bytes_under_checkpoint():
    # Without checkpoint the graph keeps x, the segment's input, Tanh's result and the
    # output: 4 x (8 + 8 + 16 + 8) floats.
    stem, segment, x = segment_model()
    assert retained_bytes(segment(stem(x)).pow(2).sum()) == FLOAT32 * 4 * 40
    # use_reentrant=False: the segment's tensors are packed as holders, which count
    # nothing; what is left is x (saved by the stem) and the output (saved by pow).
    stem, segment, x = segment_model()
    loss = checkpoint(segment, stem(x), use_reentrant=False).pow(2).sum()
    assert retained_bytes(loss) == FLOAT32 * 4 * (8 + 8)
    # use_reentrant=True saves the segment's input the ordinary way: it counts. So does
    # the CPU RNG state it keeps on ctx (ctx.fwd_cpu_state), to replay dropout.
    stem, segment, x = segment_model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = checkpoint(segment, stem(x), use_reentrant=True).pow(2).sum()
    rows = saved_tensors(loss)
    rng_state = torch.get_rng_state()
    assert [(r.node, r.attribute, r.state, r.shape) for r in rows
            if r.node == "CheckpointFunctionBackward"] == [
        ("CheckpointFunctionBackward", "saved_tensors[0]", "live", (4, 8)),
        ("CheckpointFunctionBackward", "ctx.fwd_cpu_state", "kept on ctx", rng_state.shape)]
    assert retained_bytes(loss) == FLOAT32 * 4 * (8 + 8 + 8) + rng_state.nbytes


class CountingSaveOnCpu(torch.autograd.graph.save_on_cpu):
    """torch's save_on_cpu, its own hooks wrapped to count their calls."""

    def __init__(self, counts):
        super().__init__()
        pack, unpack = self.pack_hook, self.unpack_hook

        def counted_pack(tensor):
            counts.pack += 1
            return pack(tensor)

        def counted_unpack(packed):
            counts.unpack += 1
            return unpack(packed)

        self.pack_hook, self.unpack_hook = counted_pack, counted_unpack


def test_save_on_cpu():
    counts = Counts()
    stem, segment, x = segment_model()
    with CountingSaveOnCpu(counts):
        loss = segment(stem(x)).pow(2).sum()
    assert counts.pack > 0
    table = assert_lens_runs_nothing([loss], counts)
    # On CPU, save_on_cpu packs (device, the tensor itself): the same storages as without
    # it, so the same bytes.
    assert all(r.packed_by_hook for r in table)
    assert all(r.packed_as == "tuple" and len(r.packed_tensors) == 1 for r in table)
    assert "tuple holding a (4, 16) float32 tensor, 256 bytes" in repr(table)
    stem_plain, segment_plain, x_plain = segment_model()
    plain = segment_plain(stem_plain(x_plain)).pow(2).sum()
    assert retained_bytes(loss) == retained_bytes(plain) == FLOAT32 * 4 * 40
    assert retained_bytes(loss, include_leaves=True) == retained_bytes(plain, include_leaves=True)
    loss.backward()
    assert counts.unpack == counts.pack
    assert all(torch.equal(a, b) for a, b in zip(gradients(stem, segment), reference_gradients()))


class Box:
    """What a hand-written pack hook may return: anything, here a copy in a box."""

    def __init__(self, tensor):
        self.tensor = tensor


@pytest.mark.parametrize("packs_a_tensor", [True, False], ids=["returns-copy", "returns-box"])
def test_hand_written_hooks(packs_a_tensor):
    counts, copies = Counts(), {}

    def pack(tensor):
        counts.pack += 1
        copy = tensor.clone()
        copies[copy.untyped_storage().data_ptr()] = copy.untyped_storage().nbytes()
        return copy if packs_a_tensor else Box(copy)

    def unpack(packed):
        counts.unpack += 1
        return packed if packs_a_tensor else packed.tensor

    stem, segment, x = segment_model()
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = segment(stem(x)).pow(2).sum()
    table = assert_lens_runs_nothing([loss], counts)
    assert counts.pack == len(copies) == len(table) > 0
    assert all(r.packed_by_hook and r.tensor is None for r in table)
    # Every saved tensor is a fresh copy, none of them a leaf: the copies are what the
    # graph keeps, and retained_bytes counts them, when it can see them.
    expected = sum(copies.values()) if packs_a_tensor else 0
    assert retained_bytes(loss) == retained_bytes(loss, include_leaves=True) == expected
    origin = "test_hooks_never_run.test_hand_written_hooks"
    assert f"({origin})" in repr(table)
    assert ("Box, size unknown" in repr(table)) != packs_a_tensor
    loss.backward()
    assert counts.unpack == counts.pack
    assert all(torch.equal(a, b) for a, b in zip(gradients(stem, segment), reference_gradients()))


def test_custom_function_under_hooks():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, _ = ctx.saved_tensors
            return 3 * x ** 2 * grad

    counts = Counts()
    x = torch.randn(3, requires_grad=True)
    with counting_hooks(counts):
        y = Cube.apply(x * 2).sum()
    table = assert_lens_runs_nothing([y], counts)
    cube = [(r.attribute, r.state) for r in table if r.node == "CubeBackward"]
    assert cube == [("saved_tensors[0]", "packed by a hook")]
    y.backward()
    assert counts.unpack == 1 and torch.allclose(x.grad, 24 * x.detach() ** 2)


def test_freed_after_backward_even_when_packed():
    counts = Counts()
    x = torch.randn(5, requires_grad=True)
    with counting_hooks(counts):
        y = x.exp().sin().sum()
    assert [r.state for r in saved_tensors(y)] == ["packed by a hook"] * 2
    y.backward(retain_graph=True)
    assert [r.state for r in saved_tensors(y)] == ["packed by a hook"] * 2
    y.backward()
    unpacked = counts.unpack
    assert [r.state for r in saved_tensors(y)] == ["freed"] * 2
    assert retained_bytes(y) == 0 and counts.unpack == unpacked
    assert "2 that freed them" in repr(draw(y))
