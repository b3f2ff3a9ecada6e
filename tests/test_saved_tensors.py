"""saved_tensors() and retained_bytes(), checked against autograd's own hooks."""
import pytest
import torch

from autograd_lens import retained_bytes, saved_tensors, shared_nodes
from graphs import ALL, custom_function, seed_graph, two_heads


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
PYTHON_NUMBERS_SAVED = {"seed_graph": 1, "custom_function": 1, "views_and_inplace": 1}


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


@pytest.mark.parametrize("build", ALL)
def test_retained_bytes_agrees_with_saved_tensors_hooks(build):
    # Built under the hooks, the saved tensors are packed by them and never unpacked:
    # what retained_bytes counts is the tensors the pack hook returned, the saved ones.
    outputs, everything, without_leaves = measure_with_hooks(build)
    assert everything >= without_leaves > 0
    assert all(row.packed_by_hook or row.shape == () for row in saved_tensors(*outputs))
    assert retained_bytes(*outputs) == without_leaves
    assert retained_bytes(*outputs, include_leaves=True) == everything


@pytest.mark.parametrize("build", ALL)
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
