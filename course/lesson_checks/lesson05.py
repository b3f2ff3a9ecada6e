"""Check cells for lesson 05, "The memory cost of retained graphs".

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 builds the model its text shows and measures it with `retained_bytes`;
exercise 2 runs each snippet and watches which activations are still alive when it ends;
exercise 3 runs the reader's function and watches the activations while it runs and after
it returns, then compares its results with the leaky version's. None of them moves the
global RNG: models are built with `seeding.fresh`, batches come from private generators.
"""
import weakref
from itertools import combinations

import torch
from torch import nn

from autograd_lens import retained_bytes

from .answers import as_number, close, kind, raised, read_labels
from .seeding import fresh
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered

FLOAT32 = 4  # bytes per element of every tensor the exercises save
ACTIVATIONS = (nn.ReLU, nn.Tanh, nn.GELU)


def _batch(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


class _ActivationWatch:
    """Weak references to every output of a model's activation modules, as they run.

    A weak reference keeps nothing alive: it is dead as soon as nothing (no name, no
    graph that saved it) holds the tensor. `alive_at_forward` records, each time an
    activation runs, how many earlier activation outputs were still alive.
    """

    def __init__(self, model):
        self.refs, self.alive_at_forward = [], []
        for module in model.modules():
            if isinstance(module, ACTIVATIONS):
                module.register_forward_hook(self._record)

    def _record(self, module, inputs, output):
        self.alive_at_forward.append(self.alive())
        self.refs.append(weakref.ref(output))

    def alive(self) -> int:
        return sum(ref() is not None for ref in self.refs)


# Exercise 1: predict retained_bytes(loss) for a GELU and Tanh MLP.

EXERCISE_1_BATCH = 25


def _exercise_1_model() -> nn.Sequential:
    """The model the exercise shows (its weights play no part in the bytes)."""
    return fresh(lambda: nn.Sequential(nn.Linear(10, 40), nn.GELU(), nn.Linear(40, 20),
                                       nn.Tanh(), nn.Linear(20, 3)), seed=5)


def _exercise_1_measured() -> int:
    model = _exercise_1_model()
    x = _batch(5, EXERCISE_1_BATCH, model[0].in_features)
    return retained_bytes(model(x).pow(2).mean())


def _exercise_1_slips() -> list:
    """(how far off, hint) for each slip a hand count is likely to make."""
    model = _exercise_1_model()
    first, middle, last = (m for m in model if isinstance(m, nn.Linear))

    def batch_of(units):  # bytes of one float32 activation of the batch, `units` wide
        return FLOAT32 * EXERCISE_1_BATCH * units

    saved_weights = FLOAT32 * (middle.weight.nelement() + last.weight.nelement())
    parameters = FLOAT32 * sum(p.nelement() for p in model.parameters())
    return [
        (-batch_of(first.out_features), "one 25 × 40 tensor short: around GELU, what does "
         "GeluBackward0 need, and what does the next addmm need? Are they one storage?"),
        (batch_of(middle.out_features), "one 25 × 20 tensor too many: Tanh saves its output, "
         "and the last addmm saves that same tensor, one storage, counted once"),
        (-batch_of(first.in_features), "you left out the input batch x: the first addmm "
         "saves it, for its weight's gradient"),
        (-batch_of(last.out_features), "you left out the model's output: pow(2) saves it, "
         "since the derivative of out² is 2·out"),
        (batch_of(1) - batch_of(last.out_features), "the model's output is 3 wide here, not "
         "1: pow(2) saves all of it"),
        (saved_weights, "you counted the weights (Wᵀ) that the 2nd and 3rd addmm save: "
         "they are views of the parameters, leaves, which retained_bytes leaves out by default"),
        (parameters, "you added the parameters: they are leaves, alive with or without the "
         "graph, which retained_bytes leaves out by default"),
    ]


def _exercise_1_hints(right) -> dict:
    """Wrong total -> hint: each slip alone, then any two of them together."""
    slips = _exercise_1_slips()
    hints = {}
    for (off_a, hint_a), (off_b, _) in combinations(slips, 2):
        hints.setdefault(right + off_a + off_b, f"two slips; one of them: {hint_a}")
    hints.update({right + off: hint for off, hint in slips})  # one slip: its own hint wins
    hints[right // FLOAT32] = ("that counts elements; the question asks for bytes, and a "
                               "float32 takes 4")
    return hints


def exercise_1(answer) -> Verdict:
    """How many bytes does retained_bytes(loss) report for the exercise's model?"""
    if answer is None:
        return unanswered("set `answer` to a whole number of bytes, e.g. 1000, then run "
                          "this cell again")
    if isinstance(answer, torch.Tensor):
        return not_yet("give the number of bytes as a plain number, like 1000 (not a "
                       "tensor; use .item() if you computed it)")
    value = as_number(answer)
    if value is None:
        return not_yet(f"expected a whole number of bytes, such as 1000; got {kind(answer)}")
    right = _exercise_1_measured()
    if value == right:
        return correct(f"{right} bytes = 4 × 25 × (10 + 40 + 40 + 20 + 3): x, GELU's input "
                       "and its output, the Tanh output once, and the output pow(2) saves.")
    hint = _exercise_1_hints(right).get(value)
    if hint:
        return not_yet(hint)
    return not_yet("count, at 4 bytes per float32, every tensor the graph saves except the "
                   "parameters, each storage once; for each activation, ask what its "
                   "backward needs, its input or its output")


# Exercise 2: which snippets still hold saved tensors once they finish?
# The checker runs each of these fixed strings (never the reader's) with `model`, a
# Linear(16, 32) -> ReLU -> Linear(32, 1), and `batches`, three inputs of shape (8, 16).

SNIPPETS = {
    "A": """\
model.eval()
outputs = []
for x in batches:
    outputs.append(model(x))""",
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

# A question that leads back to the reasoning, without saying which way the label goes.
LOOK_AGAIN = {
    "A": "does model.eval() stop autograd from building graphs, and what does the list hold?",
    "B": "what did each backward() do to the saved tensors of the graphs whose losses the "
         "list holds?",
    "C": "after the loop, what does `loss` still name, and what did retain_graph=True keep?",
    "D": "what does autograd save under torch.no_grad()?",
    "E": "what does `total`'s graph reach, and did a backward() drop anything?",
    "F": "`total` has no graph, but what does `loss` still name after the loop, and did a "
         "backward() drop anything?",
}


def _holds_saved_tensors(text) -> bool:
    """Run a snippet; are any of its activations still alive while its names are?"""
    model = fresh(lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)),
                  seed=7)
    watch = _ActivationWatch(model)
    names = {"torch": torch, "model": model,
             "batches": [_batch(60 + k, 8, 16) for k in range(3)]}
    exec(text, names)  # fixed strings above, never the reader's
    assert watch.refs, "the snippet did not run the model"
    return watch.alive() > 0  # `names` (the snippet's variables) is still alive here


def exercise_2(answer) -> Verdict:
    """Which snippets, once finished, still hold saved tensors alive?"""
    if answer is None:
        return unanswered("set `answer` to the set of labels that keep saved tensors "
                          "alive, e.g. {'A', 'B'}")
    chosen, hint = read_labels(answer, SNIPPETS)
    if hint:
        return not_yet(hint)
    keepers = {label for label, text in SNIPPETS.items() if _holds_saved_tensors(text)}
    wrong = sorted(chosen ^ keepers)
    if wrong:
        return not_yet(f"{len(wrong)} of the six labels {'is' if len(wrong) == 1 else 'are'} "
                       f"on the wrong side; look again at {wrong[0]}: {LOOK_AGAIN[wrong[0]]}")
    return correct(f"{', '.join(sorted(keepers))} keep saved tensors alive: they live as long "
                   "as a tensor you hold reaches their graph and no backward() dropped them.")


# Exercise 3: fix `evaluate`, which returns the average loss and the predictions, and leaks.

def _exercise_3_setup():
    model = fresh(lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)),
                  seed=11)
    batches = [(_batch(20 + k, 8, 16), _batch(40 + k, 8, 1)) for k in range(4)]
    return model, batches


def _exercise_3_expected():
    """The leaky version's results, worked out under torch.no_grad()."""
    model, batches = _exercise_3_setup()
    with torch.no_grad():
        outputs = [model(x) for x, _ in batches]
        losses = [nn.functional.mse_loss(out, y).item() for out, (_, y) in zip(outputs, batches)]
    return sum(losses) / len(losses), torch.cat(outputs), losses


def _graph_holders(result) -> list:
    """Which of the returned values is a tensor with a graph."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return ["a tensor"] if _has_graph(result) else []
    return [name for name, value in zip(("the average loss", "the predictions"), result)
            if _has_graph(value)]


def _has_graph(value) -> bool:
    return isinstance(value, torch.Tensor) and value.grad_fn is not None


def _run_evaluation(answer, model, batches):
    """Call the reader's function; return (result, problem): problem is a hint or None."""
    grad_mode = torch.is_grad_enabled()
    try:
        with watch_backward_calls() as calls:
            result = answer(model, batches)
    except Exception as error:  # the reader's code: report it, don't crash the cell
        return None, raised(error)
    finally:
        grad_mode_changed = torch.is_grad_enabled() != grad_mode
        torch.set_grad_enabled(grad_mode)  # the notebook's cells after this one need it
    if grad_mode_changed:
        return None, ("your function left gradient tracking switched off for the code after "
                      "it; a `with` block switches it back on when it ends")
    if not all(p.requires_grad for p in model.parameters()):
        return None, ("your function switched off requires_grad on the model's parameters: "
                      "the model could no longer be trained; leave the model as it is")
    if calls or any(p.grad is not None for p in model.parameters()):
        return None, ("your function ran a backward pass or set the model's .grad: an "
                      "evaluation needs no gradients, and must leave .grad alone")
    return result, None


def _check_results(result, expected_average, expected_predictions, losses):
    """A hint about the returned values, or None if they are the leaky version's."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return (f"your function returned {kind(result)}; return two things, as evaluate "
                "does: the average loss, then the predictions")
    average, predictions = result
    value = as_number(average)
    if value is None:
        return f"the average loss should be one number; your function returned {kind(average)}"
    if not close(value, expected_average):
        if close(value, sum(losses)):
            return "that average loss is the total over the batches; divide by len(batches)"
        if close(value, losses[-1]):
            return "that average loss is the last batch's alone; add up every batch's loss"
        return ("the average loss is not the leaky version's: keep its arithmetic, the mean "
                "of the batches' mse_loss")
    if not isinstance(predictions, torch.Tensor):
        return (f"the predictions should be one tensor, every batch's output in order, as "
                f"torch.cat makes it; got {kind(predictions)}")
    if tuple(predictions.shape) != tuple(expected_predictions.shape):
        return (f"the predictions should have shape {tuple(expected_predictions.shape)}, "
                f"every batch's output in order; got {tuple(predictions.shape)}")
    if not close(predictions, expected_predictions):
        return "the predictions are not the model's outputs for the batches, in order"
    return None


def exercise_3(answer) -> Verdict:
    """A function(model, batches) -> (average loss, predictions) that keeps no graph alive."""
    if answer is None:
        return unanswered("set `answer` to your function, e.g. `answer = evaluate_fixed`")
    if not callable(answer):
        return not_yet(f"expected a function taking (model, batches), like "
                       f"`def evaluate_fixed(model, batches): ...`; got {kind(answer)}")
    expected_average, expected_predictions, losses = _exercise_3_expected()
    model, batches = _exercise_3_setup()
    watch = _ActivationWatch(model)
    result, problem = _run_evaluation(answer, model, batches)
    if problem:
        return not_yet(problem)
    if not watch.refs:
        return not_yet("your function never ran the model: call model(x) for every (x, y) "
                       "in batches")
    alive = watch.alive()  # `result` is still held here, as a caller would hold it
    if alive:
        holders = _graph_holders(result)
        if holders:
            return not_yet(f"your function returns {' and '.join(holders)} with a graph "
                           f"still attached, keeping {alive} of the {len(batches)} batches' "
                           "activations alive")
        return not_yet(f"once your function has returned, {alive} batch(es) of activations "
                       "are still alive: is a tensor with a graph kept outside it?")
    piled_up = max(watch.alive_at_forward)
    if piled_up > 1:
        return not_yet(f"nothing is left once your function returns, but while it runs the "
                       f"graphs pile up: when a batch ran, {piled_up} earlier batches' "
                       "activations were still alive; don't let the graphs accumulate")
    hint = _check_results(result, expected_average, expected_predictions, losses)
    if hint:
        return not_yet(hint)
    return correct(f"average loss {expected_average:.4f} and the {len(expected_predictions)} "
                   "predictions, with at most one batch's graph alive at a time and none "
                   "once your function returns.")
