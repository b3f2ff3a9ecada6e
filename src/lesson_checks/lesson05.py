"""Check cells for lesson 05, "The memory cost of retained graphs".

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 builds the model and measures it with `retained_bytes`, exercise 2 runs the
reader's function and watches which activations are still alive when it returns,
exercise 3 runs each snippet and watches the same way. None of them touches the global
RNG: models are built under `torch.random.fork_rng`, batches come from a private
generator.
"""
import weakref

import torch
from torch import nn

from autograd_lens import retained_bytes

from .answers import hint_for_unknown_labels, is_number, kind, labels, raised
from .seeding import seeded
from .verdict import Verdict, correct, not_yet, unanswered

FLOAT32 = 4  # bytes per element of every tensor the exercises save


def _batch(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _watch_activations(model):
    """Weak references to every output of the model's activation modules, as they run.

    A weak reference keeps nothing alive: it is dead as soon as autograd (or anyone)
    lets go of the tensor, and alive while a graph still holds it as a saved tensor.
    """
    refs = []
    for module in model.modules():
        if isinstance(module, (nn.ReLU, nn.Tanh)):
            module.register_forward_hook(
                lambda module, inputs, output: refs.append(weakref.ref(output)))
    return refs


def _alive(refs) -> int:
    return sum(ref() is not None for ref in refs)


# Exercise 1: predict retained_bytes(loss) for a small Tanh MLP.

EXERCISE_1_BATCH = 25


def exercise_1_model() -> nn.Sequential:
    """The exercise's model, freshly built (its weights play no part in the bytes)."""
    with seeded(5):
        return nn.Sequential(nn.Linear(10, 40), nn.Tanh(), nn.Linear(40, 20), nn.Tanh(),
                             nn.Linear(20, 3))


def _exercise_1_measured() -> int:
    model = exercise_1_model()
    x = _batch(5, EXERCISE_1_BATCH, model[0].in_features)
    loss = model(x).pow(2).mean()
    return retained_bytes(loss)


def _exercise_1_mistakes(right) -> list:
    """(wrong total, hint) for the slips a hand count is likely to make."""
    model = exercise_1_model()
    batch = EXERCISE_1_BATCH
    linears = [m for m in model if isinstance(m, nn.Linear)]
    x_bytes = batch * linears[0].in_features * FLOAT32
    out_bytes = batch * linears[-1].out_features * FLOAT32
    hidden_bytes = sum(batch * m.out_features * FLOAT32 for m in linears[:-1])
    saved_weights = sum(m.weight.nelement() * FLOAT32 for m in linears[1:])
    all_params = sum(p.nelement() * FLOAT32 for p in model.parameters())
    return [
        (right + saved_weights, "you counted the weights that the 2nd and 3rd addmm save "
         "(Wᵀ): they are parameters, leaves that you hold anyway, and retained_bytes leaves "
         "them out by default"),
        (right + all_params, "you added the parameters: they are leaves that stay alive "
         "with or without the graph, and retained_bytes leaves them out by default"),
        (right + hidden_bytes, "too much by one batch of hidden activations: each Tanh "
         "output is saved twice (by TanhBackward0 and by the next addmm) but it is one "
         "storage, counted once; and the Linear outputs before Tanh are not saved at all"),
        (right - x_bytes, "you left out the input batch x: the first addmm saves it to "
         "compute the first weight's gradient"),
        (right - out_bytes, "you left out the model's output: pow(2) saves it, since the "
         "derivative of out² is 2·out"),
        (right // FLOAT32, "that counts elements; the question asks for bytes, and a "
         "float32 takes 4"),
    ]


def exercise_1(answer) -> Verdict:
    """How many bytes does retained_bytes(loss) report for the exercise's model?"""
    if answer is None:
        return unanswered("set `answer` to a whole number of bytes, e.g. 1000, then run "
                          "this cell again")
    if isinstance(answer, torch.Tensor):
        return not_yet("give the number of bytes as a plain number, like 1000 (not a "
                       "tensor; use .item() if you computed it)")
    if not is_number(answer):
        return not_yet(f"expected a whole number of bytes, such as 1000; got {kind(answer)}")
    right = _exercise_1_measured()
    if answer == right:
        return correct(f"{right} bytes = 4 × 25 × (10 + 40 + 20 + 3): the input batch, "
                       "each Tanh output once, and the output that pow(2) saves.")
    for wrong, hint in _exercise_1_mistakes(right):
        if answer == wrong:
            return not_yet(hint)
    return not_yet("count, for a batch of 25, one float32 (4 bytes) per element of: the "
                   "input x, each Tanh output (once), and the model's output")


# Exercise 2: fix the leaking `average_loss`.

def _exercise_2_setup():
    with seeded(11):
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    batches = [(_batch(20 + k, 8, 16), _batch(40 + k, 8, 1)) for k in range(4)]
    return model, batches


def _exercise_2_losses() -> list:
    model, batches = _exercise_2_setup()
    with torch.no_grad():
        return [nn.functional.mse_loss(model(x), y).item() for x, y in batches]


def _as_number(result):
    """The reader's result as a float, or None if it is not one number."""
    if isinstance(result, torch.Tensor):
        if result.numel() != 1 or result.is_complex() or result.dtype == torch.bool:
            return None
        return result.detach().item()
    if not is_number(result):
        return None
    return float(result)


def _close(value, expected) -> bool:
    return abs(value - expected) <= 1e-5 * max(1.0, abs(expected))


def exercise_2(answer) -> Verdict:
    """A function(model, batches) -> average loss that keeps no graph alive."""
    if answer is None:
        return unanswered("set `answer` to your function, e.g. `answer = average_loss_fixed`")
    if not callable(answer):
        return not_yet(f"expected a function taking (model, batches), like "
                       f"`def average_loss_fixed(model, batches): ...`; got {kind(answer)}")
    losses = _exercise_2_losses()
    expected = sum(losses) / len(losses)
    model, batches = _exercise_2_setup()
    refs = _watch_activations(model)
    try:
        result = answer(model, batches)
    except Exception as error:  # the reader's code: report it, don't crash the cell
        return not_yet(raised(error))
    if not refs:
        return not_yet("your function never ran the model: call model(x) for every "
                       "(x, y) in batches")
    alive = _alive(refs)  # `result` is still held here, as a caller would hold it
    if alive:
        if isinstance(result, torch.Tensor) and result.grad_fn is not None:
            return not_yet(f"it returns a tensor with a graph ({result.grad_fn.name()}) "
                           f"that reaches {alive} of the {len(batches)} batches' "
                           "activations: add a plain number to total_loss, not the loss "
                           "tensor")
        return not_yet(f"when your function has returned, {alive} batch(es) of activations "
                       "are still alive: is a loss tensor kept somewhere outside it?")
    value = _as_number(result)
    if value is None:
        return not_yet(f"your function returned {kind(result)}; it should return the "
                       "average loss, one number")
    if _close(value, expected):
        return correct(f"average loss {expected:.4f}, and when your function returns no "
                       "activation of any batch is still alive.")
    if _close(value, sum(losses)):
        return not_yet("that is the total over the batches; return the average, "
                       "total / len(batches)")
    if _close(value, losses[-1]):
        return not_yet("that is the last batch's loss alone; add up every batch's loss, "
                       "then divide by len(batches)")
    return not_yet(f"nothing stays alive, good, but the average loss should be "
                   f"{expected:.4f}, not {value:.4f}: keep the leaky version's arithmetic")


# Exercise 3: which snippets still hold saved tensors once they finish?
# The checker runs each of these fixed strings (never the reader's) with `model`, a
# Linear(16, 32) -> ReLU -> Linear(32, 1), and `batches`, three inputs of shape (8, 16).

SNIPPETS = {
    "A": """\
total = 0
for x in batches:
    loss = model(x).pow(2).mean()
    loss.backward()
    total += loss.item()""",
    "B": """\
losses = []
for x in batches:
    loss = model(x).pow(2).mean()
    loss.backward()
    losses.append(loss)""",
    "C": """\
for x in batches:
    loss = model(x).pow(2).mean()
    loss.backward(retain_graph=True)""",
    "D": """\
total = 0
with torch.no_grad():
    for x in batches:
        total += model(x).pow(2).mean()""",
    "E": """\
total = 0
for x in batches:
    total += model(x).pow(2).mean()""",
    "F": """\
total = 0
for x in batches:
    loss = model(x).pow(2).mean()
    total += loss.detach()""",
}

WHY = {
    "A": "A frees each graph in backward() and keeps only Python floats (loss.item())",
    "B": "B keeps every loss tensor, and so every graph's nodes, but backward() freed "
         "their saved tensors (log loss.item() instead, and the nodes go too)",
    "C": "C keeps no list, yet after the loop `loss` still names the last batch's graph, "
         "and retain_graph=True kept its saved tensors",
    "D": "D builds no graph at all: under torch.no_grad() nothing is saved",
    "E": "E is the classic leak: total's graph reaches every batch's graph, and no "
         "backward() freed them",
    "F": "F fixes the sum with detach(), but no backward() ran and `loss` still names "
         "the last batch's graph, whose saved tensors stay until `loss` goes",
}


def _holds_saved_tensors(text) -> bool:
    """Run a snippet; are any of its activations still alive while its names are?"""
    with seeded(7):
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
    refs = _watch_activations(model)
    names = {"torch": torch, "model": model,
             "batches": [_batch(60 + k, 8, 16) for k in range(3)]}
    exec(text, names)  # fixed strings above, never the reader's
    assert refs, "the snippet did not run the model"
    return _alive(refs) > 0  # `names` (the snippet's variables) is still alive here


def exercise_3(answer) -> Verdict:
    """Which snippets, once finished, still hold saved tensors alive?"""
    if answer is None:
        return unanswered("set `answer` to the set of labels that keep saved tensors "
                          "alive, e.g. {'A', 'B'}")
    chosen = labels(answer)
    if chosen is None:
        return not_yet(f"expected a set of labels such as {{'A', 'C'}}; got {kind(answer)}")
    hint = hint_for_unknown_labels(chosen, SNIPPETS)
    if hint:
        return not_yet(hint)
    keepers = {label for label, text in SNIPPETS.items() if _holds_saved_tensors(text)}
    wrongly_in, missing = sorted(chosen - keepers), sorted(keepers - chosen)
    if wrongly_in:
        label = wrongly_in[0]
        return not_yet(f"{label} keeps no saved tensor alive: {WHY[label]}.")
    if missing:
        label = missing[0]
        return not_yet(f"{label} does keep saved tensors alive: {WHY[label]}.")
    return correct(f"{', '.join(sorted(keepers))} keep saved tensors alive: a graph lives "
                   "as long as any name (total, loss) reaches it and no backward freed it.")
