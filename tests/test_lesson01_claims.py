"""Lesson 01's claims, recomputed with torch (the lesson shows them; these guard them).

The notebook displays each fact (nbval compares the outputs); what only a test needs, such
as a saved tensor's storage or a non-leaf's .grad after the section 2 backward, lives here.
"""
import warnings

import pytest
import torch

from autograd_lens import saved_tensors


def names(node):
    return [(fn.name() if fn is not None else None, i) for fn, i in node.next_functions]


@pytest.fixture
def graph():
    a = torch.rand(1, 4, requires_grad=True, generator=torch.Generator().manual_seed(0))
    b = a ** 2
    c = b * 2
    return a, b, c, c.mean(), c.sum()


def test_backward_fills_only_leaves_that_require_grad_and_are_reached(graph):
    a, b, c, d, _ = graph
    d.backward()
    assert torch.allclose(a.grad, a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading a non-leaf's .grad warns
        assert b.grad is None and c.grad is None
    w = torch.tensor([1., 2., 3.], requires_grad=True)
    x = torch.tensor([1., 2., 3.]) * 10
    v = torch.ones(3, requires_grad=True)
    h = w * x
    h.retain_grad()
    loss = h.sum()
    loss.backward()
    assert torch.equal(w.grad, x) and torch.equal(h.grad, torch.ones(3))
    assert x.is_leaf and x.grad is None
    assert v.is_leaf and v.requires_grad and v.grad is None  # not reached
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert loss.grad is None


def test_which_inputs_get_a_pair(graph):
    a, b, c, _, _ = graph
    assert names(c.grad_fn) == [("PowBackward0", 0), (None, 0)]  # the 2 of b * 2
    assert names(b.grad_fn) == [("torch::autograd::AccumulateGrad", 0)]  # exponent: none
    selected = a.index_select(1, torch.tensor([0, 2]))
    assert names(selected.grad_fn) == [("torch::autograd::AccumulateGrad", 0)]  # index: none


def test_chunk_is_one_node_with_two_outputs():
    halves = torch.arange(4.0, requires_grad=True).chunk(2)
    split, which_output = halves[1].sum().grad_fn.next_functions[0]
    assert split is halves[0].grad_fn is halves[1].grad_fn
    assert split.name() == "SplitBackward0" and which_output == 1


def test_paths_end_at_accumulate_grad_and_the_fork_is_one_node(graph):
    a, b, c, d, e = graph
    accumulate = b.grad_fn.next_functions[0][0]
    assert accumulate.name() == "torch::autograd::AccumulateGrad"
    assert accumulate.variable is a and accumulate.next_functions == ()
    assert d.grad_fn.next_functions[0][0] is c.grad_fn is e.grad_fn.next_functions[0][0]


def test_what_each_node_saves(graph):
    a, b, c, d, e = graph
    assert b.grad_fn._saved_self is a
    assert b.grad_fn._saved_exponent == 2 and not torch.is_tensor(b.grad_fn._saved_exponent)
    assert c.grad_fn._saved_self is None
    assert c.grad_fn._saved_other.dtype == torch.int64 and c.grad_fn._saved_other.item() == 2
    for node in (d.grad_fn, e.grad_fn):  # sizes, no tensor
        assert not [n for n in dir(node) if n.startswith("_raw_saved_")]
    assert d.grad_fn._saved_self_sym_sizes == (1, 4) and d.grad_fn._saved_self_sym_numel == 4
    d.backward()
    assert [saved.freed for saved in saved_tensors(d, e)] == [True, True]


def test_a_saved_output_is_a_new_object_over_the_same_memory(graph):
    a = graph[0]
    for y in (a.exp(), a.sigmoid()):
        saved = y.grad_fn._saved_result
        assert saved is not y and torch.equal(saved, y)
        assert y.grad_fn._saved_result is not saved  # every read: a new object
        assert saved.data_ptr() == y.data_ptr()
        assert saved.untyped_storage().data_ptr() == y.untyped_storage().data_ptr()


def test_backward_needs_one_element_not_a_zero_dim_tensor(graph):
    a, _, c, d, _ = graph
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        d.backward(gradient=torch.tensor([1.]))
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        c.backward()
    total = c.sum(dim=1, keepdim=True)
    assert total.shape == (1, 1)
    total.backward()  # one element: no gradient= needed
    assert torch.allclose(a.grad, 4 * a)


def test_gradient_v_is_a_vector_jacobian_product(graph):
    a = graph[0]
    c = a ** 2 * 2
    v = torch.tensor([[1., 0., 2., 0.]])
    c.backward(gradient=v)
    jacobian = torch.autograd.functional.jacobian(lambda t: t ** 2 * 2, a.detach())
    assert torch.allclose(a.grad, torch.einsum("ij,ijkl->kl", v, jacobian))


def test_variable_returns_a_plain_leaf_tensor():
    from torch.autograd import Variable
    old_style = Variable(torch.rand(1, 4), requires_grad=True)
    assert type(old_style) is torch.Tensor and old_style.is_leaf and old_style.requires_grad


def test_backward_without_gradient_is_gradient_ones_like_the_output(graph):
    a, _, _, d, _ = graph
    d.backward(retain_graph=True)
    implicit, a.grad = a.grad, None
    d.backward(gradient=torch.ones_like(d))
    assert torch.equal(a.grad, implicit)


def test_section_6_shows_its_errors_on_fresh_graphs(graph):
    """Section 6 runs d.backward(gradient=...) first, so d's and c's nodes have freed what
    they saved. The two cells that raise build fresh graphs: their errors come from the shape
    check, and a reader who fixes the call gets a gradient, not the second-backward error
    that the used graph would raise."""
    a, _, c, d, _ = graph
    d.backward(gradient=torch.ones_like(d))
    a.grad = None
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (a ** 2 * 2).mean().backward(gradient=torch.tensor([1.]))
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (a ** 2 * 2).backward()
    assert a.grad is None  # the calls that raised added nothing
    (a ** 2 * 2).mean().backward(gradient=torch.tensor(1.))  # the first call, fixed
    assert torch.equal(a.grad, a)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        d.backward(gradient=torch.tensor(1.))  # the same fix on the used graph
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        c.sum().backward()  # why section 6 builds c again before gradient=v


def test_a_lives_on_held_by_you_and_by_its_accumulate_grad_node():
    """Section 4: after d.backward() the nodes let go of `a`, but its AccumulateGrad node,
    reachable from d and e, still holds it: dropping your own name does not free it."""
    import gc
    import weakref
    a = torch.rand(1, 4, requires_grad=True)  # not the fixture's: pytest holds that one
    b = a ** 2
    c = b * 2
    d, e = c.mean(), c.sum()
    d.backward()
    alive = weakref.ref(a)
    del a
    gc.collect()
    assert alive() is not None
    assert b.grad_fn.next_functions[0][0].variable is alive()
    del b, c, d, e
    gc.collect()
    assert alive() is None  # the graph dropped: nothing holds it any more
