"""Lesson 07's claims, recomputed with torch rather than read off the lesson's outputs:
the `detach` fix lowers the loss while the encoder gets no gradient; `retain_graph=True`
on the running-mean loop keeps 2,064 more bytes per step (64 x 8 float32 tanh outputs,
0.9 and 0.1 as 8-byte tensors), changes the trained weights, and makes each backward run
through 7 more nodes than the last; `retained_bytes(loss)` is 0 after a plain backward whatever a loop
carries; the bytes `check` reads after each backward of section 1's fix are the gradients and
the step's loss; detaching `centre` at the top of a step, unlike an update under no_grad,
leaves this step's share of the mean in the gradient; `nn.ReLU(inplace=True)` is harmless
after a Linear and fails after a Tanh."""
import torch
import torch.nn.functional as F
from torch import nn

import pytest

from autograd_lens import memory_timeline, retained_bytes
from lesson07_setup import make_net, x, y


def step(opt, loss, **backward_args):
    opt.zero_grad()
    loss.backward(**backward_args)
    opt.step()
    return loss.item()


def nodes(root):
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def running_mean_loop(retain, steps=5):
    encoder, head, opt = make_net()
    centre, kept, sizes = torch.zeros(8), [], []
    for _ in range(steps):
        if not retain:
            centre = centre.detach()
        features = encoder(x)
        centre = 0.9 * centre + 0.1 * features.mean(0)
        loss = F.mse_loss(head(features - centre), y)
        sizes.append(nodes(loss.grad_fn))
        step(opt, loss, retain_graph=retain)
        kept.append(retained_bytes(centre))
    return kept, sizes, [p.detach().clone() for m in (encoder, head) for p in m.parameters()]


def test_the_detach_fix_learns_but_leaves_the_encoder_without_gradient():
    encoder, head, opt = make_net()
    features = encoder(x).detach()
    losses = [step(opt, F.mse_loss(head(features), y)) for _ in range(5)]
    assert losses[-1] < losses[0]
    assert all(p.grad is None for p in encoder.parameters())
    assert all(p.grad is not None and p.grad.any() for p in head.parameters())


def test_retain_graph_keeps_2064_bytes_more_per_step_and_changes_the_weights():
    kept, sizes, retained_weights = running_mean_loop(retain=True)
    growth = [later - earlier for earlier, later in zip(kept, kept[1:])]
    assert growth == [64 * 8 * 4 + 2 * 8] * 4
    assert sizes == [14 + 7 * k for k in range(5)]  # 7 more nodes every step: 2,114 by step 300
    fixed_kept, fixed_sizes, fixed_weights = running_mean_loop(retain=False)
    assert fixed_kept == [0] * 5 and len(set(fixed_sizes)) == 1
    assert not all(torch.allclose(a, b) for a, b in zip(retained_weights, fixed_weights))


def test_retained_bytes_of_the_loss_is_0_after_a_plain_backward_even_in_a_leaking_loop():
    encoder, head, opt = make_net()
    centre = torch.zeros(8)
    features = encoder(x)
    centre = 0.9 * centre + 0.1 * features.mean(0)
    loss = F.mse_loss(head(features - centre), y)
    step(opt, loss)
    assert retained_bytes(loss) == 0


def test_the_bytes_after_each_backward_are_the_gradients_and_the_steps_loss():
    encoder, head, opt = make_net()
    params = [*encoder.parameters(), *head.parameters()]
    held = []
    with memory_timeline("cpu") as mem:
        for _ in range(3):
            loss = F.mse_loss(head(encoder(x)), y)
            step(opt, loss)
            held.append(sum(p.grad.untyped_storage().nbytes() for p in params)
                        + loss.untyped_storage().nbytes())
    after = [mem.events[phase.last].level for phase in mem.phases
             if phase.name.startswith("backward")]
    assert after == held == [452] * 3


def centred_weights(update):
    encoder, head, opt = make_net()
    centre = torch.zeros(8)
    for _ in range(5):
        features = encoder(x)
        if update == "detach at the top":
            centre = centre.detach()
            centre = 0.9 * centre + 0.1 * features.mean(0)
        else:
            with torch.no_grad():
                centre = 0.9 * centre + 0.1 * features.mean(0)
        step(opt, F.mse_loss(head(features - centre), y))
    return [p.detach().clone() for m in (encoder, head) for p in m.parameters()]


def test_detach_keeps_this_steps_share_of_the_mean_in_the_gradient_and_no_grad_does_not():
    detached, no_grad = centred_weights("detach at the top"), centred_weights("no_grad")
    assert not all(torch.allclose(a, b) for a, b in zip(detached, no_grad))


def test_in_place_relu_is_harmless_after_a_linear_and_fails_after_a_tanh():
    torch.manual_seed(0)
    after_linear = nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 1))
    F.mse_loss(after_linear(x), y).backward()
    after_tanh = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.ReLU(inplace=True), nn.Linear(8, 1))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        F.mse_loss(after_tanh(x), y).backward()
