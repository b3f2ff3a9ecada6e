"""Check cells for lesson 06, "Where second backward calls come from".

The lesson defines its own models; the checkers build small set-ups of their own, the
ones the exercise text describes (the lesson's layers and data shapes, seeded here
without touching the reader's random numbers):

- exercise 1 runs the reader's chunk-by-chunk training function on an `nn.LSTM` and
  the lesson's two sine waves, watching every backward call, and compares the trained
  weights with truncated BPTT's;
- exercise 2 runs each of four sequences of calls on real PyTorch and reads which
  error, if any, it raises (`errors.error_raised_by`): the key is computed, not stored.
"""
import torch
import torch.nn.functional as F
from torch import nn

from . import errors
from .answers import kind
from .seeding import seeded
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered


def _parameters(*modules):
    return [p for module in modules for p in module.parameters()]


# Exercise 1: truncated backpropagation through time with an LSTM.

LEARNING_RATE = 0.1


def waves_in_chunks():
    """The lesson's data: two sine waves of 41 points, as 4 chunks of (inputs, targets),
    each of shape (2 waves, 10 steps, 1 feature); the targets are the next values."""
    t = torch.linspace(0, 6, 41)
    waves = torch.stack([t.sin(), (t + 1).sin()]).unsqueeze(-1)
    return list(zip(waves[:, :-1].split(10, dim=1), waves[:, 1:].split(10, dim=1)))


def lstm_task(seed=1):
    """(lstm, head, chunks): nn.LSTM(1, 6, batch_first=True), nn.Linear(6, 1), the waves."""
    with seeded(seed):
        return nn.LSTM(1, 6, batch_first=True), nn.Linear(6, 1), waves_in_chunks()


def _truncated_bptt(lstm, head, chunks, optimizer):
    """The reference: carry the state's value across chunks, cut its graph. Private, so
    that `answer = lesson06._truncated_bptt` is not what tab completion offers."""
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(inputs, state)
        loss = F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _state_from_zeros_each_chunk(lstm, head, chunks, optimizer):
    """A wrong answer worth its own hint: no error, but no state carried across either."""
    for inputs, targets in chunks:
        outputs, _ = lstm(inputs)
        loss = F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _trained_weights(train):
    """A fresh LSTM task and SGD optimizer, `train` run on them: the trained weights."""
    lstm, head, chunks = lstm_task()
    optimizer = torch.optim.SGD(_parameters(lstm, head), lr=LEARNING_RATE)
    train(lstm, head, chunks, optimizer)
    return [p.detach().clone() for p in _parameters(lstm, head)], len(chunks)


def _same(weights, others):
    return all(torch.allclose(a, b, atol=1e-6) for a, b in zip(weights, others))


def _hint_for_error(error):
    """The hint for an error that the reader's training function raised."""
    which = errors.which_error(error)
    if which == errors.FREED_BUFFER:
        return ("the second chunk's backward still reaches the first chunk's graph: what "
                "carries it across? (an LSTM's state is a pair, (h, c))")
    if which == errors.VERSION_COUNTER:
        return ("a backward reached an earlier chunk whose weights the optimizer has since "
                "changed in place: keeping old graphs alive is not the fix here")
    if isinstance(error, AttributeError) and "tuple" in str(error):
        return "the LSTM's state is a tuple (h, c), and a tuple has no tensor methods"
    if isinstance(error, TypeError) and "NoneType" in str(error):
        return "the state is None before the first chunk: only a real state can be cut"
    return (f"your function raised {errors.describe(error)} (it is called as "
            "answer(lstm, head, chunks, optimizer))")


def exercise_1(answer) -> Verdict:
    """A function (lstm, head, chunks, optimizer) that trains chunk by chunk, one backward
    and one step per chunk, without failing and without keeping earlier chunks' graphs."""
    if answer is None:
        return unanswered("fix train_lstm_on_chunks, then set "
                          "`answer = train_lstm_on_chunks` and run this cell again")
    if not callable(answer):
        return not_yet(f"expected your function, e.g. `answer = train_lstm_on_chunks`; "
                       f"got {kind(answer)}")
    if getattr(answer, "__module__", None) == __name__:
        return not_yet("that is the checker's own function: fix train_lstm_on_chunks in "
                       "the notebook and answer with it")
    with watch_backward_calls() as calls:
        try:
            trained, n_chunks = _trained_weights(answer)
        except Exception as error:  # the reader's code: report it, don't crash the cell
            return not_yet(_hint_for_error(error))
    if not calls:
        return not_yet("backward() was never called: each chunk's loss needs its own backward")
    if any(call.retain_graph for call in calls):
        return not_yet("it runs, but a backward keeps its graph (retain_graph=True), which "
                       "the exercise forbids: if no backward needs an earlier chunk's graph, "
                       "none needs to keep it")
    if len(calls) != n_chunks:
        return not_yet(f"backward was called {len(calls)} times for {n_chunks} chunks: one "
                       "backward and one optimizer step per chunk")
    expected, _ = _trained_weights(_truncated_bptt)
    if not _same(trained, expected):
        if _same(trained, _trained_weights(_state_from_zeros_each_chunk)[0]):
            return not_yet(f"it runs, but every chunk starts from a zero state, as if the "
                           f"{n_chunks} chunks were separate sequences: the state a chunk "
                           "ends with should start the next one")
        return not_yet("it runs without keeping old chunks, but the trained weights differ "
                       "from truncated BPTT's: per chunk, zero the gradients, backward the "
                       "MSE of head(outputs) against the targets, then step once")
    return correct(f"{n_chunks} chunks, one backward each, and truncated BPTT's weights: the "
                   "state's value goes on, its graph does not.")


# Exercise 2: which error does each sequence of calls raise?

bce = F.binary_cross_entropy_with_logits
is_real, is_fake = torch.ones(16, 1), torch.zeros(16, 1)


def _gan():
    """Section 1's GAN and data, and section 3's points, with fresh seeded weights."""
    with seeded(6):
        G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        D = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        real = torch.randn(16, 2) * 0.3 + torch.tensor([2.0, 1.0])
        z = torch.randn(16, 4)
        eps = torch.rand(16, 1)
        points = (eps * real + (1 - eps) * G(z).detach()).requires_grad_()
    g_opt = torch.optim.SGD(G.parameters(), lr=0.1)
    d_opt = torch.optim.SGD(D.parameters(), lr=0.1)
    return dict(G=G, D=D, g_opt=g_opt, d_opt=d_opt, real=real, z=z, points=points)


def _actor_critic():
    """Section 4's encoder, heads, optimizers and losses, with fresh seeded weights."""
    with seeded(6):
        encoder = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        actor, critic = nn.Linear(16, 3), nn.Linear(16, 1)
        states, actions, returns = torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.randn(8, 1)

    def losses(encoder, actor, critic):
        features = encoder(states)
        values = critic(features)
        advantages = (returns - values).detach()
        log_probs = F.log_softmax(actor(features), dim=1).gather(1, actions.unsqueeze(1))
        return -(log_probs * advantages).mean(), F.mse_loss(values, returns)

    actor_opt = torch.optim.SGD([*encoder.parameters(), *actor.parameters()], lr=0.1)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=0.5)
    return dict(encoder=encoder, actor=actor, critic=critic, losses=losses,
                actor_opt=actor_opt, critic_opt=critic_opt)


# The four sequences, line for line as the exercise shows them.

def sequence_1(G, D, g_opt, d_opt, real, z, points):
    fake = G(z)
    g_loss = bce(D(fake), is_real)
    g_opt.zero_grad()
    g_loss.backward(retain_graph=True)
    g_opt.step()
    d_loss = bce(D(real), is_real) + bce(D(fake), is_fake)
    d_loss.backward()


def sequence_2(G, D, g_opt, d_opt, real, z, points):
    scores = D(points)
    (grad,) = torch.autograd.grad(scores.sum(), points)
    penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
    (scores.mean() + 10 * penalty).backward()


def sequence_3(encoder, actor, critic, losses, actor_opt, critic_opt):
    actor_loss, critic_loss = losses(encoder, actor, critic)
    critic_opt.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_opt.step()
    actor_opt.zero_grad()
    actor_loss.backward()


def sequence_4(G, D, g_opt, d_opt, real, z, points):
    scores = D(points)
    (grad,) = torch.autograd.grad(scores.sum(), points, create_graph=True)
    penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
    scores.mean().backward()
    penalty.backward()


SEQUENCES = {1: (sequence_1, _gan), 2: (sequence_2, _gan), 3: (sequence_3, _actor_critic),
             4: (sequence_4, _gan)}
ERRORS = (errors.FREED_BUFFER, errors.VERSION_COUNTER, errors.NO_ERROR)


def error_of_sequence(number) -> str:
    """Run sequence `number` on fresh models: which error it raises, by PyTorch's word."""
    sequence, build = SEQUENCES[number]
    return errors.error_raised_by(lambda: sequence(**build()))


# A hint for each wrong answer, by (sequence, the reader's answer): what to look at,
# never what the answer is.
_HINTS = {
    (1, errors.FREED_BUFFER): "retain_graph=True kept everything G's backward ran through; "
                              "look at what happens to those saved tensors before D's backward",
    (1, errors.NO_ERROR): "D's backward goes through `fake` into G's graph: is every tensor "
                          "that graph saved still as it was when it was saved?",
    (2, errors.NO_ERROR): "`penalty` carries no graph, but `scores.mean()` does: what did "
                          "autograd.grad leave of the graph behind `scores`?",
    (2, errors.VERSION_COUNTER): "nothing changes a tensor in place here (no optimizer step): "
                                 "look at what autograd.grad does to the graph it runs through",
    (3, errors.FREED_BUFFER): "the critic's backward kept the graph it ran through "
                              "(retain_graph=True): what could have freed the encoder's part?",
    (3, errors.VERSION_COUNTER): "critic_opt.step() changes only the critic head: does the "
                                 "actor's loss graph hold anything of it? Look at how the "
                                 "advantages are computed.",
    (4, errors.NO_ERROR): "create_graph=True kept the graph for the penalty, but another "
                          "backward ran in between: which saved tensors does the penalty's "
                          "backward need?",
    (4, errors.VERSION_COUNTER): "nothing changes a tensor in place here (no optimizer step): "
                                 "look at what the backward before the penalty's did",
}


def _as_error_names(answer):
    """The reader's answer as {sequence number: error name}, or (None, a hint)."""
    example = "{1: 'freed buffer', 2: 'none', ...}"
    if not isinstance(answer, dict):
        return None, (f"expected a dict from sequence number to error, e.g. {example}; "
                      f"got {kind(answer)}")
    names = {}
    for key, value in answer.items():
        number = int(key.strip()) if isinstance(key, str) and key.strip().isdigit() else key
        if isinstance(number, bool) or number not in SEQUENCES:
            return None, (f"{key!r} is not a sequence number: they are numbered 1 to "
                          f"{len(SEQUENCES)}")
        name = value.strip().lower() if isinstance(value, str) else None
        if name not in ERRORS:
            return None, (f"sequence {number}: {value!r} is not one of the answers "
                          f"{', '.join(repr(e) for e in ERRORS)}")
        names[number] = name
    missing = [str(n) for n in SEQUENCES if n not in names]
    if missing:
        return None, f"give an answer for every sequence; missing: {', '.join(missing)}"
    return names, None


def exercise_2(answer) -> Verdict:
    """{sequence number: 'freed buffer' | 'version counter' | 'none'} for SEQUENCES."""
    if answer is None:
        return unanswered("set `answer` to a dict {sequence number: 'freed buffer', "
                          "'version counter' or 'none'} and run this cell again")
    names, problem = _as_error_names(answer)
    if problem:
        return not_yet(problem)
    right = {number: error_of_sequence(number) for number in SEQUENCES}
    wrong = [number for number in SEQUENCES if names[number] != right[number]]
    if wrong:
        first = wrong[0]
        hint = _HINTS.get((first, names[first]), "follow which graph each backward runs "
                          "through, and what it holds by then")
        return not_yet(f"{len(SEQUENCES) - len(wrong)} of {len(SEQUENCES)} right. "
                       f"Sequence {first}: {hint}")
    return correct("all four, as PyTorch raises them: " + ", ".join(
        f"{number}: {right[number]}" for number in SEQUENCES) + ".")


__all__ = ["exercise_1", "exercise_2", "lstm_task", "waves_in_chunks",
           "SEQUENCES", "ERRORS", "error_of_sequence"]
