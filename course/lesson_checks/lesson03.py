"""Check cells for lesson 03, gradient accumulation.

exercise_1: predict `w.grad` after three backward() calls without zeroing.
exercise_2: which normalisation layers keep "micro-batches add up to the full batch".
exercise_3: an accumulation function for micro-batches of unequal sizes.

Each checker works out the right answer by running PyTorch, never from a stored key,
and leaves the reader's random state alone (models and data come from seeded set-ups).
"""
import torch
from torch import nn
from torch.nn import functional as F

from .answers import as_float_tensor, close, kind, raised, read_labels
from .seeding import fresh, seeded
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered


def _regression_data(n_samples, seed):
    """Like the lesson's: 3 features, a linear target plus noise; own generator, so the
    global RNG is not touched."""
    generator = torch.Generator().manual_seed(seed)
    X = torch.randn(n_samples, 3, generator=generator)
    noise = 0.1 * torch.randn(n_samples, 1, generator=generator)
    return X, X @ torch.tensor([[2.0, -1.0, 0.5]]).T + 0.3 + noise


def _grads(loss, model):
    with torch.enable_grad():
        return list(torch.autograd.grad(loss(), list(model.parameters())))


def _all_close(grads, others):
    return all(close(g, o) for g, o in zip(grads, others))


# Exercise 1 ---------------------------------------------------------------

CALLS = ("(w ** 2).sum()", "(3 * w).sum()", "(w ** 2).mean()")


def _losses(w):
    return [(w ** 2).sum(), (3 * w).sum(), (w ** 2).mean()]


def _each_call_and_after_all():
    """Each call's own gradient, and w.grad after running the three backward() calls."""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    with torch.enable_grad():
        own = [torch.autograd.grad(loss, w)[0] for loss in _losses(w)]
        for loss in _losses(w):
            loss.backward()
    return own, w.grad


def _two_numbers(answer):
    """The reader's w.grad as a tensor of two finite numbers, or None."""
    values = as_float_tensor(answer)
    if values is None or values.numel() != 2 or not torch.isfinite(values).all():
        return None
    return values.flatten()


def _what_was_given(answer):
    values = as_float_tensor(answer)
    if values is None:
        return kind(answer)
    if values.numel() == 2:
        return "a value that is not a finite number"
    return f"{values.numel()} number(s)"


def exercise_1(answer) -> Verdict:
    """answer: w.grad after the three calls, as two numbers, e.g. [0.0, 0.0]."""
    if answer is None:
        return unanswered("replace None with w.grad after the three calls, "
                          "as a list of two numbers, e.g. [0.0, 0.0]")
    values = _two_numbers(answer)
    if values is None:
        return not_yet(f"give w.grad as a list of two numbers, e.g. [0.0, 0.0] (w has two "
                       f"elements, so its gradient has two); got {_what_was_given(answer)}")
    own, after_all = _each_call_and_after_all()
    if close(values, after_all):
        parts = " + ".join(str(g.tolist()) for g in own)
        return correct(f"w.grad = {parts} = {after_all.tolist()}: each backward() adds its "
                       "own gradient to what .grad already holds")
    for k, alone in enumerate(own, start=1):
        if close(values, alone):
            return not_yet(f"that is call {k}'s gradient alone ({CALLS[k - 1]}); .grad is not "
                           "overwritten by a later call")
    if close(values, sum(own) / 3):
        return not_yet("that is the average of the three gradients; does backward() "
                       "average with what .grad holds?")
    for k in range(3):
        if close(values, sum(own) - own[k]):
            return not_yet(f"call {k + 1}'s gradient is missing from your answer: "
                           "it is in .grad too")
    if close(values, sum(own) + own[2]):
        return not_yet("call 3 takes a mean over w's 2 elements, not a sum")
    return not_yet("work out each call's gradient at w = [1, -2] on its own, then combine "
                   "them as backward() does; mind that call 3 takes a mean")


# Exercise 2 ---------------------------------------------------------------

N_SAMPLES_2, N_MICRO_2 = 64, 4

# label: (the layer between the two Linear layers, the mode the model is put in)
LAYERS = {
    "A": (lambda: nn.BatchNorm1d(4), "eval"),
    "B": (lambda: nn.LayerNorm(4), "train"),
    "C": (lambda: nn.BatchNorm1d(4, affine=False), "train"),
    "D": (lambda: nn.BatchNorm1d(4, track_running_stats=False), "eval"),
}

# What to look at again, for a label the reader put on the wrong side.
HINT_IF_LEFT_OUT = {
    "A": "look again at A: in eval mode, which mean and variance does BatchNorm normalise "
         "with, and do they depend on the other samples of the micro-batch?",
    "B": "look again at B: LayerNorm normalises each sample over its own features; does a "
         "sample's output depend on which micro-batch it is in?",
}
HINT_IF_PUT_IN = {
    "C": "look again at C: affine or not, what does BatchNorm normalise with in train mode?",
    "D": "look again at D: a BatchNorm that keeps no running statistics has only one mean "
         "and variance to normalise with, even in eval mode: which one?",
}


def _model_with(label):
    make_layer, mode = LAYERS[label]
    model = fresh(lambda: nn.Sequential(nn.Linear(3, 4), make_layer(), nn.Linear(4, 1)), seed=0)
    return model.train(mode == "train")


def keeps_the_equality(label) -> bool:
    """Run it: do 4 micro-batches weighted 1/4 give the full batch's gradient?"""
    X, y = _regression_data(N_SAMPLES_2, seed=3)
    model = _model_with(label)
    full = _grads(lambda: F.mse_loss(model(X), y), model)
    model = _model_with(label)  # the same weights, and BatchNorm's running stats not yet used
    micro = [torch.zeros_like(p) for p in model.parameters()]
    for X_micro, y_micro in zip(X.chunk(N_MICRO_2), y.chunk(N_MICRO_2)):
        own = _grads(lambda: F.mse_loss(model(X_micro), y_micro) / N_MICRO_2, model)
        micro = [m + g for m, g in zip(micro, own)]
    return _all_close(micro, full)


def exercise_2(answer) -> Verdict:
    """answer: the set of labels whose layer keeps the equality, e.g. {"A", "D"}."""
    if answer is None:
        return unanswered('replace None with the set of labels whose layer keeps the '
                          'equality, e.g. {"A", "D"}, or set() for none')
    given, hint = read_labels(answer, LAYERS)
    if hint:
        return not_yet(hint)
    keeps = {label for label in LAYERS if keeps_the_equality(label)}
    if given == keeps:
        breaks = sorted(set(LAYERS) - keeps)
        return correct(f"{' and '.join(sorted(keeps))} treat each sample on its own; "
                       f"{' and '.join(breaks)} normalise each micro-batch with its own mean "
                       "and variance")
    for label in LAYERS:  # one label at a time: the hint gives no other label away
        if label in keeps and label not in given:
            return not_yet(HINT_IF_LEFT_OUT.get(label, f"look again at {label}"))
        if label in given and label not in keeps:
            return not_yet(HINT_IF_PUT_IN.get(label, f"look again at {label}"))
    raise AssertionError("unreachable: the sets differ")


# Exercise 3 ---------------------------------------------------------------

N_SAMPLES_3 = 50  # 4 and 3 do not divide it: the micro-batches differ in size
N_MICRO_TRIED = (4, 3)


def _fresh_linear():
    return fresh(lambda: nn.Linear(3, 1), seed=0)


def _full_batch_grads(X, y):
    model = _fresh_linear()
    return _grads(lambda: F.mse_loss(model(X), y), model)


def _run_reader_function(function, X, y, n_micro):
    """Run the reader's function on a model holding stale grads; record what it did."""
    model = _fresh_linear()
    with torch.enable_grad():  # gradients left over from an earlier step
        F.mse_loss(model(3 * X[:5]), y[:5]).backward()
    stale = [p.grad.clone() for p in model.parameters()]
    inputs, weight_grads = [], []
    model.register_forward_pre_hook(lambda module, args: inputs.append(args[0] if args else None))
    model.weight.register_hook(lambda grad: weight_grads.append(grad.detach().clone()))
    with seeded(0), torch.enable_grad(), watch_backward_calls() as calls:
        function(model, X, y, n_micro)
    sizes = [len(x) if isinstance(x, torch.Tensor) and x.dim() > 0 else 0 for x in inputs]
    return model, stale, sizes, len(calls), weight_grads


def _came_from_backward(final, stale, reached):
    """Is the weight's final .grad what the reader's backward calls put there: the sum of
    the gradients that reached it from some call on (.grad cleared in the loop), with or
    without the stale gradient, up to one factor (a sum of losses divided afterwards)?
    A gradient written in by hand after backward calls that computed something else is not."""
    for start in range(len(reached)):
        total = sum(reached[start:])
        for candidate in (total, stale + total):
            factor = (final * candidate).sum() / (candidate * candidate).sum()
            if torch.isfinite(factor) and close(final, factor * candidate):
                return True
    return False


def _holds_some_of(grads, candidate, stale):
    """Are `grads` the candidate plus some multiple of the stale gradients (the stale ones
    left in .grad, maybe scaled with the rest when a sum is divided afterwards)?"""
    leftover = torch.cat([(g - c).flatten() for g, c in zip(grads, candidate)]).double()
    stale = torch.cat([s.flatten() for s in stale]).double()
    factor = (leftover @ stale) / (stale @ stale)
    return abs(factor) > 1e-3 and close(leftover, factor * stale)


def _wrong_ways(X, y, sizes, expected):
    """(gradients, hint) for the usual mistakes, worked out by running them on the
    micro-batches the reader's function used (taken as consecutive pieces of X)."""
    model = _fresh_linear()
    own = [_grads(lambda: F.mse_loss(model(X_k), y_k), model)
           for X_k, y_k in zip(X.split(sizes), y.split(sizes))]

    def weighted(weights, pieces=own):
        return [sum(w * g[i] for w, g in zip(weights, pieces)) for i in range(len(expected))]

    n, total = len(sizes), sum(sizes)
    last_only = ("only the last micro-batch's gradient is left in .grad: "
                 "what clears it in the loop?")
    return [
        (weighted([1 / n] * n), f"each micro-batch counts 1/{n}, but they hold {sizes} samples: "
                                "a sample in a smaller one counts more than in the full batch's "
                                "mean"),
        (weighted([1] * n), f"unscaled, the {n} micro-batch means add up to about {n} times the "
                            "full batch's mean: scale each micro-batch loss by its share"),
        ([total * g for g in expected], f"your gradients are {total} times the full batch's: "
                                        "a sum of squared errors where the full batch takes "
                                        "their mean"),
        (weighted([sizes[-1] / total], own[-1:]), last_only),
        (weighted([1 / n], own[-1:]), last_only),
        (weighted([1], own[-1:]), last_only),
    ]


def exercise_3(answer) -> Verdict:
    """answer: a function accumulate(model, X, y, n_micro) that fills each parameter's .grad."""
    if answer is None:
        return unanswered("replace None with your function accumulate(model, X, y, n_micro)")
    if not callable(answer):
        return not_yet("answer should be a function accumulate(model, X, y, n_micro) "
                       f"(def accumulate(...): ..., then answer = accumulate); got {kind(answer)}")
    X, y = _regression_data(N_SAMPLES_3, seed=5)
    for n_micro in N_MICRO_TRIED:
        try:
            model, stale, sizes, backwards, reached = _run_reader_function(
                answer, X, y, n_micro)
        except Exception as error:  # the reader's code: report, do not crash
            return not_yet(f"{raised(error)} (called with n_micro={n_micro} on "
                           f"{N_SAMPLES_3} samples)")
        if len(sizes) != n_micro or min(sizes, default=0) < 1 or sum(sizes) != N_SAMPLES_3:
            return not_yet(f"with n_micro={n_micro}, expected {n_micro} forward passes on "
                           f"micro-batches that together hold the {N_SAMPLES_3} samples; "
                           f"the model saw {len(sizes)}, of sizes {sizes}")
        if backwards != n_micro or len(reached) != n_micro:
            return not_yet(f"with n_micro={n_micro}, expected one backward() per micro-batch, "
                           f"{n_micro} in all, each reaching the weight; counted {backwards} "
                           f"backward call(s), {len(reached)} reaching the weight")
        grads = [p.grad for p in model.parameters()]
        if any(g is None for g in grads):
            return not_yet(f"with n_micro={n_micro}, a parameter's .grad is None afterwards")
        if not _came_from_backward(model.weight.grad, stale[0], reached):
            return not_yet(f"with n_micro={n_micro}, the weight's .grad is not what your "
                           "backward() calls computed: let them fill .grad, do not write a "
                           "gradient in by hand")
        expected = _full_batch_grads(X, y)
        if _all_close(grads, expected):
            continue
        mistakes = _wrong_ways(X, y, sizes, expected)
        for candidate in [expected] + [wrong for wrong, _ in mistakes]:
            if _holds_some_of(grads, candidate, stale):
                return not_yet("the gradients the model held before your function ran are "
                               "still in .grad, added to yours")
        for wrong, hint in mistakes:
            if _all_close(grads, wrong):
                return not_yet(f"with n_micro={n_micro}: {hint}")
        return not_yet(f"with n_micro={n_micro} the gradients differ from the full batch's: "
                       "each micro-batch loss is a mean over its own samples; what weight "
                       f"makes every sample count as in the mean over all {N_SAMPLES_3}?")
    return correct(f"for n_micro in {N_MICRO_TRIED} on {N_SAMPLES_3} samples, one backward() "
                   "per micro-batch leaves the full batch's gradient in .grad")
