"""backward_passes(module): counts the backward passes that compute gradients for the
module's parameters, changes no number, and leaves no hook behind."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograd_lens import BackwardPasses, backward_passes


class TwoHeads(nn.Module):
    """A shared trunk and two heads, small: what the counting is for."""

    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU())
        self.head1 = nn.Linear(8, 1)
        self.head2 = nn.Linear(8, 3)

    def forward(self, x):
        features = self.trunk(x)
        return self.head1(features).squeeze(-1), self.head2(features)


def fresh():
    """A model and its two losses, the same numbers at every call."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(6, 4, generator=generator)
    y = torch.randn(6, generator=generator)
    labels = torch.randint(0, 3, (6,), generator=generator)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        model = TwoHeads()
    prediction, logits = model(x)
    return model, F.mse_loss(prediction, y), F.cross_entropy(logits, labels)


# The five ways of lesson 04 to the gradients of loss1 + loss2.

def two_backward_calls(model, loss1, loss2):
    loss1.backward(retain_graph=True)
    loss2.backward()


def summed_loss(model, loss1, loss2):
    (loss1 + loss2).backward()


def backward_on_a_list(model, loss1, loss2):
    torch.autograd.backward([loss1, loss2])


def summed_autograd_grad(model, loss1, loss2):
    params = list(model.parameters())
    grads1 = torch.autograd.grad(loss1, params, retain_graph=True, materialize_grads=True)
    grads2 = torch.autograd.grad(loss2, params, materialize_grads=True)
    return [g1 + g2 for g1, g2 in zip(grads1, grads2)]


def autograd_grad_on_a_list(model, loss1, loss2):
    return torch.autograd.grad([loss1, loss2], list(model.parameters()))


@pytest.mark.parametrize("way, passes", [
    (two_backward_calls, 2), (summed_loss, 1), (backward_on_a_list, 1),
    (summed_autograd_grad, 2), (autograd_grad_on_a_list, 1)])
def test_the_count_for_each_of_the_five_ways(way, passes):
    model, loss1, loss2 = fresh()
    with backward_passes(model.trunk) as counted:
        way(model, loss1, loss2)
    assert counted.count == passes


def test_the_count_moves_call_by_call():
    model, loss1, loss2 = fresh()
    with backward_passes(model.trunk) as counted:
        assert counted.count == 0  # the forward pass ran before: nothing counted yet
        loss1.backward(retain_graph=True)
        assert counted.count == 1
        loss2.backward()
        assert counted.count == 2


def test_a_head_counts_only_the_passes_of_its_own_loss():
    model, loss1, loss2 = fresh()
    with backward_passes(model.head1) as head1, backward_passes(model.head2) as head2:
        two_backward_calls(model, loss1, loss2)
    assert (head1.count, head2.count) == (1, 1)


def test_passes_that_need_none_of_the_parameters_do_not_count():
    x = torch.randn(6, 4, requires_grad=True)
    model = TwoHeads()
    with backward_passes(model.trunk) as counted:
        prediction, _ = model(x)
        torch.autograd.grad(prediction.sum(), [x], retain_graph=True)  # through the trunk, to x
        prediction.sum().backward(inputs=list(model.head1.parameters()))
    assert counted.count == 0
    assert all(p.grad is None for p in model.trunk.parameters())


def test_a_second_order_pass_counts_too():
    model, loss1, _ = fresh()
    with backward_passes(model.trunk) as counted:
        grads = torch.autograd.grad(loss1, list(model.trunk.parameters()), create_graph=True)
        sum(g.pow(2).sum() for g in grads).backward()  # a gradient penalty
    assert counted.count == 2


def test_the_numbers_are_the_same_with_and_without_counting():
    model, loss1, loss2 = fresh()
    two_backward_calls(model, loss1, loss2)
    plain = [p.grad.clone() for p in model.parameters()]
    model, loss1, loss2 = fresh()
    with backward_passes(model.trunk), backward_passes(model):
        two_backward_calls(model, loss1, loss2)
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), plain))
    returned = autograd_grad_on_a_list(*fresh())
    model, loss1, loss2 = fresh()
    with backward_passes(model.trunk):
        counted = autograd_grad_on_a_list(model, loss1, loss2)
    assert all(torch.equal(c, g) for c, g in zip(counted, returned))


def hooks_on(module):
    return sum(len(p._backward_hooks or {}) for p in module.parameters())


def test_hooks_are_installed_in_the_block_and_removed_after():
    model, loss1, loss2 = fresh()
    assert hooks_on(model) == 0
    with backward_passes(model.trunk) as counted:
        assert hooks_on(model.trunk) == 4 and hooks_on(model.head1) == 0
    assert hooks_on(model) == 0
    two_backward_calls(model, loss1, loss2)  # after the block: not counted
    assert counted.count == 0


def test_hooks_are_removed_and_the_error_goes_on_when_the_block_raises():
    model, loss1, loss2 = fresh()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        with backward_passes(model.trunk) as counted:
            loss1.backward()
            loss2.backward()  # the trunk's saved tensors were freed
    assert counted.count == 1
    assert hooks_on(model) == 0


def test_the_readers_own_hooks_still_run():
    model, loss1, _ = fresh()
    seen = []
    handle = model.trunk[0].weight.register_hook(lambda grad: seen.append(grad.shape))
    with backward_passes(model.trunk):
        loss1.backward()
    assert seen == [(8, 4)] and hooks_on(model) == 1
    handle.remove()


def test_frozen_parameters_are_left_out():
    model, loss1, _ = fresh()
    model.trunk[2].requires_grad_(False)
    with backward_passes(model.trunk) as counted:
        loss1.backward()
    assert counted.count == 1 and hooks_on(model.trunk[2]) == 0


def test_what_it_shows():
    model, loss1, loss2 = fresh()
    with backward_passes(model.trunk) as counted:
        two_backward_calls(model, loss1, loss2)
    assert isinstance(counted, BackwardPasses)
    assert repr(counted) == "2 backward passes computed gradients for the parameters of Sequential"


@pytest.mark.parametrize("not_a_module", [torch.ones(2, requires_grad=True),
                                          [nn.Linear(2, 2)], None, "trunk"])
def test_not_a_module(not_a_module):
    with pytest.raises(TypeError, match="needs an nn.Module, e.g. backward_passes"):
        backward_passes(not_a_module)


@pytest.mark.parametrize("module", [nn.ReLU(), nn.Linear(2, 2).requires_grad_(False)],
                         ids=["no parameters", "frozen"])
def test_a_module_without_trainable_parameters(module):
    with pytest.raises(ValueError, match="no parameters that require grad.*requires_grad=True"):
        backward_passes(module)


def test_the_same_block_cannot_be_entered_twice_at_once():
    counting = backward_passes(nn.Linear(2, 2))
    with counting:
        with pytest.raises(RuntimeError, match="already running"):
            with counting:
                pass
