"""Check cells for lesson 04, multi-task losses (notebooks/04_multi_task_losses.ipynb).

Both checkers run on the lesson's own model, which the check cell passes in
(`lesson04.exercise_1(answer, TwoHeadNet)`): a fresh `TwoHeadNet()`, built seeded, an
SGD optimizer (lr 0.1) and a small data set of the lesson's kind (64 samples, 8
features, a regression target and 3 classes) from a private generator, so that a check
gives the same verdict in every run and leaves the reader's random numbers alone.
Each checker works the right answer out by running PyTorch, not from a stored key.

- exercise_1(answer, TwoHeadNet): which error (freed buffer, version counter, none) each
  of four sequences of calls raises;
- exercise_2(answer, TwoHeadNet): which changes fix a broken training loop, with one
  backward pass through the trunk per step.
"""
import torch
import torch.nn.functional as F
from torch import nn

from autograd_lens import backward_passes

from .answers import kind, read_labels
from .errors import FREED_BUFFER, NO_ERROR, VERSION_COUNTER, describe, error_raised_by
from .seeding import seeded
from .verdict import correct, not_yet, unanswered

N_SAMPLES, N_FEATURES, N_CLASSES = 64, 8, 3
LEARNING_RATE = 0.1


def _data():
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(N_SAMPLES, N_FEATURES, generator=generator)
    y_reg = torch.sin(x @ torch.randn(N_FEATURES, generator=generator))
    y_cls = torch.randint(0, N_CLASSES, (N_SAMPLES,), generator=generator)
    return x, y_reg, y_cls


def _losses(model, data):
    """loss1: the regression's mean squared error; loss2: the classification's cross-entropy."""
    x, y_reg, y_cls = data
    prediction, logits = model(x)
    return F.mse_loss(prediction, y_reg), F.cross_entropy(logits, y_cls)


def _fresh(model_class):
    """The same model and a new SGD optimizer at every call."""
    with seeded(4):
        model = model_class()
    return model, torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)


def _model_class_problem(model_class):
    """A hint if `model_class` is not the lesson's two-head model, else None."""
    usage = ("pass the lesson's model class as the second argument, "
             "e.g. exercise_1(answer, TwoHeadNet)")
    if not isinstance(model_class, type) or not issubclass(model_class, nn.Module):
        return f"{usage}; got {kind(model_class)}"
    try:
        model, _ = _fresh(model_class)
        _losses(model, _data())
        model.trunk.parameters()
    except Exception as error:  # the lesson's code changed: say so, never crash the check
        return (f"the model class passed in does not run as the lesson's TwoHeadNet does "
                f"({describe(error)}): re-run the lesson's cells from the top, then this one")
    return None


# Exercise 1: which error does each sequence raise? -------------------------------------
# Each sequence starts from _fresh(TwoHeadNet) and one forward pass (loss1, loss2).
# The exercise's text in the notebook shows these bodies; tests keep the two the same.

def sequence_a(model, optimizer, loss1, loss2):
    loss1.backward(retain_graph=True)
    loss2.backward()
    loss1.backward()


def sequence_b(model, optimizer, loss1, loss2):
    loss1.backward(retain_graph=True)
    optimizer.zero_grad()
    loss2.backward()


def sequence_c(model, optimizer, loss1, loss2):
    torch.autograd.grad(loss1, list(model.regression_head.parameters()))
    loss2.backward()


def sequence_d(model, optimizer, loss1, loss2):
    loss2.backward(retain_graph=True)
    optimizer.step()
    loss1.backward()


SEQUENCES = {"A": sequence_a, "B": sequence_b, "C": sequence_c, "D": sequence_d}
ERROR_NAMES = (FREED_BUFFER, VERSION_COUNTER, NO_ERROR)

# The hint for a wrong answer: SEQUENCE_HINTS[label][the answer given].
SEQUENCE_HINTS = {
    "A": {
        NO_ERROR: "A's third call runs loss1's backward again, down into the trunk: what did "
                  "loss2.backward(), without retain_graph, do to the trunk's saved tensors?",
        VERSION_COUNTER: "A changes nothing in place (there is no optimizer.step()), so no "
                         "version moves: look at what each call keeps or frees",
    },
    "B": {
        FREED_BUFFER: "in B the first call kept every saved tensor (retain_graph=True): does "
                      "optimizer.zero_grad() touch the graph?",
        VERSION_COUNTER: "optimizer.zero_grad() resets each .grad: does it change a parameter, "
                         "or anything the graph saved?",
    },
    "C": {
        FREED_BUFFER: "torch.autograd.grad runs only the nodes between loss1 and the tensors "
                      "you ask for, and frees only their saved tensors: is the trunk between "
                      "loss1 and the regression head's parameters?",
        VERSION_COUNTER: "C changes nothing in place: torch.autograd.grad returns gradients, "
                         "it updates no tensor",
    },
    "D": {
        FREED_BUFFER: "D's first call keeps the saved tensors (retain_graph=True), so none is "
                      "freed: what did optimizer.step() do to the tensors they include?",
        NO_ERROR: "optimizer.step() changed in place every parameter whose .grad loss2's "
                  "backward filled: does loss1's backward need any of them as saved?",
    },
}


def _error_raised_by_sequence(model_class, sequence):
    model, optimizer = _fresh(model_class)
    loss1, loss2 = _losses(model, _data())
    return error_raised_by(lambda: sequence(model, optimizer, loss1, loss2))


def _read_errors(answer):
    """The reader's {label: error name}, or a hint saying what is wrong with its form."""
    example = "{" + ", ".join(f'"{label}": ...' for label in SEQUENCES) + "}"
    names = ", ".join(f'"{name}"' for name in ERROR_NAMES)
    if not isinstance(answer, dict):
        return None, f"give a dict from each sequence to an error, {example}, not {kind(answer)}"
    given = {}
    for label, error in answer.items():
        if not isinstance(label, str) or label.strip().upper() not in SEQUENCES:
            return None, f"{label!r} is not a sequence: the sequences are {', '.join(SEQUENCES)}"
        if not isinstance(error, str) or error.strip().lower() not in ERROR_NAMES:
            return None, f"sequence {label.strip().upper()}: {error!r} is not one of {names}"
        given[label.strip().upper()] = error.strip().lower()
    missing = [label for label in SEQUENCES if label not in given]
    if missing:
        return None, f"say what sequence {', '.join(missing)} raises too, as one of {names}"
    return given, None


def exercise_1(answer, model_class=None):
    """answer: {"A": ..., "B": ..., "C": ..., "D": ...}, each "freed buffer", "version
    counter" or "none": what the sequence raises on a fresh TwoHeadNet."""
    if answer is None:
        return unanswered('set `answer` to a dict {"A": ..., "B": ..., "C": ..., "D": ...}, each '
                          '"freed buffer", "version counter" or "none"')
    problem = _model_class_problem(model_class)
    if problem:
        return not_yet(problem)
    given, problem = _read_errors(answer)
    if problem:
        return not_yet(problem)
    right = {label: _error_raised_by_sequence(model_class, sequence)
             for label, sequence in SEQUENCES.items()}
    wrong = [label for label in SEQUENCES if given[label] != right[label]]
    if not wrong:
        return correct("a backward fails when it needs a saved tensor that an earlier call "
                       "freed, or that changed in place since it was saved; a call that never "
                       "runs through a node, or that touches only .grad, leaves it whole")
    label = wrong[0]
    hint = SEQUENCE_HINTS[label].get(given[label],
                                     f"run sequence {label} in your head, call by call")
    return not_yet(f"{len(SEQUENCES) - len(wrong)} of {len(SEQUENCES)} right. {label}: {hint}")


# Exercise 2: which changes fix the broken loop? -----------------------------------------
# The loop: STEPS times, (loss1, loss2) from a forward pass, optimizer.zero_grad(),
# loss1.backward(), loss2.backward(), optimizer.step(). Each change replaces the two
# backward calls with the body below; the notebook shows them, tests keep them the same.

STEPS = 3


def change_a(model, loss1, loss2):
    loss1.backward(retain_graph=True)
    loss2.backward()


def change_b(model, loss1, loss2):
    loss1.backward()
    loss2.backward(retain_graph=True)


def change_c(model, loss1, loss2):
    (loss1 + loss2).backward()


def change_d(model, loss1, loss2):
    torch.autograd.grad([loss1, loss2], list(model.parameters()))


def change_e(model, loss1, loss2):
    torch.autograd.backward([loss1, loss2])


def the_broken_loop(model, loss1, loss2):
    loss1.backward()
    loss2.backward()


CHANGES = {"A": change_a, "B": change_b, "C": change_c, "D": change_d, "E": change_e}


def _train(model_class, backward):
    """Run the loop with `backward` in place of its two calls: (error, parameters, passes)."""
    model, optimizer = _fresh(model_class)
    data = _data()

    def loop():
        for _ in range(STEPS):
            loss1, loss2 = _losses(model, data)
            optimizer.zero_grad()
            backward(model, loss1, loss2)
            optimizer.step()

    with backward_passes(model.trunk) as passes:
        error = error_raised_by(loop)
    parameters = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    return error, parameters, passes.count


def _outcome(model_class, backward, intended, start):
    """None if `backward` does what the loop intends, else what goes wrong (a hint's end)."""
    error, parameters, passes = _train(model_class, backward)
    if error != NO_ERROR:
        return (f"the loop still raises the {error} error: which call needs what an earlier "
                "one freed or changed?")
    if torch.allclose(parameters, start):
        return ("it runs, but the parameters never move: where do the gradients go, and "
                "where does optimizer.step() read them?")
    if not torch.allclose(parameters, intended, atol=1e-6):
        return "it runs, but its update is not one SGD step on loss1 + loss2"
    if passes != STEPS:
        return (f"it trains right, but walks the trunk backward {passes // STEPS} times a step, "
                "where one pass can do")
    return None


def _intended(model_class):
    """The loop as meant: one update on loss1 + loss2 per step, gradients from autograd.grad."""
    model, _ = _fresh(model_class)
    data = _data()
    for _ in range(STEPS):
        params = list(model.parameters())
        grads = torch.autograd.grad(sum(_losses(model, data)), params)
        with torch.no_grad():
            for param, grad in zip(params, grads):
                param -= LEARNING_RATE * grad
    return torch.nn.utils.parameters_to_vector(model.parameters()).detach()


def exercise_2(answer, model_class=None):
    """answer: the set of letters of the changes (A to E) that make the broken loop train
    on loss1 + loss2, one update per step, with one backward pass through the trunk."""
    letters = "A to " + list(CHANGES)[-1]
    if answer is None:
        return unanswered(f"set `answer` to the set of letters ({letters}) of the changes "
                          'that work, such as {"A", "B"}')
    problem = _model_class_problem(model_class)
    if problem:
        return not_yet(problem)
    given, hint = read_labels(answer, CHANGES)
    if hint:
        return not_yet(hint)
    if not given:
        return not_yet("at least one of the changes works: try each one call by call")
    intended = _intended(model_class)
    start = torch.nn.utils.parameters_to_vector(_fresh(model_class)[0].parameters()).detach()
    outcomes = {label: _outcome(model_class, change, intended, start)
                for label, change in CHANGES.items()}
    for label in sorted(given):
        if outcomes[label] is not None:
            return not_yet(f"{label}: {outcomes[label]}")
    right = {label for label, outcome in outcomes.items() if outcome is None}
    if given != right:
        return not_yet("the changes you chose work, but they are not the only ones: ask of "
                       "each change whether it runs, puts the gradient of loss1 + loss2 where "
                       "optimizer.step() reads it, and walks the trunk once")
    return correct("one backward pass from both losses fills .grad, then one step; "
                   "retain_graph on the first call pays for a second pass through the trunk, "
                   "on the second call it comes too late, and autograd.grad leaves .grad "
                   "empty for the step")
