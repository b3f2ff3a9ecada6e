"""Check cells for lesson 02, "retain_graph: what backward() frees".

exercise_1: which expressions survive a second backward() without retain_graph;
exercise_2: which saved tensors are still alive after an order of backward calls;
exercise_3: a function that gets the gradient of two outputs from ONE graph and ONE
            backward call, without retain_graph.

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 backpropagates each expression twice, exercise 2 runs the calls and asks weak
references what is still alive, exercise 3 runs the reader's function and watches what
it asks autograd to do.
"""
import inspect
import weakref
from contextlib import contextmanager

import torch

from autograd_lens import saved_tensors

from .answers import kind, raised, read_labels
from .errors import FREED_BUFFER, NO_ERROR, error_raised_by, which_error
from .seeding import fresh_leaf
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered


def _nodes_from(*starts):
    """Every backward node reachable from the nodes `starts`, leaves' AccumulateGrad too."""
    seen, stack = [], list(starts)
    while stack:
        node = stack.pop()
        if node is None or any(node is s for s in seen):
            continue
        seen.append(node)
        stack.extend(fn for fn, _ in node.next_functions)
    return seen


def _nodes(*roots):
    """Every backward node that the tensors `roots` reach."""
    return _nodes_from(*(t.grad_fn for t in roots if isinstance(t, torch.Tensor)))


# Exercise 1 ---------------------------------------------------------------
# Each candidate is evaluated from this very text, with `a` a 1x4 leaf, so what the
# notebook lists is exactly what the checker runs (a test compares the two).
EXPRESSIONS = {
    "A": "(a - 3).mean()",
    "B": "(a / 2).sum()",
    "C": "a.t().sum()",
    "D": "a.sin().sum()",
    "E": "(a + a).sum()",
    "F": "a.sum() * 3",
}


def _build(label):
    a = fresh_leaf(seed=2)
    return a, eval(EXPRESSIONS[label], {"__builtins__": {}}, {"a": a})  # fixed strings above


def _survives_second_backward(label) -> bool:
    _, out = _build(label)
    out.backward()
    return error_raised_by(out.backward) == NO_ERROR


def _why_it_fails(label) -> str:
    """What the expression's graph saved, read from a fresh graph."""
    a, out = _build(label)
    rows = saved_tensors(out)
    which = f"{label}, `{EXPRESSIONS[label]}`, does not survive"
    if not rows:
        return f"{which}: run it twice and read the error."
    row = rows[0]
    if row.tensor is a:
        return (f"{which}: {row.node} saves `{row.attribute}`, which is `a` itself. After the "
                "first backward `a` is still alive (you hold it), but the node has dropped "
                "its reference to it, and the second backward needs it.")
    return (f"{which}: {row.node} saves `{row.attribute}` as a tensor, and the first "
            "backward frees it.")


def _why_it_survives(label) -> str:
    _, out = _build(label)
    names = [node.name() for node in _nodes(out) if not hasattr(node, "variable")]
    return (f"{label}, `{EXPRESSIONS[label]}`, survives too: none of its nodes "
            f"({', '.join(names)}) saves a tensor, so the first backward has nothing to free.")


def exercise_1(answer) -> Verdict:
    """Which expressions survive a second backward() without retain_graph=True?"""
    if answer is None:
        return unanswered("set `answer` to the set of labels that survive, e.g. {'A', 'B'}")
    chosen, hint = read_labels(answer, EXPRESSIONS)
    if hint:
        return not_yet(hint)
    survivors = {label for label in EXPRESSIONS if _survives_second_backward(label)}
    wrongly_in, missing = sorted(chosen - survivors), sorted(survivors - chosen)
    if wrongly_in:
        return not_yet(_why_it_fails(wrongly_in[0]))
    if missing:
        return not_yet(_why_it_survives(missing[0]))
    return correct(f"{', '.join(sorted(survivors))} save no tensors, so a second backward "
                   "works; each of the others saves one, which the first backward frees.")


# Exercise 2 ---------------------------------------------------------------
# The set-up and the calls, as the notebook shows them (a test compares the two); `a` is
# a 1x4 leaf. The checker runs them in one namespace, which plays the reader's: every
# name assigned here stays held until the weak references are read.
SETUP_2 = """\
h = a + 1
m = (h * 5).sin()
p = (h * 3).sin().sum()
q = h.cos().sum()
r = m.sum()
s = (m + 1).sum()
t = (h / 4).cos().sum()"""

CALLS_2 = """\
p.backward()
q.backward()
r.backward(retain_graph=True)
s.backward()"""


def _node_under(total):
    """The node that feeds `x.sum()`'s SumBackward0: x's own grad_fn."""
    return total.grad_fn.next_functions[0][0]


# Where each labelled saved tensor lives: the node (found from the names above) whose
# `_saved_self` it is. The notebook describes each one in these words.
SAVED_2 = {
    "A": ("the `h * 3` saved by p's SinBackward0", lambda ns: _node_under(ns["p"])),
    "B": ("the `h` saved by q's CosBackward0", lambda ns: _node_under(ns["q"])),
    "C": ("the `h * 5` saved by m's SinBackward0", lambda ns: ns["m"].grad_fn),
    "D": ("the `h / 4` saved by t's CosBackward0", lambda ns: _node_under(ns["t"])),
}

# Why a label is alive or gone, for the hint to a reader who got that label wrong.
# Each speaks of its own label only; tests check that the state it explains is the one
# PyTorch produces.
GONE_BECAUSE = {
    "A": "p.backward() ran through p's SinBackward0 without retain_graph, so the node "
         "dropped `h * 3`, and nothing else held that tensor.",
    "C": "r.backward(retain_graph=True) kept it, but s is computed from m too: s.backward() "
         "runs through m's SinBackward0 without retain_graph, and nothing else held `h * 5`.",
}
ALIVE_BECAUSE = {
    "B": "q.backward() made CosBackward0 drop its reference, but that tensor is `h`, "
         "a name you still hold.",
    "D": "no backward ran through t's CosBackward0 (nobody called t.backward()), so it "
         "still holds `h / 4`.",
}


def _alive_after_calls() -> set:
    """Run SETUP_2 and CALLS_2; the labels whose saved tensor is still alive afterwards."""
    namespace = {"a": fresh_leaf(seed=4)}
    exec(SETUP_2, {}, namespace)  # fixed strings above, never the reader's
    saved = {label: weakref.ref(where(namespace)._saved_self)
             for label, (_, where) in SAVED_2.items()}
    exec(CALLS_2, {}, namespace)
    return {label for label, ref in saved.items() if ref() is not None}


def exercise_2(answer) -> Verdict:
    """Which of the saved tensors A-D are still alive after the four calls?"""
    if answer is None:
        return unanswered("set `answer` to the set of labels still alive, e.g. {'A', 'B'} "
                          "(or set() for none)")
    chosen, hint = read_labels(answer, SAVED_2)
    if hint:
        return not_yet(hint)
    alive = _alive_after_calls()
    wrongly_in, missing = sorted(chosen - alive), sorted(alive - chosen)
    if wrongly_in:
        label = wrongly_in[0]
        return not_yet(f"{label} is gone: {GONE_BECAUSE.get(label, 'its node dropped it.')}")
    if missing:
        label = missing[0]
        return not_yet(f"{label} is still alive: "
                       f"{ALIVE_BECAUSE.get(label, 'something still holds it.')}")
    return correct(f"alive: {', '.join(sorted(alive))}. A node's backward drops its saved "
                   "tensors; a tensor goes only when nothing else (your names, a node not yet "
                   "run, a retained graph) still holds it.")


# Exercise 3 ---------------------------------------------------------------
# torch.autograd.backward's own parameters, read before anyone wraps it.
BACKWARD_SIGNATURE = inspect.signature(torch.autograd.backward)


@contextmanager
def _backward_records(a):
    """Record every torch.autograd.backward call made inside: its roots, and `a.grad`
    just before and just after it (what backward itself wrote, whatever came later)."""
    records = []
    inner = torch.autograd.backward  # watch_backward_calls' spy, when inside it

    def recorded(*args, **kwargs):
        roots = BACKWARD_SIGNATURE.bind(*args, **kwargs).arguments.get("tensors")
        roots = [roots] if isinstance(roots, torch.Tensor) else list(roots or [])
        before = None if a.grad is None else a.grad.clone()
        result = inner(*args, **kwargs)
        after = None if a.grad is None else a.grad.clone()
        records.append({"roots": roots, "before": before, "after": after})
        return result

    torch.autograd.backward = recorded
    try:
        yield records
    finally:  # even when the reader's code raised
        torch.autograd.backward = inner


def _what_is_wrong_with_the_roots(roots, a):
    """None if the graph of `roots` holds a mean and a sum of ONE node that leads to `a`
    (one c, built once); otherwise a hint saying what the graph holds instead."""
    below = {"Mean": [], "Sum": []}  # the node under each mean / sum in the graph
    for node in _nodes(*roots):
        for reduction, inputs in below.items():
            if node.name().startswith(reduction + "Backward") and node.next_functions:
                inputs.append(node.next_functions[0][0])
    if not below["Mean"] and not below["Sum"]:
        return ("the backward must start from c.mean() and c.sum() themselves, not from a "
                "loss or a gradient worked out by hand.")
    if not below["Mean"] or not below["Sum"]:
        has, lacks = ("sum", "mean") if below["Sum"] else ("mean", "sum")
        return (f"the backward starts from a {has} but from no c.{lacks}(): the one call must "
                "start from both, not from one with a weight worked out by hand.")
    shared = [n for n in below["Mean"] if n is not None and any(n is m for m in below["Sum"])]
    if not any(getattr(leaf, "variable", None) is a for leaf in _nodes_from(*shared)):
        return ("the mean and the sum are taken of two different c's: build c once, so that "
                "one graph holds both outputs.")
    return None


def exercise_3(answer) -> Verdict:
    """one_pass(a): a.grad = the gradients of c.mean() and c.sum() added, c built once
    from a, ONE backward call, no retain_graph, nothing written into a.grad by hand."""
    if answer is None:
        return unanswered("set `answer` to your function, e.g. `answer = one_pass`")
    if not callable(answer):
        return not_yet(f"expected a function taking `a`, like `def one_pass(a): ...`; "
                       f"got {kind(answer)}")
    a = fresh_leaf(seed=3)
    with watch_backward_calls() as calls, _backward_records(a) as records:
        try:
            answer(a)
        except Exception as error:  # the reader's code: report it, don't crash the cell
            if which_error(error) == FREED_BUFFER:
                return not_yet("its second backward still runs through the nodes whose saved "
                               "tensors the first one freed: one backward must do both.")
            return not_yet(raised(error))
    if any(call.retain_graph for call in calls):
        return not_yet("it uses retain_graph=True (or create_graph=True): do it without "
                       "keeping the graph.")
    if not calls:
        return not_yet("no backward call was seen"
                       + ("; a.grad was written by hand: let backward() compute it."
                          if a.grad is not None else ": call backward on what you built."))
    if len(calls) > 1:
        return not_yet(f"it runs {len(calls)} backward passes: the exercise asks for one "
                       "call that gives both gradients, so that the shared nodes run once.")
    if not records:
        return not_yet("it calls torch.autograd.grad, which leaves a.grad alone; let "
                       "backward() write a.grad.")
    record = records[0]
    if record["before"] is not None:
        return not_yet("a.grad already held something when backward ran: start from "
                       "a.grad = None and let the one backward write all of it.")
    if record["after"] is None:
        return not_yet("the backward call did not reach `a`: build c from the `a` your "
                       "function receives.")
    if a.grad is None or not torch.equal(a.grad, record["after"]):
        return not_yet("a.grad was changed after the backward call: let backward() write "
                       "all of it, nothing by hand.")
    wrong_roots = _what_is_wrong_with_the_roots(record["roots"], a)
    if wrong_roots:
        return not_yet(wrong_roots)
    expected = 5 * a.detach()
    if a.grad.shape != a.shape or not torch.allclose(a.grad, expected):
        return not_yet("a.grad is not the gradient of c.mean() plus that of c.sum(): "
                       "build c as (a ** 2) * 2.")
    return correct("a.grad = a + 4a = 5a from one backward through one graph: the shared "
                   "nodes ran once, and nothing was retained.")
