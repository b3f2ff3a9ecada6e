"""saved_tensors() and retained_bytes(), checked against autograd's own hooks."""
import pytest
import torch

from autograd_lens import draw, retained_bytes, saved_tensors, shared_nodes
from graphs import ALL, custom_function, seed_graph, two_heads, views_and_inplace
from lookalikes import gpt2_loss

# In-place ops on views hide what their node saved (see the test of CopySlices below).
COUNTABLE = [build for build in ALL if build is not views_and_inplace]


def test_the_seed_graph_saves_a_and_the_constant_two():
    (d, e), (a,) = seed_graph()
    rows = saved_tensors(d, e, params={"a": a})
    assert [(r.node, r.attribute, r.shape, r.dtype, r.nbytes, r.is_leaf, r.freed) for r in rows] == [
        ("MulBackward0", "other", (), torch.int64, 8, False, False),
        ("PowBackward0", "self", (1, 4), torch.float32, 16, True, False),
    ]
    assert rows[1].name == "a" and rows[1].tensor is a
    assert "PowBackward0  self = a   (1, 4)  float32  16     yes" in repr(rows)
    assert "<td>self = a</td>" in rows._repr_html_()


def test_rows_say_freed_after_backward():
    (d, e), _ = seed_graph()
    d.backward()
    rows = saved_tensors(d, e)
    assert [(r.attribute, r.freed, r.shape, r.nbytes) for r in rows] == [
        ("other", True, None, 0), ("self", True, None, 0)]


# Python numbers in the graph (the 2 in b * 2). Autograd saves each as a 0-dim tensor
# but never passes it to saved_tensors_hooks, so the measurement adds them back.
PYTHON_NUMBERS_SAVED = {"seed_graph": 1, "custom_function": 1}


def measure_with_hooks(build):
    """Run `build` with pack hooks that record every saved tensor's storage."""
    storages = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        outputs, leaves = build()
    leaf_storages = {leaf.untyped_storage().data_ptr() for leaf in leaves}
    everything = sum(storages.values())
    without_leaves = sum(n for ptr, n in storages.items() if ptr not in leaf_storages)
    numbers = [row.nbytes for row in saved_tensors(*outputs)
               if row.shape == () and row.tensor.untyped_storage().data_ptr() not in storages]
    assert len(numbers) == PYTHON_NUMBERS_SAVED.get(build.__name__, 0)
    return outputs, everything + sum(numbers), without_leaves + sum(numbers)


@pytest.mark.parametrize("build", COUNTABLE)
def test_retained_bytes_agrees_with_saved_tensors_hooks(build):
    # Built under the hooks, the saved tensors are packed by them and never unpacked:
    # what retained_bytes counts is the tensors the pack hook returned, the saved ones.
    outputs, everything, without_leaves = measure_with_hooks(build)
    assert everything >= without_leaves > 0
    assert all(row.packed_by_hook or row.shape == () for row in saved_tensors(*outputs))
    assert retained_bytes(*outputs) == without_leaves
    assert retained_bytes(*outputs, include_leaves=True) == everything


@pytest.mark.parametrize("build", COUNTABLE)
def test_backward_frees_and_retain_graph_keeps(build):
    outputs, _ = build()
    kept = retained_bytes(*outputs)
    torch.autograd.backward(list(outputs), retain_graph=True)
    assert retained_bytes(*outputs) == kept
    assert not any(row.freed for row in saved_tensors(*outputs))
    torch.autograd.backward(list(outputs))
    assert retained_bytes(*outputs, include_leaves=True) == 0
    assert all(row.freed for row in saved_tensors(*outputs))


def test_a_saved_view_counts_its_whole_storage_once():
    x = torch.randn(10, 10, requires_grad=True)
    big = x.clone()  # 400 bytes; clone saves nothing
    y = (big[:2].exp() * big[:2]).sum()  # saves views of big and the exp result
    assert retained_bytes(y) == 400 + 2 * 10 * 4


def test_custom_function_rows():
    (out,), _ = custom_function()
    rows = [r for r in saved_tensors(out) if r.attribute.startswith("saved_tensors")]
    assert [(r.node, r.attribute, r.shape) for r in rows] == [
        ("CubeBackward", "saved_tensors[0]", (3, 4))]


def test_shared_nodes_of_two_heads_are_the_trunk():
    (loss1, loss2), params = two_heads()
    names = dict(zip(["trunk.weight", "trunk.bias", "h1.weight", "h1.bias", "h2.weight",
                      "h2.bias"], params))
    shared = shared_nodes(loss1, loss2, params=names)
    assert shared == ["ReluBackward0", "AddmmBackward0 #2", "trunk.bias", "TBackward0 #1",
                      "trunk.weight"]


def test_a_saved_tensor_modified_in_place_is_reported_not_raised():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    loss = model(torch.randn(5, 3)).pow(2).sum()  # the last layer saves W.t() for the ReLU
    loss.backward(retain_graph=True)
    with torch.no_grad():
        model[2].weight -= 0.1 * model[2].weight.grad  # a step: the saved W.t() is stale
    rows = saved_tensors(loss)
    assert [(r.node, r.attribute, r.lost) for r in rows if r.tensor is None] == [
        ("AddmmBackward0 #1", "mat2", "modified in place")]
    assert "modified in place" in repr(rows)
    with pytest.raises(ValueError, match="modified in place after it was saved"):
        retained_bytes(loss)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()  # what the report warns of


def mask_half_in_place():
    """The reviewers' case: an in-place op on a view, which autograd wraps in CopySlices."""
    x = torch.randn(1000, requires_grad=True)
    mask = torch.rand(500)
    y = x * 1
    y[:500].mul_(mask)  # MulBackward0 saves the mask, 2,000 bytes, inside CopySlices
    return y.sum(), x, mask


def test_an_in_place_op_on_a_view_is_not_undercounted():
    torch.manual_seed(0)
    loss, x, mask = mask_half_in_place()
    # Before: 8 bytes (the 1 of x * 1), the mask unseen. Torch shows Python no way to the
    # node CopySlices wraps, so the lens says so, and retained_bytes refuses to count.
    rows = saved_tensors(loss)
    assert [(r.node, r.attribute, r.state) for r in rows] == [
        ("CopySlices", "wrapped in-place op", "unknown"), ("MulBackward0", "other", "live")]
    assert "CopySlices wraps the node of an in-place op on a view" in rows[0].why
    with pytest.raises(ValueError, match=r"CopySlices's saved wrapped in-place op cannot be "
                                         r"read.*The same op out of place"):
        retained_bytes(loss)
    assert "CopySlices    saved wrapped in-place op unknown" in repr(draw(loss))
    loss.backward()  # whether backward freed it cannot be told either: still unknown
    assert [r.state for r in saved_tensors(loss)] == ["unknown", "freed"]
    with pytest.raises(ValueError, match="CopySlices"):
        retained_bytes(loss)
    # The same computation out of place is counted in full: the mask and the 1.
    y = x * 1
    out_of_place = torch.cat([y[:500] * mask, y[500:]]).sum()
    assert retained_bytes(out_of_place) == 2000 + 8


def test_views_and_inplace_graph_raises_before_and_after_backward():
    (z, y), _ = views_and_inplace()
    for backward_ran in (False, True):
        if backward_ran:
            torch.autograd.backward([z, y])
        assert [r.state for r in saved_tensors(z, y) if r.node == "CopySlices"] == ["unknown"]
        with pytest.raises(ValueError, match="CopySlices"):
            retained_bytes(z, y)


def test_frozen_weights_are_left_out_with_params():
    # A GPT-2-like model whose embeddings are frozen: the logits' matmul saves the (tied)
    # embedding matrix, which is no leaf of the graph and so counted as kept alive.
    loss, model = gpt2_loss(freeze_embeddings=True)
    embedding = model.transformer.wte.weight
    assert not embedding.requires_grad
    everything = retained_bytes(loss)
    assert any(r.tensor is not None and r.tensor.untyped_storage().data_ptr()
               == embedding.untyped_storage().data_ptr() for r in saved_tensors(loss))
    without = everything - embedding.nelement() * embedding.element_size()
    assert (everything, without) == (768116, 512116)
    for params in (model, model.named_parameters(), dict(model.named_parameters())):
        assert retained_bytes(loss, params=params) == without
    # include_leaves=True counts the trainable parameters' saved views, but never params.
    with_leaves = retained_bytes(loss, include_leaves=True)
    assert with_leaves > everything
    assert retained_bytes(loss, include_leaves=True, params=model) == without
    # Leaving out what is not saved changes nothing.
    assert retained_bytes(loss, params={"wpe": model.transformer.wpe.weight}) == everything


def test_params_leave_out_trainable_weights_too():
    (loss,), leaves = custom_function()
    assert retained_bytes(loss, params={"w": leaves[0]}) == retained_bytes(loss)


def test_long_tables_are_cut_in_their_repr_but_not_in_summary():
    loss, _ = gpt2_loss()
    table = saved_tensors(loss)
    assert len(table) == 298
    text = repr(table)
    assert len(text.splitlines()) == 1 + 30 + 1  # the columns, 30 rows, what was left out
    assert text.splitlines()[-1] == (
        "  ... 268 more rows left out: print(saved_tensors(...).summary) shows all 298")
    assert len(table.summary.splitlines()) == 1 + 298
    assert table.summary.startswith(text.splitlines()[0].split()[0])
    assert "268 more rows left out" in table._repr_html_()
    assert table._repr_html_().count("<tr>") == 1 + 30 + 1
    short = saved_tensors(seed_graph()[0][0])
    assert repr(short) == short.summary  # a short table is shown whole
