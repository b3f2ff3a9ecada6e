"""Lesson 06, "Where second backward calls come from": its small models and its check cells.

The lesson, its exercise checkers and `tests/test_second_backward_patterns.py` all run
the same tiny, seeded set-ups, built here:

- `gan()`: a generator G and a discriminator D on 2-D points (section 1, and the
  critic of section 3);
- `rnn_task()` and `lstm_task()`: a small recurrent net and a noisy sine wave cut into
  chunks (section 2 and exercise 1);
- `actor_critic()` and `actor_critic_losses()`: a shared encoder with an actor head and
  a critic head (section 4).

Each builder seeds its own random numbers and leaves the global generator as it found
it, so it returns the same models and data every time, wherever it is called.

Every checker works out the right answer by running PyTorch: exercise 1 runs the
reader's training function next to a reference, watching each backward call;
exercise 3 backpropagates the reader's penalty and compares the critic's gradients.
Exercise 2 (matching symptoms to fixes) has a key, with a reason for every pair.
"""
import torch
import torch.nn.functional as F
from torch import nn

from .answers import first_line, kind
from .seeding import seeded
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered

# The two errors that second backward calls run into.
FREED_MESSAGE = "Trying to backward through the graph a second time"
INPLACE_MESSAGE = "modified by an inplace operation"


# Section 1 (and 3): a GAN on 2-D points.

def gan(seed=0):
    """(G, D, real, z): generator 4 -> 16 -> 2, discriminator 2 -> 16 -> 1 (a logit),
    16 real points scattered around (2, 1), and 16 noise vectors for G."""
    with seeded(seed):
        G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        D = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        real = torch.randn(16, 2) * 0.3 + torch.tensor([2.0, 1.0])
        z = torch.randn(16, 4)
        return G, D, real, z


# Section 2 and exercise 1: a recurrent net on a long sequence, trained chunk by chunk.

def _sine_chunks(chunk_length=10, n_chunks=4):
    """Two noisy sine waves; inputs are x[t], targets x[t + 1], cut into chunks."""
    steps = chunk_length * n_chunks
    t = torch.linspace(0, 6, steps + 1)
    waves = torch.stack([t.sin(), (t + 1).sin()]).unsqueeze(-1)  # (2, steps + 1, 1)
    waves = waves + 0.05 * torch.randn(waves.shape)
    inputs, targets = waves[:, :-1], waves[:, 1:]
    return list(zip(inputs.split(chunk_length, dim=1), targets.split(chunk_length, dim=1)))


def rnn_task(seed=0):
    """(rnn, head, chunks): nn.RNN with 8 hidden units, a linear read-out, and 4 chunks
    of (inputs, targets), each of shape (batch 2, 10 time steps, 1)."""
    with seeded(seed):
        rnn = nn.RNN(input_size=1, hidden_size=8, batch_first=True)
        head = nn.Linear(8, 1)
        return rnn, head, _sine_chunks()


def lstm_task(seed=1):
    """(lstm, head, chunks): like rnn_task, with an nn.LSTM whose state is a pair (h, c)."""
    with seeded(seed):
        lstm = nn.LSTM(input_size=1, hidden_size=6, batch_first=True)
        head = nn.Linear(6, 1)
        return lstm, head, _sine_chunks()


# Section 4: actor-critic, a shared encoder under two heads.

def actor_critic(seed=0):
    """(encoder, actor, critic, batch): encoder 4 -> 16 -> 16, actor head 16 -> 3 action
    logits, critic head 16 -> 1 value; batch = (states, actions, returns) for 8 steps."""
    with seeded(seed):
        encoder = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        actor = nn.Linear(16, 3)
        critic = nn.Linear(16, 1)
        states = torch.randn(8, 4)
        actions = torch.randint(0, 3, (8,))
        returns = torch.randn(8, 1)
        return encoder, actor, critic, (states, actions, returns)


def actor_critic_losses(encoder, actor, critic, batch):
    """The two losses of one actor-critic step, both computed from the same features."""
    states, actions, returns = batch
    features = encoder(states)                  # shared by both heads
    values = critic(features)
    advantages = (returns - values).detach()    # the actor treats them as constants
    log_probs = F.log_softmax(actor(features), dim=1).gather(1, actions.unsqueeze(1))
    actor_loss = -(log_probs * advantages).mean()
    critic_loss = F.mse_loss(values, returns)
    return actor_loss, critic_loss


# Helpers shared by the checkers.

def _parameters(*modules):
    return [p for module in modules for p in module.parameters()]


# Exercise 1: truncated backpropagation through time with an LSTM.

LEARNING_RATE = 0.1


def _reference_lstm_training(lstm, head, chunks, optimizer):
    """Truncated BPTT: carry the state's value across chunks, cut its graph."""
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(inputs, state)
        loss = F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _run_training(train):
    """Fresh LSTM task, an SGD optimizer, `train` run on them; the trained parameters."""
    lstm, head, chunks = lstm_task()
    optimizer = torch.optim.SGD(_parameters(lstm, head), lr=LEARNING_RATE)
    train(lstm, head, chunks, optimizer)
    return [p.detach().clone() for p in _parameters(lstm, head)], len(chunks)


def exercise_1(answer) -> Verdict:
    """A function (lstm, head, chunks, optimizer) that trains chunk by chunk, with one
    backward and one step per chunk, without failing and without keeping old chunks."""
    if answer is None:
        return unanswered("write train_lstm_on_chunks, then set "
                          "`answer = train_lstm_on_chunks` and run this cell again")
    if not callable(answer):
        return not_yet(f"expected your function, e.g. `answer = train_lstm_on_chunks`; "
                       f"got {kind(answer)}")
    with watch_backward_calls() as calls:
        try:
            trained, n_chunks = _run_training(answer)
        except RuntimeError as error:
            if FREED_MESSAGE in str(error):
                return not_yet("the second chunk's backward still reaches the first chunk's "
                               "graph. The LSTM's state is a pair (h, c): detach both "
                               "before feeding them to the next chunk.")
            if INPLACE_MESSAGE in str(error):
                return not_yet("a backward reached an earlier chunk whose weights the "
                               "optimizer has since changed in place: retain_graph=True "
                               "is not the fix here; detach the state (h, c) between chunks.")
            return not_yet(f"your function raised RuntimeError: {first_line(error)}")
        except AttributeError as error:
            if "tuple" in str(error) and "detach" in str(error):
                return not_yet("the LSTM's state is a tuple (h, c), and a tuple has no "
                               ".detach(): detach each, e.g. tuple(s.detach() for s in state)")
            return not_yet(f"your function raised AttributeError: {first_line(error)}")
        except TypeError as error:
            if "NoneType" in str(error):
                return not_yet("the state is None before the first chunk: detach it only "
                               "once there is one (e.g. `if state is not None:`)")
            return not_yet(f"your function raised TypeError: {first_line(error)} "
                           "(it is called as answer(lstm, head, chunks, optimizer))")
        except Exception as error:  # the reader's code: report it, don't crash the cell
            return not_yet(f"your function raised {type(error).__name__}: "
                           f"{first_line(error)}")
    if any(call.retain_graph for call in calls):
        return not_yet("it runs, but with retain_graph=True: every chunk's graph then stays "
                       "alive. Detach the state between chunks instead.")
    if not calls:
        return not_yet("backward() was never called: compute each chunk's loss and call "
                       "backward on it")
    if len(calls) != n_chunks:
        return not_yet(f"backward was called {len(calls)} times for {n_chunks} chunks: one "
                       "backward and one optimizer step per chunk")
    kept = [call.retained_bytes for call in calls if call.retained_bytes is not None]
    # A few bytes may differ (two zero states sharing memory count once); a leak adds a
    # whole chunk's graph per chunk.
    if kept and max(kept) > 1.25 * min(kept):
        return not_yet(f"the graph each backward runs grows: {kept} bytes. Something still "
                       "links a chunk to the one before: detach both h and c.")
    expected, _ = _run_training(_reference_lstm_training)
    if not all(torch.allclose(a, b, atol=1e-6) for a, b in zip(trained, expected)):
        return not_yet("it runs without keeping old chunks, but the trained weights differ "
                       "from truncated BPTT's: per chunk, zero the gradients, backward the "
                       "MSE of head(outputs) against the targets, then step once.")
    size = f" over a graph of about {max(kept)} bytes" if kept else ""
    return correct(f"{n_chunks} chunks, one backward each{size}, the same every time: the "
                   "state's value goes on, its graph does not.")


# Exercise 2: match each symptom to its fix.

SYMPTOMS = {
    1: "GAN: after the discriminator's step, the generator's loss.backward() fails with "
       "'Trying to backward through the graph a second time'.",
    2: "An RNN trained chunk by chunk, its hidden state carried on: the second chunk's "
       "backward fails with the same error.",
    3: "Gradient penalty: penalty.backward() fails with 'element 0 of tensors does not "
       "require grad and does not have a grad_fn'.",
    4: "Actor-critic with two optimizers: critic_loss.backward(), called after "
       "actor_opt.step(), fails.",
    5: "Two task losses on one shared trunk: you want each task's gradient on its own, to "
       "compare them, before a single optimizer step.",
}

FIXES = {
    "A": "pass retain_graph=True to every backward() call",
    "B": "detach the hidden state between chunks",
    "C": "compute both losses, zero both optimizers, backward (the sum), then step both",
    "D": "keep the two backward calls, with retain_graph=True on the first one only",
    "E": "compute the gradient with torch.autograd.grad(..., create_graph=True)",
    "F": "use fake.detach() in the discriminator's loss",
}

_KEY = {1: "F", 2: "B", 3: "E", 4: "C", 5: "D"}

# Why retaining the graph ("A" everywhere, "D" on the first call), the tempting answer, is
# wrong for each symptom but the last.
_WHY_NOT_RETAIN = {
    1: "it runs, but D's backward then walks all of G's graph and writes gradients into "
       "G's parameters; D's step does not need G at all.",
    2: "with a step after each chunk it fails with the in-place error, and without one "
       "every chunk's graph stays alive and each backward walks all of them.",
    3: "there is nothing to retain: the gradient was computed without a graph of its own.",
    4: "the critic's backward then fails with the in-place error: actor_opt.step() changed "
       "weights that the retained graph saved.",
}
_WHY_NOT_RETAIN_ON_THE_LAST_TOO = ("close, but retaining on the last backward too keeps the "
                                   "graph alive for nothing.")

# Why each symptom happens: the hint for any other wrong fix.
_CAUSE = {
    1: "D's backward went through `fake` into G's graph and freed it. Which fix keeps D's "
       "loss from reaching G at all?",
    2: "each chunk's graph is linked to the previous chunk's by the hidden state. Which "
       "fix cuts that link but keeps the value?",
    3: "the gradient was computed without recording how it depends on the weights. Which "
       "fix records it?",
    4: "the step changed the shared encoder before the second backward ran. Which fix "
       "gets every gradient before any step?",
    5: "here you really do need two backward passes through the same graph. Which fix "
       "allows that, and frees the graph after the last one?",
}


def _as_mapping(answer):
    """The reader's answer as {int symptom: upper-case label}, or an error hint."""
    if not isinstance(answer, dict):
        return None, (f"expected a dict from symptom number to fix letter, e.g. "
                      f"{{1: 'A', 2: 'B', ...}}; got {kind(answer)}")
    mapping = {}
    for key, value in answer.items():
        number = key
        if isinstance(key, str) and key.strip().isdigit():
            number = int(key.strip())
        if isinstance(number, bool) or not isinstance(number, int) or number not in SYMPTOMS:
            return None, (f"{key!r} is not a symptom number: the symptoms are numbered "
                          f"{', '.join(map(str, SYMPTOMS))}")
        if not isinstance(value, str) or value.strip().upper() not in FIXES:
            return None, (f"symptom {number}: {value!r} is not a fix letter; the fixes are "
                          f"{', '.join(FIXES)}")
        mapping[number] = value.strip().upper()
    return mapping, None


def exercise_2(answer) -> Verdict:
    """{symptom number: fix letter} for the five symptoms in SYMPTOMS."""
    if answer is None:
        return unanswered("set `answer` to a dict like {1: 'A', 2: 'B', 3: 'C', 4: 'D', "
                          "5: 'E'} and run this cell again")
    mapping, problem = _as_mapping(answer)
    if problem:
        return not_yet(problem)
    missing = [number for number in SYMPTOMS if number not in mapping]
    if missing:
        return not_yet(f"give a fix for every symptom; missing: "
                       f"{', '.join(map(str, missing))}")
    for number in SYMPTOMS:
        chosen = mapping[number]
        if chosen == _KEY[number]:
            continue
        if chosen == "A" and number == 5:
            return not_yet(f"symptom 5: {_WHY_NOT_RETAIN_ON_THE_LAST_TOO}")
        if chosen in ("A", "D"):
            return not_yet(f"symptom {number}: retain_graph=True? {_WHY_NOT_RETAIN[number]}")
        return not_yet(f"symptom {number}: not {chosen}. {_CAUSE[number]}")
    return correct("F, B, E, C, D: four patterns where retain_graph=True is the wrong fix, "
                   "and one where it is the right one, on the first backward only.")


# Exercise 3: a gradient penalty that can be backpropagated.

def penalty_points(seed=3):
    """8 points in 2-D where the critic's gradient is penalised (no requires_grad)."""
    with seeded(seed):
        return torch.randn(8, 2) * 0.5 + torch.tensor([1.0, 0.5])


def _reference_penalty(critic, points):
    points = points.detach().requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def _critic_grads(critic):
    return [None if p.grad is None else p.grad.detach().clone() for p in critic.parameters()]


def _same_grads(got, expected):
    return all((a is None and b is None) or
               (a is not None and b is not None and torch.allclose(a, b, atol=1e-6))
               for a, b in zip(got, expected))


def exercise_3(answer) -> Verdict:
    """A function (critic, points) -> mean((||∂critic/∂x|| - 1)²), that backward can
    differentiate with respect to the critic's parameters."""
    if answer is None:
        return unanswered("write gradient_penalty, then set `answer = gradient_penalty` "
                          "and run this cell again")
    if not callable(answer):
        return not_yet(f"expected your function, e.g. `answer = gradient_penalty`; "
                       f"got {kind(answer)}")
    _, critic, _, _ = gan()
    points = penalty_points()
    try:
        penalty = answer(critic, points)
    except RuntimeError as error:
        if "does not require grad" in str(error):
            return not_yet("autograd.grad needs the points to require grad: make a copy "
                           "that does, x = points.detach().requires_grad_()")
        return not_yet(f"your function raised RuntimeError: {first_line(error)}")
    except Exception as error:  # the reader's code: report it, don't crash the cell
        return not_yet(f"your function raised {type(error).__name__}: {first_line(error)}")
    if not isinstance(penalty, torch.Tensor):
        return not_yet(f"return the penalty as a tensor (the training step calls "
                       f"backward on it); got {kind(penalty)}")
    if penalty.numel() != 1:
        return not_yet(f"the penalty is one number, a mean over the points; yours has shape "
                       f"{tuple(penalty.shape)}")
    if any(p.grad is not None for p in critic.parameters()):
        return not_yet("your function already ran backward into the critic: return the "
                       "penalty, and let the training step call backward on it")
    expected_penalty = _reference_penalty(critic, points)
    if not penalty.is_floating_point() or not torch.allclose(
            penalty.detach().reshape(()).float(), expected_penalty.detach(), atol=1e-5):
        return not_yet(f"the penalty should be {expected_penalty.item():.4f} here, yours is "
                       f"{penalty.detach().reshape(-1)[0].item():.4f}. Take the gradient's "
                       "norm per point (grad.norm(dim=1)), subtract 1, square, then mean.")
    if penalty.grad_fn is None:
        return not_yet("right value, but it has no grad_fn, so backward cannot reach the "
                       "critic: compute the gradient with create_graph=True, and keep every "
                       "step after it a tensor operation")
    try:
        penalty.reshape(()).backward()
    except RuntimeError as error:
        if FREED_MESSAGE in str(error):
            return not_yet("backward through the penalty needs the critic's graph, which "
                           "autograd.grad freed: with create_graph=True, leave retain_graph "
                           "at its default")
        return not_yet(f"penalty.backward() raised RuntimeError: {first_line(error)}")
    got = _critic_grads(critic)
    critic.zero_grad(set_to_none=True)
    expected_penalty.backward()
    if not _same_grads(got, _critic_grads(critic)):
        return not_yet("the value is right but its gradient with respect to the critic is "
                       "not: is every step from critic(x) to the penalty done with tensors, "
                       "nothing turned into a number or detached?")
    return correct(f"penalty {expected_penalty.item():.4f}, and backward reaches the critic's "
                   "weights through the graph that create_graph=True built for the gradient.")


__all__ = ["gan", "rnn_task", "lstm_task", "actor_critic", "actor_critic_losses",
           "penalty_points", "SYMPTOMS", "FIXES", "exercise_1", "exercise_2", "exercise_3"]
