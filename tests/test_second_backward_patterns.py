"""Lesson 06's patterns, on set-ups built here like the lesson's own: each naive version
fails for real, each fix runs, and each fix computes what it should (checked against an
independent computation, not against itself)."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograd_lens import draw, retained_bytes, saved_tensors, shared_nodes
from lesson_checks import lesson06
from lesson_checks.errors import FREED, VERSION
from lesson_checks.seeding import seeded
from lesson_checks.spying import watch_backward_calls

bce = F.binary_cross_entropy_with_logits
NO_GRAD_FN = "element 0 of tensors does not require grad and does not have a grad_fn"


def state_of(*modules):
    return [p.detach().clone() for module in modules for p in module.parameters()]


def all_close(first, second):
    return len(first) == len(second) and all(torch.allclose(a, b) for a, b in zip(first, second))


# 1. GAN: fake.detach() for the discriminator's half.

def make_gan():
    with seeded(0):
        G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        D = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        real = torch.randn(16, 2) * 0.3 + torch.tensor([2.0, 1.0])
        z = torch.randn(16, 4)
    return (G, D, torch.optim.SGD(G.parameters(), lr=0.1),
            torch.optim.SGD(D.parameters(), lr=0.1), real, z)


def d_half(D, real, fake, d_opt, **backward_args):
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake), torch.zeros(16, 1))
    d_opt.zero_grad()
    d_loss.backward(**backward_args)
    d_opt.step()
    return d_loss


def g_half(G, D, fake, g_opt):
    g_loss = bce(D(fake), torch.ones(16, 1))
    g_opt.zero_grad()
    g_loss.backward()
    return [p.grad.clone() for p in G.parameters()]


def names_of(**modules):
    return {f"{prefix}.{k}": p for prefix, module in modules.items()
            for k, p in module.named_parameters()}


def test_gan_naive_step_fails_and_its_backward_frees_what_it_passed():
    G, D, g_opt, d_opt, real, z = make_gan()
    fake = G(z)
    d_half(D, real, fake, d_opt)
    g_loss = bce(D(fake), torch.ones(16, 1))
    assert retained_bytes(g_loss) > 0  # D's new part is live before G's backward
    with pytest.raises(RuntimeError, match=FREED):
        g_loss.backward()
    assert retained_bytes(g_loss) == 0  # the failed backward freed D's part on its way to G


def test_gan_summary_and_drawing_of_the_same_outputs_use_the_same_names():
    G, D, g_opt, d_opt, real, z = make_gan()
    fake = G(z)
    d_loss = d_half(D, real, fake, d_opt)
    g_loss = bce(D(fake), torch.ones(16, 1))
    names = names_of(G=G, D=D)
    shared = shared_nodes(d_loss, g_loss, params=names)
    summary = draw(d_loss, g_loss, params=names, show_saved=False).summary
    marked = [line.strip().split("  ")[0] for line in summary.splitlines() if "[shared by" in line]
    assert marked == shared
    assert {"AddmmBackward0 #5", "AddmmBackward0 #6", "ReluBackward0"} <= set(shared)
    # What the lesson used to do: G's graph drawn alone numbers the same nodes differently.
    alone = draw(fake, params=names).summary
    assert "AddmmBackward0 #1" in alone and "AddmmBackward0 #5" not in alone


def test_gan_workaround_writes_into_the_generator_and_keeps_the_graph():
    G, D, g_opt, d_opt, real, z = make_gan()
    fake = G(z)
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake), torch.zeros(16, 1))
    d_loss.backward(retain_graph=True)
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in G.parameters())
    assert retained_bytes(d_loss) > retained_bytes(fake) > 0


def test_gan_detach_fix_leaves_the_generator_alone_and_gives_the_same_gradients():
    G, D, g_opt, d_opt, real, z = make_gan()
    fake = G(z)
    d_half(D, real, fake, d_opt, retain_graph=True)
    workaround = g_half(G, D, fake, g_opt)

    G, D, g_opt, d_opt, real, z = make_gan()
    fake = G(z)
    cut = fake.detach()
    assert cut.data_ptr() == fake.data_ptr() and cut.grad_fn is None
    d_loss = d_half(D, real, cut, d_opt)
    assert all(p.grad is None for p in G.parameters()) and retained_bytes(d_loss) == 0
    assert all_close(g_half(G, D, fake, g_opt), workaround)


def test_gan_generator_gradients_match_a_separate_computation():
    # G's gradient after D's step, from scratch: D updated by hand, one fresh graph.
    G, D, g_opt, d_opt, real, z = make_gan()
    fake = G(z)
    d_half(D, real, fake.detach(), d_opt)
    fixed = g_half(G, D, fake, g_opt)

    G, D, _, _, real, z = make_gan()
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(G(z).detach()), torch.zeros(16, 1))
    d_grads = torch.autograd.grad(d_loss, list(D.parameters()))
    with torch.no_grad():
        for p, g in zip(D.parameters(), d_grads):
            p -= 0.1 * g
    expected = torch.autograd.grad(bce(D(G(z)), torch.ones(16, 1)), list(G.parameters()))
    assert all_close(fixed, expected)


# 2. RNN across chunks: hidden.detach() (truncated BPTT).

def make_rnn():
    with seeded(0):
        rnn, head = nn.RNN(1, 8, batch_first=True), nn.Linear(8, 1)
    return rnn, head, torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)


CHUNKS = lesson06.waves_in_chunks()  # the lesson's waves, as the checker builds them


def test_the_checkers_chunks_are_the_lessons():
    t = torch.linspace(0, 6, 41)
    waves = torch.stack([t.sin(), (t + 1).sin()]).unsqueeze(-1)
    assert len(CHUNKS) == 4
    for k, (inputs, targets) in enumerate(CHUNKS):
        assert torch.equal(inputs, waves[:, 10 * k:10 * k + 10])
        assert torch.equal(targets, waves[:, 10 * k + 1:10 * k + 11])


def train_chunks(rnn, head, opt=None, detach=False, retain=False):
    """Chunk by chunk; the bytes each chunk's loss graph holds. Steps only with an `opt`."""
    hidden, kept = torch.zeros(1, 2, 8), []
    for inputs, targets in CHUNKS:
        if detach:
            hidden = hidden.detach()
        outputs, hidden = rnn(inputs, hidden)
        loss = F.mse_loss(head(outputs), targets)
        kept.append(retained_bytes(loss))
        if opt is not None:
            opt.zero_grad()
        loss.backward(retain_graph=retain)
        if opt is not None:
            opt.step()
    return kept


def test_rnn_plain_loop_fails_freed_on_the_second_chunk():
    rnn, head, opt = make_rnn()
    hidden, trained = torch.zeros(1, 2, 8), 0
    with pytest.raises(RuntimeError, match=FREED):
        for inputs, targets in CHUNKS:
            outputs, hidden = rnn(inputs, hidden)
            opt.zero_grad()
            F.mse_loss(head(outputs), targets).backward()
            opt.step()
            trained += 1
    assert trained == 1


def test_rnn_retain_graph_with_a_step_per_chunk_fails_on_the_recurrent_weight():
    rnn, head, opt = make_rnn()
    hidden, trained = torch.zeros(1, 2, 8), 0
    with pytest.raises(RuntimeError, match=VERSION + r".*\[8, 8\]"):
        for inputs, targets in CHUNKS:
            outputs, hidden = rnn(inputs, hidden)
            opt.zero_grad()
            F.mse_loss(head(outputs), targets).backward(retain_graph=True)
            opt.step()
            trained += 1
    assert trained == 1
    assert [n for n, p in rnn.named_parameters() if p.shape == (8, 8)] == ["weight_hh_l0"]


def test_rnn_retain_graph_without_steps_grows_by_the_recurrent_path_only():
    rnn, head, _ = make_rnn()
    kept = train_chunks(rnn, head, retain=True)
    _, handed_on = rnn(CHUNKS[0][0], torch.zeros(1, 2, 8))
    path = retained_bytes(handed_on)
    assert path == (10 + 1) * 2 * 8 * 4 + 2 * 10 * 4  # 11 hidden states of 2 x 8, the inputs
    assert [b - a for a, b in zip(kept, kept[1:])] == [path] * 3
    assert kept[0] - path == 1048  # the head's and the loss's part, not carried on
    # what the growth holds: one storage per hidden state, the start state, the inputs' copy
    storages = {row.tensor.untyped_storage().data_ptr(): row.tensor.untyped_storage().nbytes()
                for row in saved_tensors(handed_on) if not row.is_leaf}
    assert sorted(storages.values()) == [64] * 11 + [80]


def test_rnn_detach_keeps_memory_flat_at_one_chunks_graph():
    rnn, head, opt = make_rnn()
    kept = train_chunks(rnn, head, opt, detach=True)
    retained = train_chunks(*make_rnn()[:2], retain=True)
    assert kept == [retained[0]] * len(CHUNKS)


def test_rnn_truncated_gradient_is_the_chunks_own_gradient():
    # With detach, chunk 1's gradient equals that of chunk 1 run alone from the state's value.
    rnn, head, _ = make_rnn()
    params = [*rnn.parameters(), *head.parameters()]
    _, hidden = rnn(CHUNKS[0][0], torch.zeros(1, 2, 8))
    outputs, _ = rnn(CHUNKS[1][0], hidden.detach())
    truncated = torch.autograd.grad(F.mse_loss(head(outputs), CHUNKS[1][1]), params)
    with torch.no_grad():
        _, start = rnn(CHUNKS[0][0], torch.zeros(1, 2, 8))
    outputs, _ = rnn(CHUNKS[1][0], start)
    alone = torch.autograd.grad(F.mse_loss(head(outputs), CHUNKS[1][1]), params)
    assert all_close(truncated, alone)


# 3. Gradient penalty: create_graph=True, and a critic without batch statistics.

def critic_and_points():
    G, D, _, _, real, z = make_gan()
    with seeded(1):
        eps = torch.rand(16, 1)
    return D, (eps * real + (1 - eps) * G(z).detach()).requires_grad_()


def penalty_from(grad):
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def test_penalty_without_create_graph_cannot_be_backpropagated():
    D, points = critic_and_points()
    scores = D(points)
    (grad,) = torch.autograd.grad(scores.sum(), points)
    assert grad.grad_fn is None and retained_bytes(scores) == 0
    with pytest.raises(RuntimeError, match=NO_GRAD_FN):
        penalty_from(grad).backward()


def test_create_graph_keeps_the_graph_and_reaches_the_weights():
    D, points = critic_and_points()
    scores = D(points)
    kept = retained_bytes(scores)
    (grad,) = torch.autograd.grad(scores.sum(), points, create_graph=True)
    assert grad.grad_fn is not None and retained_bytes(scores) == kept > 0
    penalty_from(grad).backward()
    assert all(p.grad is not None for p in D[0].parameters())


def test_create_graph_without_retain_graph_fails_on_the_penalty():
    D, points = critic_and_points()
    (grad,) = torch.autograd.grad(D(points).sum(), points, create_graph=True,
                                  retain_graph=False)
    with pytest.raises(RuntimeError, match=FREED):
        penalty_from(grad).backward()


def test_penalty_gradient_of_a_linear_critic_by_hand():
    with seeded(0):
        linear = nn.Linear(2, 1)
        x = torch.randn(5, 2, requires_grad=True)
    (grad,) = torch.autograd.grad(linear(x).sum(), x, create_graph=True)
    penalty_from(grad).backward()
    w = linear.weight.detach()
    assert torch.allclose(linear.weight.grad, 2 * (w.norm() - 1) * w / w.norm())
    assert linear.bias.grad is None


def score_0_at_point_1(critic, points):
    x = points.detach().requires_grad_()
    return torch.autograd.grad(critic(x)[0, 0], x)[0][1]


def test_batchnorm_mixes_samples_in_the_input_gradient():
    D, points = critic_and_points()
    with seeded(0):
        bn_critic = nn.Sequential(nn.Linear(2, 16), nn.BatchNorm1d(16), nn.Tanh(),
                                  nn.Linear(16, 1))
    assert score_0_at_point_1(D, points).eq(0).all()
    assert score_0_at_point_1(bn_critic, points).ne(0).any()
    bn_critic.eval()  # running statistics, not the batch's: samples stay apart again
    assert score_0_at_point_1(bn_critic, points).eq(0).all()


# 4. Two optimizers on a shared encoder: every gradient first, then the steps.

def make_actor_critic():
    with seeded(0):
        encoder = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        actor, critic = nn.Linear(16, 3), nn.Linear(16, 1)
        batch = torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.randn(8, 1)
    actor_opt = torch.optim.SGD([*encoder.parameters(), *actor.parameters()], lr=0.1)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=0.5)
    return encoder, actor, critic, batch, actor_opt, critic_opt


def losses(encoder, actor, critic, batch, detach_for_critic=False):
    states, actions, returns = batch
    features = encoder(states)
    values = critic(features.detach() if detach_for_critic else features)
    advantages = (returns - values).detach()
    log_probs = F.log_softmax(actor(features), dim=1).gather(1, actions.unsqueeze(1))
    return -(log_probs * advantages).mean(), F.mse_loss(values, returns)


def by_hand():
    """One SGD update on the sum of both losses, every gradient at the starting weights."""
    encoder, actor, critic, batch, _, _ = make_actor_critic()
    weights = [*encoder.parameters(), *actor.parameters(), *critic.parameters()]
    grads = torch.autograd.grad(sum(losses(encoder, actor, critic, batch)), weights)
    rates = [0.1] * (len(weights) - 2) + [0.5] * 2
    return [w.detach() - rate * g for w, g, rate in zip(weights, grads, rates)]


def test_stepping_between_the_backwards_fails_freed():
    encoder, actor, critic, batch, actor_opt, critic_opt = make_actor_critic()
    actor_loss, critic_loss = losses(encoder, actor, critic, batch)
    actor_loss.backward()
    actor_opt.step()
    with pytest.raises(RuntimeError, match=FREED):
        critic_loss.backward()


def test_stepping_between_the_backwards_with_retain_graph_fails_on_the_encoder():
    encoder, actor, critic, batch, actor_opt, critic_opt = make_actor_critic()
    actor_loss, critic_loss = losses(encoder, actor, critic, batch)
    actor_loss.backward(retain_graph=True)
    actor_opt.step()
    with pytest.raises(RuntimeError, match=VERSION + r".*\[16, 16\]"):
        critic_loss.backward()
    every = [*encoder.named_parameters(), *actor.named_parameters(), *critic.named_parameters()]
    assert [p for _, p in every if p.shape == (16, 16)] == [encoder[2].weight]


def test_every_backward_then_every_step_matches_the_update_by_hand():
    encoder, actor, critic, batch, actor_opt, critic_opt = make_actor_critic()
    actor_opt.zero_grad()
    critic_opt.zero_grad()
    sum(losses(encoder, actor, critic, batch)).backward()
    actor_opt.step()
    critic_opt.step()
    assert all_close(state_of(encoder, actor, critic), by_hand())


def test_one_optimizer_with_parameter_groups_makes_the_same_update():
    encoder, actor, critic, batch, _, _ = make_actor_critic()
    opt = torch.optim.SGD([{"params": [*encoder.parameters(), *actor.parameters()], "lr": 0.1},
                           {"params": critic.parameters(), "lr": 0.5}])
    opt.zero_grad()
    sum(losses(encoder, actor, critic, batch)).backward()
    opt.step()
    assert all_close(state_of(encoder, actor, critic), by_hand())


def test_two_backwards_before_any_step_need_retain_graph_on_the_first_only():
    # The summary's "retain_graph=True is right": per-loss gradients, before any step.
    encoder, actor, critic, batch, actor_opt, critic_opt = make_actor_critic()
    actor_loss, critic_loss = losses(encoder, actor, critic, batch)
    with watch_backward_calls() as calls:
        actor_loss.backward(retain_graph=True)
        critic_loss.backward()
    actor_opt.step()
    critic_opt.step()
    assert [call.retain_graph for call in calls] == [True, False]
    assert all_close(state_of(encoder, actor, critic), by_hand())


def test_features_detach_for_the_critic_lets_each_optimizer_step_after_its_backward():
    # The other alternative the lesson names: the critic's loss no longer reaches the encoder.
    encoder, actor, critic, batch, actor_opt, critic_opt = make_actor_critic()
    actor_loss, critic_loss = losses(encoder, actor, critic, batch, detach_for_critic=True)
    actor_loss.backward()
    actor_opt.step()
    critic_loss.backward()  # no error: nothing of the encoder to reach
    critic_opt.step()
    assert all(p.grad is not None for p in critic.parameters())


# Exercise 1's reference: truncated BPTT with an LSTM, whose state is a pair.

def test_lstm_without_detaching_fails_and_the_reference_runs_flat():
    lstm, head, chunks = lesson06.lstm_task()
    optimizer = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.1)
    state = None
    with pytest.raises(RuntimeError, match=FREED):
        for inputs, targets in chunks:
            outputs, state = lstm(inputs, state)
            loss = F.mse_loss(head(outputs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    # the reference runs only under the checker's own runner (a reader's wrapper is refused)
    with watch_backward_calls() as calls:
        lesson06._trained_weights(lesson06._truncated_bptt)
    # one backward per stretch of two chunks, on the two losses added
    assert len(calls) == len(chunks) // 2 and not any(call.retain_graph for call in calls)
    kept = [call.retained_bytes for call in calls]
    assert max(kept) - min(kept) <= 2 * 6 * 4  # flat, up to the zero start state counted once
