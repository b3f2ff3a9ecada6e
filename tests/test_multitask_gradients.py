"""Lesson 04's claims about two losses on a shared trunk, checked on several architectures.

- the five ways to get the gradients of loss1 + loss2 give the same gradients, and the
  autograd.grad ways leave .grad alone;
- without retain_graph=True, the second loss's backward fails in the shared trunk;
- optimizer.step() between the two backward calls fails the version check;
- one backward pass from both losses walks the trunk once, a call per loss walks it twice;
- what the saved tensors keep alive at the end of the forward pass (the same for every
  way), between the calls and after them (retained_bytes);
- weighting the losses weights the gradients.

The lesson's model, TwoHeadNet, is defined in the notebook only: `lesson_definition`
runs the notebook's own cell to get it.
"""
import nbformat
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograd_lens import backward_passes, retained_bytes
from project import ROOT

LESSON = ROOT / "notebooks" / "04_multi_task_losses.ipynb"


def lesson_definition(name):
    """A class or function as lesson 04 defines it, from running the notebook cell that
    defines it (the cell only defines; it needs torch, nn and F, as the lesson imports them)."""
    notebook = nbformat.read(LESSON, as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "code"
                and (f"class {name}(" in c.source or f"def {name}(" in c.source))
    namespace = {"torch": torch, "nn": nn, "F": F}
    exec(compile(cell.source, f"{LESSON.name}: the cell defining {name}", "exec"), namespace)
    return namespace[name]


TwoHeadNet = lesson_definition("TwoHeadNet")  # the lesson's model: MLP trunk, two heads


class SequenceTwoHead(nn.Module):
    """A recurrent trunk (embedding + GRU); a sequence score and a tag per token."""

    def __init__(self, vocabulary=20, hidden=16, n_tags=5):
        super().__init__()
        self.trunk = nn.ModuleDict(dict(embed=nn.Embedding(vocabulary, 8),
                                        gru=nn.GRU(8, hidden, batch_first=True)))
        self.score_head = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.tag_head = nn.Linear(hidden, n_tags)

    def run_trunk(self, tokens):
        outputs, last = self.trunk["gru"](self.trunk["embed"](tokens))
        return outputs, last[-1]

    def forward(self, tokens):
        outputs, last = self.run_trunk(tokens)
        return self.score_head(last).squeeze(-1), self.tag_head(outputs)


class DeepAndShallowHeads(nn.Module):
    """A trunk with LayerNorm and GELU; head 1 three layers deep, head 2 one layer."""

    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 24), nn.LayerNorm(24), nn.GELU())
        self.deep_head = nn.Sequential(nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 1))
        self.shallow_head = nn.Linear(24, 4)

    def forward(self, x):
        features = self.trunk(x)
        return self.deep_head(features).squeeze(-1), self.shallow_head(features)


# Each case returns (model, trunk, losses): the model, its shared trunk, and a function
# computing (loss1, loss2).

def mlp_case():
    # the lesson's model, on data of the lesson's kind
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(64, 8, generator=generator)
    y_reg = torch.sin(x @ torch.randn(8, generator=generator))
    y_cls = torch.randint(0, 3, (64,), generator=generator)
    torch.manual_seed(1)
    model = TwoHeadNet()

    def losses():
        prediction, logits = model(x)
        return F.mse_loss(prediction, y_reg), F.cross_entropy(logits, y_cls)
    return model, model.trunk, losses


def sequence_case():
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, 20, (4, 7), generator=generator)
    scores = torch.randn(4, generator=generator)
    tags = torch.randint(0, 5, (4, 7), generator=generator)
    torch.manual_seed(1)
    model = SequenceTwoHead()

    def losses():
        score, tag_logits = model(tokens)
        return F.mse_loss(score, scores), F.cross_entropy(tag_logits.reshape(-1, 5), tags.reshape(-1))
    return model, model.trunk, losses


def deep_and_shallow_case():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(32, 6, generator=generator)
    y = torch.randn(32, generator=generator)
    labels = torch.randint(0, 4, (32,), generator=generator)
    torch.manual_seed(1)
    model = DeepAndShallowHeads()

    def losses():
        prediction, logits = model(x)
        return F.smooth_l1_loss(prediction, y), F.cross_entropy(logits, labels)
    return model, model.trunk, losses


CASES = [mlp_case, sequence_case, deep_and_shallow_case]
ARCHITECTURES = pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)


# The five ways of the lesson: each fills or returns the gradients of loss1 + loss2.

def two_backward_calls(model, loss1, loss2):
    loss1.backward(retain_graph=True)
    loss2.backward()
    return {name: p.grad for name, p in model.named_parameters()}


def summed_loss(model, loss1, loss2):
    (loss1 + loss2).backward()
    return {name: p.grad for name, p in model.named_parameters()}


def backward_on_a_list(model, loss1, loss2):
    torch.autograd.backward([loss1, loss2])
    return {name: p.grad for name, p in model.named_parameters()}


def summed_autograd_grad(model, loss1, loss2):
    names, params = zip(*model.named_parameters())
    grads1 = torch.autograd.grad(loss1, params, retain_graph=True, materialize_grads=True)
    grads2 = torch.autograd.grad(loss2, params, materialize_grads=True)
    return {name: g1 + g2 for name, g1, g2 in zip(names, grads1, grads2)}


def autograd_grad_on_a_list(model, loss1, loss2):
    names, params = zip(*model.named_parameters())
    return dict(zip(names, torch.autograd.grad([loss1, loss2], params)))


WAYS = [two_backward_calls, summed_loss, backward_on_a_list, summed_autograd_grad,
        autograd_grad_on_a_list]
ONE_PASS = {"summed_loss", "backward_on_a_list", "autograd_grad_on_a_list"}


def gradients_by(case, way):
    model, _, losses = case()
    return way(model, *losses())


@ARCHITECTURES
def test_the_five_ways_give_the_same_gradients(case):
    reference = gradients_by(case, two_backward_calls)
    assert all(grad is not None for grad in reference.values())
    for way in WAYS[1:]:
        grads = gradients_by(case, way)
        assert grads.keys() == reference.keys()
        for name in reference:
            assert torch.allclose(grads[name], reference[name], atol=1e-7), (way.__name__, name)


@ARCHITECTURES
@pytest.mark.parametrize("way", [summed_autograd_grad, autograd_grad_on_a_list])
def test_the_autograd_grad_ways_leave_grad_alone(case, way):
    model, _, losses = case()
    way(model, *losses())
    assert all(p.grad is None for p in model.parameters())


@ARCHITECTURES
def test_the_sum_of_the_per_task_gradients_is_not_either_one(case):
    """The check above is not vacuous: each task contributes to the shared trunk."""
    model, trunk, losses = case()
    loss1, loss2 = losses()
    trunk_params = list(trunk.parameters())
    grads1 = torch.autograd.grad(loss1, trunk_params, retain_graph=True)
    grads2 = torch.autograd.grad(loss2, trunk_params)
    assert any(g.abs().sum() > 0 for g in grads1) and any(g.abs().sum() > 0 for g in grads2)
    assert not all(torch.allclose(g1 + g2, g1) for g1, g2 in zip(grads1, grads2))


@ARCHITECTURES
def test_second_backward_without_retain_graph_fails(case):
    _, _, losses = case()
    loss1, loss2 = losses()
    loss1.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss2.backward()


@ARCHITECTURES
def test_step_between_the_backward_calls_fails_the_version_check(case):
    model, _, losses = case()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss1, loss2 = losses()
    loss1.backward(retain_graph=True)
    optimizer.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss2.backward()


def test_the_version_error_names_a_trunk_weight_and_no_address():
    """The lesson stores this message: it must be the same in every run."""
    model, _, losses = mlp_case()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss1, loss2 = losses()
    loss1.backward(retain_graph=True)
    optimizer.step()
    with pytest.raises(RuntimeError) as error:
        loss2.backward()
    message = str(error.value)
    assert "[torch.FloatTensor [32, 32]]" in message  # trunk.2.weight, saved transposed
    assert "is at version 2; expected version 1 instead" in message
    assert "0x" not in message


@ARCHITECTURES
def test_one_step_after_both_backwards_equals_one_step_on_the_sum(case):
    def seed_order(model, loss1, loss2):
        loss1.backward(retain_graph=True)
        loss2.backward()

    def summed(model, loss1, loss2):
        (loss1 + loss2).backward()

    updated = []
    for backward in (seed_order, summed):
        model, _, losses = case()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        backward(model, *losses())
        optimizer.step()
        updated.append(torch.nn.utils.parameters_to_vector(model.parameters()).detach())
    assert torch.allclose(updated[0], updated[1], atol=1e-7)


def trunk_passes(case, way):
    model, trunk, losses = case()
    loss1, loss2 = losses()
    with backward_passes(trunk) as passes:
        way(model, loss1, loss2)
    return passes.count


@ARCHITECTURES
def test_one_pass_from_both_losses_walks_the_trunk_once(case):
    passes = {way.__name__: trunk_passes(case, way) for way in WAYS}
    assert passes == {name: 1 if name in ONE_PASS else 2 for name in passes}


def test_retained_bytes_of_the_lesson_model():
    """The lesson's numbers, on its data size: 80,900 bytes saved, 34,816 left in head 1."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(256, 8, generator=generator)
    y_reg, y_cls = torch.randn(256, generator=generator), torch.randint(0, 3, (256,))
    torch.manual_seed(1)
    model = TwoHeadNet()
    prediction, logits = model(x)
    loss1, loss2 = F.mse_loss(prediction, y_reg), F.cross_entropy(logits, y_cls)
    # x (256x8 floats) + two ReLU outputs (256x32) + MSE's input and target (256 each)
    # + log-softmax output (256x3) + the int64 labels (256) + NLL's total weight (one float).
    assert retained_bytes(loss1, loss2) == 4 * (256 * 8 + 2 * 256 * 32 + 2 * 256 + 256 * 3) \
        + 8 * 256 + 4 == 80_900
    loss1.backward(retain_graph=True)
    assert retained_bytes(loss1, loss2) == 80_900
    loss2.backward()
    # head 1 keeps its MSE input and target, and the features it read (256x32)
    assert retained_bytes(loss1, loss2) == 4 * (2 * 256 + 256 * 32) == 34_816


@ARCHITECTURES
def test_what_the_saved_tensors_keep_alive(case):
    # between the two calls: everything the forward pass saved is still there
    _, _, losses = case()
    loss1, loss2 = losses()
    after_forward = retained_bytes(loss1, loss2)
    assert after_forward > 0
    loss1.backward(retain_graph=True)
    assert retained_bytes(loss1, loss2) == after_forward
    loss2.backward()
    left_by_two_calls = retained_bytes(loss1, loss2)
    assert 0 < left_by_two_calls < after_forward  # head 1's saved tensors outlive the calls

    # every way starts from the same saved bytes, their highest; only what is left after differs
    for way in WAYS:
        model, _, losses = case()
        loss1, loss2 = losses()
        assert retained_bytes(loss1, loss2) == after_forward, way.__name__
        way(model, loss1, loss2)
        left = 0 if way.__name__ in ONE_PASS else left_by_two_calls
        assert retained_bytes(loss1, loss2) == left, way.__name__


@ARCHITECTURES
def test_weighting_the_losses_weights_the_gradients(case):
    model, _, losses = case()
    params = list(model.parameters())
    loss1, loss2 = losses()
    grads1 = torch.autograd.grad(loss1, params, retain_graph=True, materialize_grads=True)
    grads2 = torch.autograd.grad(loss2, params, retain_graph=True, materialize_grads=True)
    weighted = torch.autograd.grad(0.3 * loss1 + 0.7 * loss2, params, materialize_grads=True)
    for g1, g2, g in zip(grads1, grads2, weighted):
        assert torch.allclose(0.3 * g1 + 0.7 * g2, g, atol=1e-7)


def test_autograd_grad_refuses_a_parameter_the_loss_does_not_reach():
    model, _, losses = mlp_case()
    loss1, _ = losses()
    with pytest.raises(RuntimeError, match="index 6 appears to not have been used"):
        torch.autograd.grad(loss1, list(model.parameters()))
    assert [name for name, _ in model.named_parameters()][6] == "classification_head.weight"
