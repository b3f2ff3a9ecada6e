"""Check cells for lesson 07, "Debugging a second-backward error".

Both exercises hand the reader a broken training loop, as a function
`train(encoder, head, opt, x, y, steps)` that returns the loss of every step; the reader
fixes it. The check cell passes the lesson's own `make_net`, `x` and `y`; nothing here
defines the lesson's net. Each checker:

- builds a fresh net with `make_net()` (its seeding is kept from the reader's random
  numbers) and runs the reader's function for STEPS steps, watching every backward call
  (`spying.watch_backward_calls`);
- refuses a function of this module (the references are private, but importable);
- turns an error into a hint (the freed-buffer and in-place errors by name);
- refuses `retain_graph=True`, and a graph that grows from step to step: the bytes the
  saved tensors of each backward's graph keep alive (`retained_bytes`, read by the spy
  just before each call) must be the same from the second step on;
- compares the trained weights, and the losses returned, with those of the intended fix
  run on a fresh net the same way, so the model learns as the fix makes it learn; a
  wrong fix that runs gets a hint that fits it.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn

from . import errors
from .answers import kind
from .seeding import seeded
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered

STEPS = 8  # more steps than the lesson's loops: a leak or a stale graph shows up


class _BadSetup(Exception):
    """The check cell was given something else than the lesson's make_net, x and y."""


def _fresh_net(make_net):
    """A fresh (encoder, head, optimizer) from the lesson's make_net, which seeds the
    global RNG: run it on a forked RNG, so the reader's random numbers stay as they were."""
    with seeded(0):
        made = make_net()
    if (not isinstance(made, tuple) or len(made) != 3
            or not all(isinstance(m, nn.Module) for m in made[:2])
            or not isinstance(made[2], torch.optim.Optimizer)):
        raise _BadSetup
    return made


def _weights(encoder, head):
    return [p.detach().clone() for module in (encoder, head) for p in module.parameters()]


def _train(train, make_net, x, y):
    """Run `train` on a fresh net: (losses it returned, trained weights)."""
    encoder, head, opt = _fresh_net(make_net)
    with seeded(1):  # a fix that draws random numbers draws the same ones every check
        losses = train(encoder, head, opt, x, y, STEPS)
    return losses, _weights(encoder, head)


def _same(a, b):
    return len(a) == len(b) and all(torch.allclose(s, t, rtol=1e-4, atol=1e-6)
                                    for s, t in zip(a, b))


def _as_losses(returned):
    """The reader's list of STEPS loss values as floats, or None."""
    if not isinstance(returned, (list, tuple)) or len(returned) != STEPS:
        return None
    values = []
    for value in returned:
        if isinstance(value, torch.Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        values.append(float(value))
    return values if all(math.isfinite(v) for v in values) else None


def _error_hint(error, name):
    which = errors.which_error(error)
    if which == errors.FREED_BUFFER:
        return ("a backward still reaches a graph that an earlier step's backward freed: "
                f"run {name} under explain() and look at what one step hands to the next")
    if which == errors.VERSION_COUNTER:
        return ("a backward needs a tensor that was changed in place after autograd saved "
                f"it: run {name} under explain(), it names the line")
    return (f"your function raised {errors.describe(error)} (it is called as "
            f"answer(encoder, head, opt, x, y, steps={STEPS}))")


def _check(answer, make_net, x, y, *, name, reference, wrong_fixes,
           right_start_hint=None):
    """The common part of both exercises. `wrong_fixes` maps a function that trains as
    a known wrong fix does to the hint for it; `right_start_hint` is for an answer whose
    first loss is the intended fix's but whose training then goes another way."""
    if answer is None:
        return unanswered(f"fix {name}, then set `answer = {name}` and run this cell again")
    if not callable(answer):
        return not_yet(f"expected your function, e.g. `answer = {name}`; got {kind(answer)}")
    if getattr(answer, "__module__", None) == __name__:
        return not_yet(f"that is the checker's own function: fix {name} in the notebook "
                       "and answer with it")
    try:
        expected_losses, expected = _train(reference, make_net, x, y)
    except _BadSetup:
        return not_yet("the check cell passes the lesson's make_net, x and y: run the "
                       "set-up cells again and leave the check cell as it is")
    except Exception:  # make_net, x or y is not the lesson's (redefined?)
        return not_yet("the check cell passes the lesson's make_net, x and y, and these do "
                       "not train the lesson's net: run the set-up cells again")
    with watch_backward_calls() as calls:
        try:
            returned, trained = _train(answer, make_net, x, y)
        except Exception as error:  # the reader's code: report it, don't crash the cell
            return not_yet(_error_hint(error, name))
    if not calls:
        return not_yet("backward() was never called: each step needs one backward")
    if any(call.retain_graph for call in calls):
        return not_yet("it runs, but a backward keeps its graph (retain_graph=True): "
                       "find what reaches back into an earlier step and cut that instead")
    if len(calls) != STEPS:
        return not_yet(f"{len(calls)} backward calls for {STEPS} steps: one backward "
                       "and one optimizer step per step")
    sizes = [call.retained_bytes for call in calls]
    if None in sizes or len(set(sizes[1:])) != 1:
        return not_yet("the graph each backward runs over grows from step to step: "
                       "does something carry one step's graph into the next?")
    losses = _as_losses(returned)
    if not _same(trained, expected):
        for wrong_fix, hint in wrong_fixes.items():
            if _same(trained, _train(wrong_fix, make_net, x, y)[1]):
                return not_yet(hint)
        if right_start_hint and losses and math.isclose(losses[0], expected_losses[0],
                                                        rel_tol=1e-4, abs_tol=1e-6):
            return not_yet(right_start_hint)
        return not_yet("it runs, but the trained weights differ from the intended fix's: "
                       "keep the loss the same computation, with one backward and one "
                       "optimizer step per step")
    if losses is None or not _same([torch.tensor(losses)], [torch.tensor(expected_losses)]):
        return not_yet(f"the weights are right, but return the list of the {STEPS} "
                       "losses, loss.item() of each step, as the given function does")
    return correct(f"{STEPS} steps, one backward each and none reaching into an earlier "
                   f"step; the loss went from {losses[0]:.3f} to {losses[-1]:.3f}.")


# Exercise 1: an anchor for the features, cached on first use.

def _anchored(encoder, head, opt, x, y, steps, anchor_of):
    """The exercise's loop, with the anchor made by `anchor_of(features, anchor)`."""
    anchor, losses = None, []
    for _ in range(steps):
        features = encoder(x)
        anchor = anchor_of(features, anchor)
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _anchor_kept_from_before_training(encoder, head, opt, x, y, steps):
    """The intended fix: the first step's features, as values with no graph behind them.
    Private, like the other references here: a check refuses this module's functions."""
    return _anchored(encoder, head, opt, x, y, steps,
                     lambda features, anchor: features.detach() if anchor is None else anchor)


def _anchor_made_every_step(encoder, head, opt, x, y, steps):
    """A wrong fix: an anchor made again in every step, equal to the features."""
    return _anchored(encoder, head, opt, x, y, steps,
                     lambda features, anchor: features.detach())


def exercise_1(answer, make_net=None, x=None, y=None) -> Verdict:
    """train_with_anchor, fixed: the penalty pulls the features towards those the
    encoder gave before training, and no step's backward reaches an earlier step."""
    return _check(answer, make_net, x, y, name="train_with_anchor",
                  reference=_anchor_kept_from_before_training,
                  wrong_fixes={_anchor_made_every_step: (
                      "it runs, but the penalty never pulls the features back (is the anchor "
                      "made again in every step, equal to the features it is compared "
                      "with?). The anchor is the features from before training, made once, "
                      "and the penalty stays in the loss")})


# Exercise 2: rows scaled to unit length, in place, inside a helper.

def _unit_rows_out_of_place(encoder, head, opt, x, y, steps):
    """The intended fix: the same division, as a new tensor."""
    losses = []
    for _ in range(steps):
        features = encoder(x)
        features = features / features.norm(dim=1, keepdim=True)
        loss = F.mse_loss(head(features), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _rows_not_scaled(encoder, head, opt, x, y, steps):
    """A wrong fix: the normalisation dropped."""
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(head(encoder(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def exercise_2(answer, make_net=None, x=None, y=None) -> Verdict:
    """train_on_directions, fixed: the head sees rows of length 1, and autograd sees the
    whole division, with nothing that it saved changed in place."""
    hidden = ("the first loss is right, but training then differs: part of the "
              "normalisation is hidden from autograd (a .detach(), .data or "
              "torch.no_grad()), and backward must see both the division and the norm")
    return _check(answer, make_net, x, y, name="train_on_directions",
                  reference=_unit_rows_out_of_place,
                  wrong_fixes={_rows_not_scaled: (
                      "it runs, but the rows are no longer scaled to length 1: keep the "
                      "division, without changing in place a tensor that autograd saved")},
                  right_start_hint=hidden)
