"""Check cells for lesson 03, gradient accumulation.

exercise_1: predict `w.grad` after three backward() calls without zeroing.
exercise_2: the weights that make unequal micro-batches add up to the full batch.
exercise_3: a micro-batch accumulation function, run against the full batch's gradients.

Each checker works out the right answer by running PyTorch, never from a stored
number, and never changes the reader's random state (it seeds inside fork_rng).
"""
import math

import torch
from torch import nn
from torch.nn import functional as F

from .answers import raised
from .seeding import seeded
from .verdict import Verdict, correct, not_yet, unanswered


def _numbers(answer, count):
    """`answer` as a list of `count` finite floats, or None if it is not that."""
    if isinstance(answer, (str, bytes, dict, set)):
        return None
    if isinstance(answer, torch.Tensor):
        answer = answer.detach().flatten().tolist()
    try:
        values = [float(v) for v in answer]
    except (TypeError, ValueError, RuntimeError):
        return None
    if len(values) != count or not all(math.isfinite(v) for v in values):
        return None
    return values


def _close(values, expected):
    return torch.allclose(torch.tensor(values, dtype=torch.float64),
                          torch.as_tensor(expected, dtype=torch.float64),
                          rtol=1e-4, atol=1e-5)


# Exercise 1 ---------------------------------------------------------------

W_START = [1.0, -2.0]
CALLS = ["(w ** 2).sum()", "(3 * w).sum()", "(w ** 2).mean()"]


def _exercise_1_grads():
    """Each call's own gradient, computed for real."""
    w = torch.tensor(W_START, requires_grad=True)
    losses = [(w ** 2).sum(), (3 * w).sum(), (w ** 2).mean()]
    return [torch.autograd.grad(loss, w)[0] for loss in losses]


def exercise_1(answer) -> Verdict:
    """answer: w.grad after the three calls, as two numbers, e.g. [0.0, 0.0]."""
    if answer is None:
        return unanswered("replace None with w.grad after the three calls, "
                          "as a list of two numbers, e.g. [0.0, 0.0]")
    values = _numbers(answer, 2)
    if values is None:
        return not_yet("give w.grad as a list of two numbers, e.g. [0.0, 0.0] "
                       "(w has two elements, so its gradient has two)")
    first, second, third = _exercise_1_grads()
    total = first + second + third
    if _close(values, total):
        return correct(f"w.grad = {first.tolist()} + {second.tolist()} + {third.tolist()} "
                       f"= {total.tolist()}: each backward() adds its gradient to .grad.")
    for k, alone in enumerate((first, second, third), start=1):
        if _close(values, alone):
            return not_yet(f"that is what call {k} alone gives ({CALLS[k - 1]}); but .grad "
                           "is not overwritten: every call adds to what the earlier ones left")
    if _close(values, total / 3):
        return not_yet("that is the average of the three gradients; backward() adds, "
                       "it does not average")
    if _close(values, third + second):
        return not_yet("calls 2 and 3 are in there, but call 1 also left its gradient in .grad")
    return not_yet("work out each call's gradient on its own and add the three up: for call 1, "
                   "d/dw sum(w**2) = 2w = [2.0, -4.0]; mind that call 3 takes a mean")


# Exercise 2 ---------------------------------------------------------------

MICRO_SIZES = (8, 8, 16, 32)
TOTAL = sum(MICRO_SIZES)


def _regression_data(n_samples, seed):
    """A small seeded regression problem, drawn without touching the global RNG."""
    generator = torch.Generator().manual_seed(seed)
    X = torch.randn(n_samples, 3, generator=generator)
    noise = 0.1 * torch.randn(n_samples, 1, generator=generator)
    return X, X @ torch.tensor([[2.0, -1.0, 0.5]]).T + 0.3 + noise


def _fresh_model():
    """The same nn.Linear(3, 1) every time; the reader's RNG state is left as it was."""
    with seeded(0):
        return nn.Linear(3, 1)


def _full_batch_grads(X, y):
    model = _fresh_model()
    with torch.enable_grad():
        return torch.autograd.grad(F.mse_loss(model(X), y), list(model.parameters()))


def _weights(answer):
    """The reader's four weights, from a list or from a function weight(size, total)."""
    if callable(answer):
        weights = []
        for size in MICRO_SIZES:
            try:
                value = answer(size, TOTAL)
            except Exception as error:  # the reader's code: report, do not crash
                return None, not_yet(f"{raised(error)} (it is called as "
                                     f"answer(size, total), e.g. answer(8, {TOTAL}))")
            weights.append(value)
        values = _numbers(weights, len(MICRO_SIZES))
        if values is None:
            return None, not_yet(f"your function should return one number per call; for sizes "
                                 f"{list(MICRO_SIZES)} it returned {weights!r}")
        return values, None
    values = _numbers(answer, len(MICRO_SIZES))
    if values is None:
        return None, not_yet(f"give four numbers, one weight per micro-batch in the order "
                             f"{list(MICRO_SIZES)}, e.g. [1.0, 1.0, 1.0, 1.0]; "
                             "or a function weight(size, total)")
    return values, None


def exercise_2(answer) -> Verdict:
    """answer: four weights for micro-batches of 8, 8, 16 and 32 samples, or weight(size, total)."""
    if answer is None:
        return unanswered(f"replace None with four weights for micro-batches of sizes "
                          f"{list(MICRO_SIZES)}, or a function weight(size, total)")
    weights, problem = _weights(answer)
    if problem is not None:
        return problem
    X, y = _regression_data(TOTAL, seed=3)
    expected = _full_batch_grads(X, y)
    model = _fresh_model()
    with torch.enable_grad():
        for weight, X_micro, y_micro in zip(weights, X.split(MICRO_SIZES), y.split(MICRO_SIZES)):
            (F.mse_loss(model(X_micro), y_micro) * weight).backward()
    if all(torch.allclose(p.grad, g, atol=1e-6) for p, g in zip(model.parameters(), expected)):
        shown = ", ".join(f"{w:g}" for w in weights)
        return correct(f"weights [{shown}] = size / {TOTAL}: every sample counts 1/{TOTAL}, "
                       "as in the full batch's mean, so the accumulated grads equal the full batch's")
    if _close(weights, [1.0] * 4):
        return not_yet("unscaled, each micro-batch's mean counts as much as the whole batch's: "
                       "the sum of four means is not the mean of all samples")
    if _close(weights, [1 / len(MICRO_SIZES)] * 4):
        return not_yet("1/4 each works when the micro-batches are the same size; here a sample in "
                       "a batch of 8 would count four times as much as one in the batch of 32")
    ratios = [w / s for w, s in zip(weights, MICRO_SIZES)]
    if all(math.isclose(r, ratios[0], rel_tol=1e-4) for r in ratios) and ratios[0] > 0:
        return not_yet(f"proportional to the size is right, but the total is off: your weights "
                       f"add up to {sum(weights):g}; the full batch is one mean, so they should "
                       "add up to 1")
    return not_yet(f"each micro-batch loss is a mean over its own samples; the full-batch loss is "
                   f"the mean over all {TOTAL}. What share of the {TOTAL} samples does each "
                   "micro-batch hold?")


# Exercise 3 ---------------------------------------------------------------

N_SAMPLES = 48  # divisible by every n_micro tried below
N_MICRO_TRIED = (2, 4)


def _run_reader_function(function, X, y, n_micro):
    """Run the reader's function on a model holding stale grads; record what it did."""
    model = _fresh_model()
    with torch.enable_grad():  # stale gradients from an earlier "step"
        F.mse_loss(model(X[:5] * 3), y[:5]).backward()
    stale = [p.grad.clone() for p in model.parameters()]
    forward_sizes, backward_count = [], [0]
    model.register_forward_pre_hook(
        lambda module, args: forward_sizes.append(len(args[0]) if args else None))

    def count(grad):
        backward_count[0] += 1

    model.weight.register_hook(count)
    with torch.enable_grad():
        function(model, X, y, n_micro)
    return model, stale, forward_sizes, backward_count[0]


def exercise_3(answer) -> Verdict:
    """answer: a function accumulate(model, X, y, n_micro) that fills each parameter's .grad."""
    if answer is None:
        return unanswered("replace None with your function accumulate(model, X, y, n_micro)")
    if not callable(answer):
        return not_yet("answer should be a function accumulate(model, X, y, n_micro) "
                       "(def accumulate(...): ..., then answer = accumulate); "
                       f"got an object of type {type(answer).__name__}")
    X, y = _regression_data(N_SAMPLES, seed=5)
    expected = _full_batch_grads(X, y)
    for n_micro in N_MICRO_TRIED:
        micro_size = N_SAMPLES // n_micro
        try:
            model, stale, sizes, backwards = _run_reader_function(answer, X, y, n_micro)
        except Exception as error:  # the reader's code: report, do not crash
            return not_yet(f"{raised(error)} (called with n_micro={n_micro} on "
                           f"{N_SAMPLES} samples)")
        grads = [p.grad for p in model.parameters()]
        if any(g is None for g in grads):
            return not_yet(f"with n_micro={n_micro}, a parameter's .grad is None afterwards: "
                           "did you call backward() on each micro-batch loss?")
        if sizes != [micro_size] * n_micro:
            seen = ", ".join(map(str, sizes[:6])) + (", ..." if len(sizes) > 6 else "")
            return not_yet(f"with n_micro={n_micro} and {N_SAMPLES} samples, expected "
                           f"{n_micro} forward passes of {micro_size} samples each; the model "
                           f"saw {len(sizes)} batches, of sizes [{seen}]")
        if backwards != n_micro:
            return not_yet(f"with n_micro={n_micro}, expected {n_micro} backward calls (one per "
                           f"micro-batch); the weight's gradient was computed {backwards} times")

        def same(scale, plus_stale):
            return all(torch.allclose(g, scale * e + (s if plus_stale else 0), atol=1e-6)
                       for g, e, s in zip(grads, expected, stale))

        if same(1, False):
            continue
        if same(1, True) or same(n_micro, True):
            return not_yet("the gradients left in .grad before your function ran are still "
                           "there: clear them first (model.zero_grad())"
                           + (", and scale each micro-batch loss" if same(n_micro, True) else ""))
        if same(n_micro, False):
            return not_yet(f"with n_micro={n_micro} the gradients are {n_micro} times the full "
                           "batch's: scale each micro-batch loss by its share, 1 / n_micro")
        return not_yet(f"with n_micro={n_micro} the gradients differ from the full batch's "
                       "mean-squared-error gradients: use F.mse_loss (a mean) on each micro-batch, "
                       "divided by n_micro")
    return correct(f"for n_micro in {N_MICRO_TRIED}, your accumulated gradients equal the "
                   "full batch's (torch.allclose on every parameter)")
