"""Check cells for lesson 02, "retain_graph: what backward() frees".

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 backpropagates each expression twice, exercise 2 runs the three backward
calls, exercise 3 runs the reader's function and watches what it asks autograd to do.
"""
import torch

from .answers import hint_for_unknown_labels, is_number, labels, raised
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered

# The one error autograd raises on a second backward through freed buffers.
FREED_MESSAGE = "Trying to backward through the graph a second time"

# Exercise 1: each candidate is evaluated from this very text, with `a` a 1x4 leaf,
# so what the notebook prints is exactly what the checker runs.
EXPRESSIONS = {
    "A": "(a - 3).mean()",
    "B": "(a / 2).sum()",
    "C": "a.t().sum()",
    "D": "a.sin().sum()",
    "E": "(a + a).sum()",
    "F": "a.sum() * 3",
}


def _fresh_leaf(seed=2):
    """A 1x4 leaf like the lesson's `a`, drawn without touching the global RNG."""
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(1, 4, generator=generator, requires_grad=True)


def _survives_second_backward(text) -> bool:
    a = _fresh_leaf()
    out = eval(text, {"__builtins__": {}}, {"a": a})  # fixed strings above, never the reader's
    out.backward()
    try:
        out.backward()
    except RuntimeError as error:
        if FREED_MESSAGE not in str(error):
            raise
        return False
    return True


def exercise_1(answer) -> Verdict:
    """Which expressions survive a second backward() without retain_graph=True?"""
    if answer is None:
        return unanswered("set `answer` to the set of labels that survive, e.g. {'A', 'B'}")
    chosen = labels(answer)
    if chosen is None:
        return not_yet(f"expected a set of labels such as {{'A', 'C'}}, got {answer!r}")
    hint = hint_for_unknown_labels(chosen, EXPRESSIONS)
    if hint:
        return not_yet(hint)
    survivors = {label for label, text in EXPRESSIONS.items()
                 if _survives_second_backward(text)}
    wrongly_in, missing = sorted(chosen - survivors), sorted(survivors - chosen)
    if wrongly_in:
        label = wrongly_in[0]
        return not_yet(f"{label}, `{EXPRESSIONS[label]}`, does not survive: one of its "
                       "nodes saves a tensor (even a number such as the 2 of `x / 2` is "
                       "saved as a tensor). Look with saved_tensors(...).")
    if missing:
        label = missing[0]
        return not_yet(f"{label}, `{EXPRESSIONS[label]}`, survives too: none of its nodes "
                       "saves a tensor, so the first backward has nothing to free.")
    return correct(f"{', '.join(sorted(survivors))} save no tensors, so a second backward "
                   "works; the others each save one, which the first backward frees.")


def _grad_multiple_of_a(steps) -> float:
    """Run the lesson's graph through `steps` backward calls; a.grad as a multiple of a."""
    a = _fresh_leaf()
    c = (a ** 2) * 2
    outputs = {"d": c.mean(), "e": c.sum()}
    for name, retain in steps:
        outputs[name].backward(retain_graph=retain)
    ratio = a.grad / a
    assert torch.allclose(ratio, ratio[0, 0].expand_as(ratio)), "a.grad is not a multiple of a"
    return ratio[0, 0].item()


def exercise_2(answer) -> Verdict:
    """a.grad after d.backward(retain_graph=True) twice, then e.backward(): k times a?"""
    if answer is None:
        return unanswered("set `answer` to a number k such that a.grad equals k * a")
    if isinstance(answer, torch.Tensor):
        return not_yet("give k as a plain number, like 3 (not a tensor; use .item() "
                       "if you computed it)")
    if not is_number(answer):
        return not_yet(f"expected a number k (a.grad equals k * a), got {answer!r}")
    k = _grad_multiple_of_a([("d", True), ("d", True), ("e", False)])
    if abs(answer - k) < 1e-4:
        return correct(f"a.grad = a + a + 4a = {k:g}a: every backward adds its gradient "
                       "to a.grad, and retain_graph=True let the graph be used three times.")
    if abs(answer - 5) < 1e-4:
        return not_yet("5 is a + 4a, one d and one e; here d.backward runs twice, and "
                       "each call adds its gradient to a.grad.")
    if abs(answer - 4) < 1e-4 or abs(answer - 1) < 1e-4:
        return not_yet("a.grad does not keep only the last gradient: backward adds into "
                       ".grad. Add up what each of the three calls contributes.")
    return not_yet("each d.backward() adds ∂d/∂a = a to a.grad and e.backward() adds "
                   "∂e/∂a = 4a. Add up the three calls.")


def exercise_3(answer) -> Verdict:
    """A function of a leaf `a` that leaves a.grad = ∂(d + e)/∂a, without retain_graph."""
    if answer is None:
        return unanswered("set `answer` to your function, e.g. `answer = one_pass`")
    if not callable(answer):
        return not_yet(f"expected a function taking `a`, like `def one_pass(a): ...`; "
                       f"got {type(answer).__name__}")
    a = _fresh_leaf(seed=3)
    with watch_backward_calls() as calls:
        try:
            answer(a)
        except RuntimeError as error:
            if FREED_MESSAGE in str(error):
                return not_yet("it still backpropagates twice through the shared nodes; "
                               "add d and e first, so that one backward does it all.")
            return not_yet(f"your function raised RuntimeError: {error}")
        except Exception as error:  # the reader's code: report it, don't crash the cell
            return not_yet(raised(error))
    if any(call.retain_graph for call in calls):
        return not_yet("it works, but with retain_graph=True (or create_graph=True): "
                       "do it without keeping the graph.")
    if a.grad is None:
        return not_yet("a.grad is still None: build the graph from the `a` your function "
                       "receives, and call backward on it.")
    expected = 5 * a.detach()
    if a.grad.shape != a.shape or not torch.allclose(a.grad, expected):
        ratio = (a.grad / a.detach()).flatten()
        found = (f"{ratio[0].item():g} * a" if torch.allclose(ratio, ratio[0].expand_as(ratio))
                 else "not a multiple of a")
        return not_yet(f"a.grad came out {found}, expected 5 * a (∂d/∂a + ∂e/∂a = a + 4a).")
    passes = len(calls)
    how = ("in one backward pass" if passes == 1
           else f"in {passes} backward passes, each through a graph of its own")
    return correct(f"a.grad = 5a {how}, and no graph was kept alive.")
