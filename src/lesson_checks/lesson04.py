"""Check cells for lesson 04, multi-task losses (notebooks/04_multi_task_losses.ipynb).

Each checker runs the reader's answer against real autograd on its own small copy of
the lesson's two-head model and data, seeded, so that a check gives the same verdict
in every run and never touches the notebook's random state.

- exercise_1(answer): the set of parameter names whose .grad `loss1.backward()` fills;
- exercise_2(answer): a function (g1, g2) -> the gradient of 0.3 * loss1 + 0.7 * loss2;
- exercise_3(answer): a training step on 0.3 * loss1 + 0.7 * loss2 with one backward pass.
"""
import torch
import torch.nn.functional as F
from torch import nn

from .answers import first_line, kind
from .seeding import seeded
from .verdict import correct, not_yet, unanswered

WEIGHT1, WEIGHT2 = 0.3, 0.7  # the exercises' task weights: 0.3 * loss1 + 0.7 * loss2
STEPS = 2  # exercise 3 runs two steps, so that a forgotten zero_grad() shows
LEARNING_RATE = 0.1


class TwoHeadNet(nn.Module):
    """The lesson's model: a shared trunk, a regression head and a 3-class head."""

    def __init__(self, n_features=8, hidden=32, n_classes=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(),
                                   nn.Linear(hidden, hidden), nn.ReLU())
        self.regression_head = nn.Linear(hidden, 1)
        self.classification_head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        features = self.trunk(x)
        return self.regression_head(features).squeeze(-1), self.classification_head(features)


def _data():
    """A small data set of the lesson's kind: 64 samples, 8 features, two targets."""
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(64, 8, generator=generator)
    y_reg = torch.sin(x @ torch.randn(8, generator=generator))
    y_cls = (x @ torch.randn(8, 3, generator=generator)).argmax(dim=1)
    return x, y_reg, y_cls


def _fresh_model():
    """The same TwoHeadNet every call, without disturbing the reader's random state."""
    with seeded(4):
        return TwoHeadNet()


def _losses(model, x, y_reg, y_cls):
    prediction, logits = model(x)
    return F.mse_loss(prediction, y_reg), F.cross_entropy(logits, y_cls)


def _parameter_names():
    return [name for name, _ in _fresh_model().named_parameters()]


def _close(actual, expected):
    """allclose that says False, not raises, for another shape or dtype."""
    try:
        actual = torch.as_tensor(actual).detach()
        if actual.is_complex() != expected.is_complex():
            return False
        actual = actual.to(expected.dtype)
        return actual.shape == expected.shape and torch.allclose(actual, expected, atol=1e-6)
    except (TypeError, RuntimeError, ValueError):
        return False


def _describe(error):
    message = first_line(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


# Exercise 1 -----------------------------------------------------------------------------

def _touched_by_loss1():
    model = _fresh_model()
    loss1, _ = _losses(model, *_data())
    loss1.backward()
    return {name for name, p in model.named_parameters() if p.grad is not None}


def exercise_1(answer):
    """answer: the names of the parameters whose .grad `loss1.backward()` alone fills."""
    example = "{'trunk.0.weight', 'trunk.0.bias'}"
    if answer is None:
        return unanswered("set `answer` to a set of parameter names, e.g. " + example)
    if isinstance(answer, str) or not hasattr(answer, "__iter__"):
        return not_yet(f"give a set of names (strings), e.g. {example}, "
                       f"not {kind(answer)}")
    try:
        names = list(answer)
    except Exception as error:  # an odd iterable: say so, never crash the check
        return not_yet(f"could not read the names from `answer`: {_describe(error)}")
    if not all(isinstance(name, str) for name in names):
        return not_yet(f"every item should be a parameter name (a string), e.g. {example}")
    names = set(names)
    all_names = _parameter_names()
    unknown = sorted(names - set(all_names))
    if unknown:
        return not_yet(f"{', '.join(map(repr, unknown))}: not a parameter of the model; "
                       f"the names are those of model.named_parameters(): {', '.join(all_names)}")
    expected = _touched_by_loss1()
    if names == expected:
        return correct("loss1's backward runs through the regression head and the whole shared "
                       "trunk; the classification head's .grad stays None")
    if any(name.startswith("classification_head") for name in names):
        return not_yet("loss1 is computed from the regression head's output only: its backward "
                       "never reaches classification_head, whose .grad stays None")
    missing = expected - names
    if any(name.startswith("trunk") for name in missing):
        return not_yet("loss1's backward also runs through the shared trunk, every layer of it "
                       "(the purple nodes of Figure 2), weights and biases")
    return not_yet("loss1 is made from the regression head's output: its backward fills the "
                   "regression head's weight and bias too")


# Exercise 2 -----------------------------------------------------------------------------

def exercise_2(answer):
    """answer: a function (g1, g2) -> the gradient of 0.3 * loss1 + 0.7 * loss2 with
    respect to one parameter, given that parameter's per-task gradients g1 and g2."""
    if answer is None:
        return unanswered("set `answer` to a function of two gradients, "
                          "e.g. `answer = lambda g1, g2: ...`")
    if not callable(answer):
        return not_yet(f"`answer` should be a function such as `lambda g1, g2: ...`, "
                       f"not {kind(answer)}")
    model = _fresh_model()
    params = dict(model.named_parameters())
    loss1, loss2 = _losses(model, *_data())
    grads1 = torch.autograd.grad(loss1, list(params.values()), retain_graph=True,
                                 materialize_grads=True)
    grads2 = torch.autograd.grad(loss2, list(params.values()), retain_graph=True,
                                 materialize_grads=True)
    weighted = torch.autograd.grad(WEIGHT1 * loss1 + WEIGHT2 * loss2, list(params.values()),
                                   materialize_grads=True)
    for name, g1, g2, expected in zip(params, grads1, grads2, weighted):
        try:
            result = answer(g1.clone(), g2.clone())
        except Exception as error:  # the reader's code: report it, never crash the check
            return not_yet(f"calling answer(g1, g2) raised {_describe(error)}")
        if not isinstance(result, torch.Tensor):
            return not_yet(f"answer(g1, g2) should return a tensor shaped like g1, "
                           f"got {kind(result)}")
        if result.shape != expected.shape:
            return not_yet(f"for {name}, answer(g1, g2) has shape {tuple(result.shape)}; "
                           f"the gradient has the parameter's shape {tuple(expected.shape)}")
        if _close(result, expected):
            continue
        if _close(result, g1 + g2):
            return not_yet("that is the gradient of loss1 + loss2: the weights multiply each "
                           "task's gradient too")
        if _close(result, WEIGHT2 * g1 + WEIGHT1 * g2):
            return not_yet("the weights are swapped: 0.3 goes with loss1 (g1), 0.7 with loss2")
        return not_yet(f"not the gradient of {WEIGHT1} * loss1 + {WEIGHT2} * loss2 (first "
                       f"wrong for {name}); the gradient of a * f + b * g is "
                       "a * grad(f) + b * grad(g)")
    return correct("gradients are linear: weighting the losses weights their gradients, so "
                   "you can also combine per-task gradients after computing them")


# Exercise 3 -----------------------------------------------------------------------------

def _reference_step(model, optimizer, x, y_reg, y_cls):
    optimizer.zero_grad()
    loss1, loss2 = _losses(model, x, y_reg, y_cls)
    (WEIGHT1 * loss1 + WEIGHT2 * loss2).backward()
    optimizer.step()


def _variant(weight1, weight2, zero_grad=True):
    """A wrong step, to recognise a common mistake and say which one it is."""
    def step(model, optimizer, x, y_reg, y_cls):
        if zero_grad:
            optimizer.zero_grad()
        loss1, loss2 = _losses(model, x, y_reg, y_cls)
        (weight1 * loss1 + weight2 * loss2).backward()
        optimizer.step()
    return step


def _run(train_step):
    """Run `train_step` STEPS times on a fresh model; return (parameters, trunk backward runs)."""
    model = _fresh_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    runs = [0]

    def count(grad):
        runs[0] += 1

    def on_trunk_output(module, inputs, features):
        if features.requires_grad:
            features.register_hook(count)

    model.trunk.register_forward_hook(on_trunk_output)
    x, y_reg, y_cls = _data()
    with torch.random.fork_rng(devices=[]):
        for _ in range(STEPS):
            train_step(model, optimizer, x, y_reg, y_cls)
    return torch.nn.utils.parameters_to_vector(model.parameters()).detach(), runs[0]


MISTAKES = [
    (_variant(1.0, 1.0), "it trains on loss1 + loss2: weight them, 0.3 * loss1 + 0.7 * loss2"),
    (_variant(WEIGHT2, WEIGHT1), "the weights are swapped: 0.3 goes with loss1, 0.7 with loss2"),
    (_variant(WEIGHT1, WEIGHT2, zero_grad=False),
     "the second step used the first step's gradients as well: call optimizer.zero_grad() "
     "before backward"),
    (_variant(WEIGHT1, 0.0), "only loss1 was trained: the step should use both losses"),
    (_variant(0.0, WEIGHT2), "only loss2 was trained: the step should use both losses"),
]


def exercise_3(answer):
    """answer: weighted_train_step(model, optimizer, x, y_reg, y_cls), one training step
    on 0.3 * loss1 + 0.7 * loss2 (MSE of the regression head, cross-entropy of the
    classification head) with one backward pass through the trunk."""
    signature = "weighted_train_step(model, optimizer, x, y_reg, y_cls)"
    if answer is None:
        return unanswered(f"set `answer` to your function {signature}")
    if not callable(answer):
        return not_yet(f"`answer` should be a function {signature}, "
                       f"not {kind(answer)}")
    try:
        parameters, trunk_runs = _run(answer)
    except RuntimeError as error:
        if "backward through the graph a second time" in str(error):
            return not_yet("the second backward() found the trunk's saved tensors freed: "
                           "combine the two losses into one and call backward() once")
        if "modified by an inplace operation" in str(error):
            return not_yet("a parameter was updated between two backward calls: step once, "
                           "after the gradient of the whole weighted loss is in .grad")
        return not_yet(f"calling {signature} raised {_describe(error)}")
    except Exception as error:  # the reader's code: report it, never crash the check
        return not_yet(f"calling {signature} raised {_describe(error)}")
    expected, _ = _run(_reference_step)
    start = torch.nn.utils.parameters_to_vector(_fresh_model().parameters()).detach()
    if not _close(parameters, expected):
        if _close(parameters, start):
            return not_yet("the parameters did not change: call optimizer.step() after backward")
        for mistake, hint in MISTAKES:
            if _close(parameters, _run(mistake)[0]):
                return not_yet(hint)
        return not_yet("the parameters differ from one SGD step on 0.3 * loss1 + 0.7 * loss2: "
                       "compute both losses from model(x) with the y_reg and y_cls passed in "
                       "(mse_loss, cross_entropy), weight them, backward once, step once")
    if trunk_runs != STEPS:
        return not_yet(f"right update, but backward ran through the trunk {trunk_runs} times in "
                       f"{STEPS} steps: make one weighted loss from one forward pass and call "
                       "backward() on it once, so that the trunk's backward runs once per step")
    return correct("one forward, one backward through the shared trunk, one step: the cheapest "
                   "way to train on several losses")
