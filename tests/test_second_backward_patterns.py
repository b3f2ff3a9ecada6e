"""Lesson 06's patterns on its own small models: each naive version fails for real, each
fix runs, and each fix computes what it should (checked against an independent
computation, not against itself)."""
import pytest
import torch
import torch.nn.functional as F

from autograd_lens import retained_bytes, saved_tensors, shared_nodes
from checks import global_rng_left_alone
from lesson_checks import lesson06
from lesson_checks.lesson06 import FREED_MESSAGE, INPLACE_MESSAGE
from lesson_checks.spying import watch_backward_calls

bce = F.binary_cross_entropy_with_logits
NO_GRAD_FN_MESSAGE = "element 0 of tensors does not require grad and does not have a grad_fn"


def same_tensors(first, second):
    return len(first) == len(second) and all(torch.equal(a, b) for a, b in zip(first, second))


def state_of(*modules):
    return [p.detach().clone() for module in modules for p in module.parameters()]


# The builders: the same models and data every time, the global RNG left alone.

@pytest.mark.parametrize("build", [lesson06.gan, lesson06.rnn_task, lesson06.lstm_task,
                                   lesson06.actor_critic])
def test_builders_are_seeded_and_leave_the_global_rng_alone(build):
    with global_rng_left_alone():
        first, second = build(), build()
    flat = []
    for built in (first, second):
        tensors = []
        for item in built:
            if isinstance(item, torch.nn.Module):
                tensors += [p.detach() for p in item.parameters()]
            elif isinstance(item, torch.Tensor):
                tensors.append(item)
            else:  # chunks or a batch: nested tuples of tensors
                for part in item:
                    tensors += list(part) if isinstance(part, (tuple, list)) else [part]
        flat.append(tensors)
    assert same_tensors(*flat)


def test_penalty_points_are_seeded_and_do_not_require_grad():
    assert torch.equal(lesson06.penalty_points(), lesson06.penalty_points())
    assert not lesson06.penalty_points().requires_grad


# 1. GAN: fake.detach() for the discriminator's step.

def gan_with_optimizers():
    G, D, real, z = lesson06.gan()
    return (G, D, real, z, torch.optim.SGD(G.parameters(), lr=0.1),
            torch.optim.SGD(D.parameters(), lr=0.1))


def d_step(G, D, real, fake, d_opt, **backward_args):
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake), torch.zeros(16, 1))
    d_opt.zero_grad()
    d_loss.backward(**backward_args)
    d_opt.step()
    return d_loss


def g_step_grads(G, D, fake, g_opt):
    g_loss = bce(D(fake), torch.ones(16, 1))
    g_opt.zero_grad()
    g_loss.backward()
    return [p.grad.clone() for p in G.parameters()]


def test_gan_naive_step_fails_on_the_generators_backward():
    G, D, real, z, g_opt, d_opt = gan_with_optimizers()
    fake = G(z)
    d_step(G, D, real, fake, d_opt)
    with pytest.raises(RuntimeError, match=FREED_MESSAGE):
        g_step_grads(G, D, fake, g_opt)


def test_gan_workaround_writes_into_the_generator_and_keeps_the_graph():
    G, D, real, z, g_opt, d_opt = gan_with_optimizers()
    fake = G(z)
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake), torch.zeros(16, 1))
    d_loss.backward(retain_graph=True)
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in G.parameters())
    assert retained_bytes(d_loss) > retained_bytes(fake) > 0


def test_gan_workaround_leaves_a_stale_discriminator_graph_behind():
    G, D, real, z, g_opt, d_opt = gan_with_optimizers()
    fake = G(z)
    d_loss = d_step(G, D, real, fake, d_opt, retain_graph=True)
    g_step_grads(G, D, fake, g_opt)
    rows = saved_tensors(d_loss)
    assert retained_bytes(fake) == 0  # G's part: freed by G's backward
    assert [row.freed for row in rows].count(True) == 4  # G's four saved tensors
    assert [row.modified for row in rows].count(True) == 3  # D's weights, stepped
    with pytest.raises(RuntimeError, match=INPLACE_MESSAGE):
        d_loss.backward()


def test_detach_shares_memory_and_drops_the_graph():
    G, _, _, z = lesson06.gan()
    fake = G(z)
    cut = fake.detach()
    assert cut.data_ptr() == fake.data_ptr() and cut.grad_fn is None and not cut.requires_grad


def test_gan_detach_fix_leaves_the_generator_alone_and_gives_the_same_gradients():
    G, D, real, z, g_opt, d_opt = gan_with_optimizers()
    fake = G(z)
    d_step(G, D, real, fake, d_opt, retain_graph=True)
    workaround_grads = g_step_grads(G, D, fake, g_opt)
    workaround_d = state_of(D)

    G, D, real, z, g_opt, d_opt = gan_with_optimizers()
    fake = G(z)
    g_graph_bytes = retained_bytes(fake)
    d_loss = d_step(G, D, real, fake.detach(), d_opt)
    assert all(p.grad is None for p in G.parameters())
    assert retained_bytes(d_loss) == 0 and retained_bytes(fake) == g_graph_bytes
    g_loss = bce(D(fake), torch.ones(16, 1))
    assert all(name.startswith("D.") for name in shared_nodes(
        d_loss, g_loss, params={f"D.{k}": p for k, p in D.named_parameters()}))
    fixed_grads = g_step_grads(G, D, fake, g_opt)
    assert all(torch.allclose(a, b) for a, b in zip(fixed_grads, workaround_grads))
    assert all(torch.allclose(a, b) for a, b in zip(state_of(D), workaround_d))


def test_gan_generator_gradients_match_a_separate_computation():
    # G's gradient after D's step, computed from scratch: D updated by hand, one fresh graph.
    G, D, real, z, g_opt, d_opt = gan_with_optimizers()
    fake = G(z)
    d_step(G, D, real, fake.detach(), d_opt)
    fixed_grads = g_step_grads(G, D, fake, g_opt)

    G2, D2, real2, z2 = lesson06.gan()
    d_loss = bce(D2(real2), torch.ones(16, 1)) + bce(D2(G2(z2).detach()), torch.zeros(16, 1))
    d_grads = torch.autograd.grad(d_loss, list(D2.parameters()))
    with torch.no_grad():
        for p, g in zip(D2.parameters(), d_grads):
            p -= 0.1 * g
    g_loss = bce(D2(G2(z2)), torch.ones(16, 1))
    expected = torch.autograd.grad(g_loss, list(G2.parameters()))
    assert all(torch.allclose(a, b) for a, b in zip(fixed_grads, expected))


# 2. RNN across chunks: hidden.detach() (truncated BPTT).

def rnn_with_optimizer():
    rnn, head, chunks = lesson06.rnn_task()
    return rnn, head, chunks, torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)


def run_chunks(rnn, head, chunks, opt=None, detach=False, retain=False):
    """Train chunk by chunk; returns per chunk the bytes its loss's graph held and how
    many chunk borders its backward crossed."""
    hidden = torch.zeros(1, 2, 8)
    kept, walked_back, crossings = [], [], []
    for inputs, targets in chunks:
        if detach:
            hidden = hidden.detach()
        outputs, hidden = rnn(inputs, hidden)
        hidden.register_hook(lambda grad: crossings.append(1))
        loss = F.mse_loss(head(outputs), targets)
        kept.append(retained_bytes(loss))
        before = len(crossings)
        if opt is not None:
            opt.zero_grad()
        loss.backward(retain_graph=retain)
        if opt is not None:
            opt.step()
        walked_back.append(len(crossings) - before)
    return kept, walked_back


def test_rnn_naive_fails_on_the_second_chunk():
    rnn, head, chunks, opt = rnn_with_optimizer()
    hidden = torch.zeros(1, 2, 8)
    trained = 0
    with pytest.raises(RuntimeError, match=FREED_MESSAGE):
        for inputs, targets in chunks:
            outputs, hidden = rnn(inputs, hidden)
            loss = F.mse_loss(head(outputs), targets)
            opt.zero_grad()
            loss.backward()
            opt.step()
            trained += 1
    assert trained == 1


def test_rnn_second_chunk_graph_holds_the_first_chunks_freed_tensors():
    rnn, head, chunks, opt = rnn_with_optimizer()
    hidden = torch.zeros(1, 2, 8)
    outputs, hidden = rnn(chunks[0][0], hidden)
    F.mse_loss(head(outputs), chunks[0][1]).backward()
    opt.step()
    outputs, hidden = rnn(chunks[1][0], hidden)
    loss = F.mse_loss(head(outputs), chunks[1][1])
    rows = saved_tensors(loss)
    assert 0 < sum(row.freed for row in rows) < len(rows)
    with pytest.raises(RuntimeError, match=FREED_MESSAGE):
        loss.backward()


def test_rnn_retain_graph_with_a_step_per_chunk_fails_in_place():
    rnn, head, chunks, opt = rnn_with_optimizer()
    hidden = torch.zeros(1, 2, 8)
    trained = 0
    with pytest.raises(RuntimeError, match=INPLACE_MESSAGE + r".*\[8, 8\]"):
        for inputs, targets in chunks:
            outputs, hidden = rnn(inputs, hidden)
            loss = F.mse_loss(head(outputs), targets)
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()
            trained += 1
    assert trained == 1
    # what was modified: the recurrent weight, saved by each of chunk 0's steps but the first
    modified = [row for row in saved_tensors(loss) if row.modified]
    assert len(modified) == 9 and all(row.attribute == "mat2" for row in modified)
    assert [n for n, p in rnn.named_parameters() if p.shape == (8, 8)] == ["weight_hh_l0"]
    with pytest.raises(ValueError, match="modified in place"):
        retained_bytes(loss)  # the library refuses to count what it cannot read


def test_rnn_retain_graph_without_steps_grows_linearly_and_walks_back():
    rnn, head, chunks = lesson06.rnn_task()
    kept, walked_back = run_chunks(rnn, head, chunks, retain=True)
    growth = [b - a for a, b in zip(kept, kept[1:])]
    assert len(set(growth)) == 1 and growth[0] > 0
    assert walked_back == list(range(len(chunks)))


def test_rnn_detach_keeps_memory_flat_and_backward_inside_the_chunk():
    rnn, head, chunks, opt = rnn_with_optimizer()
    kept, walked_back = run_chunks(rnn, head, chunks, opt, detach=True)
    assert kept == [kept[0]] * len(chunks) and walked_back == [0] * len(chunks)
    retained, _ = run_chunks(*lesson06.rnn_task(), retain=True)
    assert kept[0] == retained[0]


def test_rnn_detach_does_not_change_the_forward_pass():
    rnn, _, chunks = lesson06.rnn_task()
    carried, cut = torch.zeros(1, 2, 8), torch.zeros(1, 2, 8)
    for inputs, _ in chunks:
        _, carried = rnn(inputs, carried)
        _, cut = rnn(inputs, cut.detach())
    assert torch.equal(carried, cut)


def test_rnn_truncated_gradient_is_the_chunks_own_gradient():
    # With detach, chunk 1's gradient equals that of chunk 1 run alone from the state's value.
    rnn, head, chunks = lesson06.rnn_task()
    params = [*rnn.parameters(), *head.parameters()]
    hidden = torch.zeros(1, 2, 8)
    _, hidden = rnn(chunks[0][0], hidden)
    outputs, _ = rnn(chunks[1][0], hidden.detach())
    truncated = torch.autograd.grad(F.mse_loss(head(outputs), chunks[1][1]), params)

    with torch.no_grad():
        _, start = rnn(chunks[0][0], torch.zeros(1, 2, 8))
    outputs, _ = rnn(chunks[1][0], start)
    alone = torch.autograd.grad(F.mse_loss(head(outputs), chunks[1][1]), params)
    assert all(torch.allclose(a, b) for a, b in zip(truncated, alone))


# 3. Gradient penalty: create_graph=True.

def critic_and_points():
    G, D, real, z = lesson06.gan()
    eps = torch.rand(16, 1, generator=torch.Generator().manual_seed(0))
    points = (eps * real + (1 - eps) * G(z).detach()).requires_grad_()
    return D, points


def penalty_from(grad):
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def test_penalty_without_create_graph_cannot_be_backpropagated():
    D, points = critic_and_points()
    scores = D(points)
    (grad,) = torch.autograd.grad(scores.sum(), points)
    assert grad.grad_fn is None and retained_bytes(scores) == 0
    with pytest.raises(RuntimeError, match=NO_GRAD_FN_MESSAGE):
        penalty_from(grad).backward()


def test_retain_graph_alone_records_nothing_for_the_gradient():
    D, points = critic_and_points()
    (grad,) = torch.autograd.grad(D(points).sum(), points, retain_graph=True)
    assert grad.grad_fn is None


def test_create_graph_keeps_the_graph_and_reaches_the_weights():
    D, points = critic_and_points()
    scores = D(points)
    kept = retained_bytes(scores)
    (grad,) = torch.autograd.grad(scores.sum(), points, create_graph=True)
    assert grad.grad_fn is not None and retained_bytes(scores) == kept > 0
    penalty_from(grad).backward()
    assert D[2].bias.grad is None
    assert all(p.grad is not None for p in [D[0].weight, D[0].bias, D[2].weight])


def test_create_graph_without_retain_graph_fails_on_the_penalty():
    D, points = critic_and_points()
    (grad,) = torch.autograd.grad(D(points).sum(), points, create_graph=True,
                                  retain_graph=False)
    with pytest.raises(RuntimeError, match=FREED_MESSAGE):
        penalty_from(grad).backward()


def test_penalty_gradient_of_a_linear_critic_by_hand():
    torch.manual_seed(0)
    linear = torch.nn.Linear(2, 1)
    x = torch.randn(5, 2, requires_grad=True)
    (grad,) = torch.autograd.grad(linear(x).sum(), x, create_graph=True)
    penalty_from(grad).backward()
    w = linear.weight.detach()
    assert torch.allclose(linear.weight.grad, 2 * (w.norm() - 1) * w / w.norm())
    assert linear.bias.grad is None


def test_penalty_gradient_of_the_critic_passes_gradcheck():
    D64 = lesson06.gan()[1].double()
    names = [name for name, _ in D64.named_parameters()]
    x0 = lesson06.penalty_points().double()

    def penalty_of(*weights):
        x = x0.clone().requires_grad_()
        scores = torch.func.functional_call(D64, dict(zip(names, weights)), (x,))
        (grad,) = torch.autograd.grad(scores.sum(), x, create_graph=True)
        return penalty_from(grad)

    weights = tuple(p.detach().clone().requires_grad_() for p in D64.parameters())
    assert torch.autograd.gradcheck(penalty_of, weights)


def test_exercise_3_reference_penalty_by_hand_on_a_linear_critic():
    torch.manual_seed(0)
    linear = torch.nn.Linear(2, 1)
    w = linear.weight.detach()
    penalty = lesson06._reference_penalty(linear, lesson06.penalty_points())
    assert torch.allclose(penalty, (w.norm() - 1) ** 2)
    penalty.backward()
    assert torch.allclose(linear.weight.grad, 2 * (w.norm() - 1) * w / w.norm())


# 4. Two optimizers on a shared encoder: every gradient first, then the steps.

LR_ACTOR, LR_CRITIC = 0.1, 0.5


def actor_critic_with_optimizers():
    encoder, actor, critic, batch = lesson06.actor_critic()
    actor_opt = torch.optim.SGD([*encoder.parameters(), *actor.parameters()], lr=LR_ACTOR)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=LR_CRITIC)
    losses = lesson06.actor_critic_losses(encoder, actor, critic, batch)
    return (encoder, actor, critic), actor_opt, critic_opt, losses


def reference_weights():
    """One SGD update on the sum of both losses, every gradient at the starting weights:
    each loss's gradient taken on its own and added by hand."""
    encoder, actor, critic, batch = lesson06.actor_critic()
    actor_side, critic_side = [*encoder.parameters(), *actor.parameters()], [*critic.parameters()]
    weights = actor_side + critic_side
    actor_loss, critic_loss = lesson06.actor_critic_losses(encoder, actor, critic, batch)
    actor_grads = torch.autograd.grad(actor_loss, weights, retain_graph=True, allow_unused=True)
    critic_grads = torch.autograd.grad(critic_loss, weights, allow_unused=True)
    assert all(g is None for g in actor_grads[len(actor_side):])  # the actor ignores the critic
    assert all(g is None for g in critic_grads[len(actor_side) - 2:len(actor_side)])  # and back
    rates = [LR_ACTOR] * len(actor_side) + [LR_CRITIC] * len(critic_side)
    return [w.detach() - rate * sum(g for g in (a, c) if g is not None)
            for w, a, c, rate in zip(weights, actor_grads, critic_grads, rates)]


def test_actor_critic_losses_share_only_the_encoder():
    (encoder, actor, critic), _, _, (actor_loss, critic_loss) = actor_critic_with_optimizers()
    names = {**{f"encoder.{k}": p for k, p in encoder.named_parameters()},
             **{f"actor.{k}": p for k, p in actor.named_parameters()},
             **{f"critic.{k}": p for k, p in critic.named_parameters()}}
    shared = shared_nodes(actor_loss, critic_loss, params=names)
    assert {"encoder.0.weight", "encoder.2.weight"} <= set(shared)
    assert not any(name.startswith(("actor.", "critic.")) for name in shared)


def test_stepping_between_the_backwards_fails_freed():
    _, actor_opt, critic_opt, (actor_loss, critic_loss) = actor_critic_with_optimizers()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    with pytest.raises(RuntimeError, match=FREED_MESSAGE):
        critic_loss.backward()


def test_stepping_between_the_backwards_with_retain_graph_fails_in_place():
    (encoder, _, _), actor_opt, _, (actor_loss, critic_loss) = actor_critic_with_optimizers()
    actor_loss.backward(retain_graph=True)
    actor_opt.step()
    with pytest.raises(RuntimeError, match=INPLACE_MESSAGE + r".*\[16, 16\]"):
        critic_loss.backward()
    assert [n for n, p in encoder.named_parameters() if p.shape == (16, 16)] == ["2.weight"]
    modified = [(row.node, row.attribute) for row in saved_tensors(critic_loss) if row.modified]
    assert modified == [("AddmmBackward0 #2", "mat2")]


def test_one_backward_of_the_sum_then_both_steps_matches_the_reference():
    modules, actor_opt, critic_opt, (actor_loss, critic_loss) = actor_critic_with_optimizers()
    actor_opt.zero_grad()
    critic_opt.zero_grad()
    (actor_loss + critic_loss).backward()
    actor_opt.step()
    critic_opt.step()
    assert all(torch.allclose(a, b) for a, b in zip(state_of(*modules), reference_weights()))


def test_two_backwards_before_any_step_match_the_reference():
    modules, actor_opt, critic_opt, (actor_loss, critic_loss) = actor_critic_with_optimizers()
    actor_opt.zero_grad()
    critic_opt.zero_grad()
    actor_loss.backward(retain_graph=True)
    critic_loss.backward()
    actor_opt.step()
    critic_opt.step()
    assert all(torch.allclose(a, b) for a, b in zip(state_of(*modules), reference_weights()))


# 5. Where retain_graph=True is right: Jacobian rows.

def test_jacobian_rows_with_retain_graph_on_all_but_the_last():
    x = torch.tensor([0.5, -1.0], requires_grad=True)
    A = torch.tensor([[1.0, 2.0], [3.0, -1.0]])
    y = A @ x.tanh()
    first = torch.autograd.grad(y[0], x, retain_graph=True)[0]
    assert not any(row.freed for row in saved_tensors(y))
    last = torch.autograd.grad(y[1], x)[0]
    assert all(row.freed for row in saved_tensors(y))
    assert torch.allclose(torch.stack([first, last]), A * (1 - x.detach().tanh() ** 2))
    y = A @ x.tanh()
    torch.autograd.grad(y[0], x)
    with pytest.raises(RuntimeError, match=FREED_MESSAGE):
        torch.autograd.grad(y[1], x)  # without retain_graph the second row fails


# Exercise 1's reference: truncated BPTT with an LSTM, whose state is a pair.

def test_lstm_without_detaching_fails_and_the_reference_runs_flat():
    lstm, head, chunks = lesson06.lstm_task()
    optimizer = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.1)
    state = None
    with pytest.raises(RuntimeError, match=FREED_MESSAGE):
        for inputs, targets in chunks:
            outputs, state = lstm(inputs, state)
            loss = F.mse_loss(head(outputs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    lstm, head, chunks = lesson06.lstm_task()
    optimizer = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.1)
    with watch_backward_calls() as calls:
        lesson06._reference_lstm_training(lstm, head, chunks, optimizer)
    assert len(calls) == len(chunks) and not any(call.retain_graph for call in calls)
    assert len({call.retained_bytes for call in calls}) == 1
