"""Check cells for lesson 01, "backward() and the graph it walks".

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 builds `x.exp()` and reads what its backward node saved; exercise 2 runs the
exercise's code and reads `y.grad_fn.next_functions`; exercise 3 runs the exercise's code
and reads each tensor's `.grad`. The code of exercises 2 and 3 lives here as text, and the
notebook shows that very text (tests/test_exercises_lesson01.py checks it). No checker
touches the global RNG: every leaf is built from fixed values.
"""
import numbers
import warnings

import torch

from .answers import kind, labels
from .seeding import fresh_leaf
from .verdict import Verdict, correct, not_yet, unanswered


def _run(code) -> dict:
    """Run one of the exercises' fixed texts (never the reader's) and return its names."""
    namespace = {"torch": torch}
    exec(code, namespace)
    return namespace


# Exercise 1: which tensor does the backward node of `a.exp()` save?

def _saved_by_exp() -> list:
    """The names of the tensors that ExpBackward0 saves, read from a real node."""
    node = fresh_leaf([[1.0, 2.0, 3.0, 4.0]]).exp().grad_fn
    return sorted(attr[len("_raw_saved_"):] for attr in dir(node)
                  if attr.startswith("_raw_saved_"))


def exercise_1(answer) -> Verdict:
    """y = a.exp(): does y.grad_fn save 'self' (the input a) or 'result' (the output y)?"""
    if answer is None:
        return unanswered("set `answer` to 'self' or 'result', then run this cell again")
    if isinstance(answer, torch.Tensor):
        return not_yet("give the name of the saved tensor as a string, 'self' or 'result', "
                       "not a tensor")
    if not isinstance(answer, str):
        return not_yet(f"expected a string, 'self' or 'result'; got {kind(answer)}")
    name = answer.strip().strip("'\"").lower()
    for prefix in ("_saved_", "_raw_saved_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    saved = _saved_by_exp()  # ['result']: read from a real node, not assumed
    if name in saved and name == "result":
        return correct("ExpBackward0 saves `result`, the output y: the derivative of "
                       "exp(a) is exp(a) itself, so y is all its formula needs and the "
                       "node does not save a.")
    if name in saved:
        return correct(f"ExpBackward0 saves `{name}` on this version of PyTorch.")
    if name == "self":
        return not_yet("it could keep a and compute exp(a) again during backward, but the "
                       "derivative of exp(a) is exp(a): which tensor already holds that?")
    if name == "other":
        return not_yet("`other` is the second input of a two-input op such as b * 2; "
                       "exp has a single input. Choose between 'self' and 'result'.")
    return not_yet(f"{answer.strip()!r} is not one of the choices: answer 'self' (the "
                   "input a) or 'result' (the output y)")


# Exercise 2: y.grad_fn.next_functions for a product of two chunks, as names.

EXERCISE_2_CODE = """\
x = torch.arange(6.0, requires_grad=True)
first, middle, last = x.chunk(3)
y = last * first"""

PAIRS_EXAMPLE = "[('SomeBackward0', 0), (None, 0)]"


def _named_pairs(node) -> list:
    """node.next_functions with each node given by name, as the lesson's `names` shows."""
    return [(fn.name() if fn is not None else None, index) for fn, index in node.next_functions]


def _exercise_2_expected() -> list:
    return _named_pairs(_run(EXERCISE_2_CODE)["y"].grad_fn)


def _read_pairs(answer):
    """(pairs, None) with each pair as (lower-case name or None, int); or (None, hint)."""
    shape_hint = (f"expected a list of (node name, number) pairs such as {PAIRS_EXAMPLE}; "
                  f"got {kind(answer)}")
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (list, tuple)):
        return None, shape_hint
    pairs = []
    for pair in answer:
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (list, tuple)) \
                or len(pair) != 2:
            return None, (f"each pair has two parts, (node name, number), as in "
                          f"{PAIRS_EXAMPLE}; one of yours is {kind(pair)}")
        name, index = pair
        if isinstance(name, torch.autograd.graph.Node):
            return None, ("give each node by its name, a string such as 'MulBackward0' "
                          "(as `names` prints it), not the node object")
        if name is not None and not isinstance(name, str):
            return None, f"a node's name is a string (or None); one of yours is {kind(name)}"
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            return None, (f"the second part of a pair is a whole number such as 0; one of "
                          f"yours is {kind(index)}")
        pairs.append((name.strip().lower() if name is not None else None, int(index)))
    return pairs, None


def exercise_2(answer) -> Verdict:
    """After EXERCISE_2_CODE, what does names(y.grad_fn) list?"""
    if answer is None:
        return unanswered(f"set `answer` to the list of pairs that names(y.grad_fn) shows, "
                          f"e.g. {PAIRS_EXAMPLE}, then run this cell again")
    given, hint = _read_pairs(answer)
    if hint:
        return not_yet(hint)
    expected = _exercise_2_expected()  # [('SplitBackward0', 2), ('SplitBackward0', 0)]
    wanted = [(name.lower(), index) for name, index in expected]
    if len(given) != len(wanted):
        return not_yet(f"`last * first` has {len(wanted)} inputs, so next_functions holds "
                       f"one pair per input, {len(wanted)} pairs; yours has {len(given)}")
    if given == wanted:
        (node, i_last), (_, i_first) = expected
        return correct(f"MulBackward0's inputs in order: last, output {i_last} of the one "
                       f"{node} that chunk made, then first, its output {i_first}.")
    names_given = [name for name, _ in given]
    if names_given != [name for name, _ in wanted]:
        if None in names_given:
            return not_yet("None marks an input that needs no gradient; first and last "
                           "were both computed from x, which requires grad")
        if "accumulategrad" in names_given or "torch::autograd::accumulategrad" in names_given:
            return not_yet("first and last are not leaves, chunk computed them from x: "
                           "their pairs name the node chunk made, not x's AccumulateGrad")
        if "mulbackward0" in names_given:
            return not_yet("y.grad_fn is MulBackward0 itself; its pairs name the nodes "
                           "that made its inputs, last and first")
        return not_yet("which node made last and first? chunk's node is the one section 3 "
                       "found behind halves[1]; give its name as `names` prints it")
    indices_given = [index for _, index in given]
    indices_wanted = [index for _, index in wanted]
    if indices_given == indices_wanted[::-1]:
        return not_yet("the pairs follow the order of the operation's inputs: in "
                       "`last * first`, which input comes first?")
    if all(index == 0 for index in indices_given):
        return not_yet("the number is not an input number: it says which output of that "
                       "node each input is. Which of chunk's outputs is last?")
    if indices_given == [index + 1 for index in indices_wanted]:
        return not_yet("a node's outputs are numbered from 0, like a list's items")
    return not_yet("the number says which output of the split node feeds each input, "
                   "counted from 0 in the order chunk returns them")


# Exercise 3: after EXERCISE_3_CODE, which tensors have a .grad?

EXERCISE_3_CODE = """\
w = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
u = torch.tensor([2.0, 2.0, 2.0], requires_grad=True)
x = torch.arange(3.0) * 2
h = w * x
h.retain_grad()
g = h.exp()
loss = g.sum() + 0 * u.sum()
loss.backward()
g.retain_grad()"""

TENSOR_NAMES = ("w", "u", "x", "h", "g", "loss")

# Why a name does not belong in the answer, or why it does: said as a question about the
# code, so that a hint never settles any other name.
WHY_NO_GRAD = {
    "x": "x was computed (arange, then * 2), yet it is a leaf: does it require grad?",
    "g": "g.retain_grad() came after loss.backward(): can it keep a gradient that was "
         "already passed on and dropped?",
    "loss": "loss is not a leaf: what would it take for a non-leaf to keep its .grad?",
}
WHY_GRAD = {
    "w": "w is a leaf that requires grad: was loss computed from it?",
    "u": "0 * u.sum() is still an operation autograd records: does backward reach u, and "
         "is a gradient of zeros still a .grad?",
    "h": "h is not a leaf, but look at what the code asks of h before loss.backward()",
}


def _with_grad() -> set:
    """The names in EXERCISE_3_CODE whose .grad is not None once it has run."""
    tensors = _run(EXERCISE_3_CODE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading a non-leaf's .grad warns that it is None
        return {name for name in TENSOR_NAMES if tensors[name].grad is not None}


def exercise_3(answer) -> Verdict:
    """After EXERCISE_3_CODE, which of w, u, x, h, g, loss have a .grad that is not None?"""
    if answer is None:
        return unanswered("set `answer` to the set of names whose .grad is not None, "
                          "e.g. {'w', 'x'}, then run this cell again")
    if isinstance(answer, (set, frozenset, list, tuple)) \
            and any(isinstance(item, torch.Tensor) for item in answer):
        return not_yet("give the tensors' names as strings, {'w', 'x'}, not the tensors")
    chosen = labels(answer)
    if chosen is None:
        return not_yet(f"expected a set of names such as {{'w', 'x'}}; got {kind(answer)}")
    chosen = {name.lower() for name in chosen}
    unknown = sorted(chosen - set(TENSOR_NAMES))
    if unknown:
        return not_yet(f"unknown name(s) {', '.join(unknown)}: the tensors are "
                       f"{', '.join(TENSOR_NAMES)}")
    truth = _with_grad()  # {'w', 'u', 'h'}: read from the tensors after running the code
    for name in TENSOR_NAMES:  # one hint at a time, in the code's order
        if name in chosen and name not in truth:
            return not_yet(WHY_NO_GRAD.get(name, f"look again at {name}"))
    for name in TENSOR_NAMES:
        if name in truth and name not in chosen:
            return not_yet(WHY_GRAD.get(name, f"look again at {name}"))
    return correct("w and u are leaves that require grad and loss was computed from both "
                   "(u's .grad holds zeros); h kept its gradient because retain_grad() "
                   "came before backward; x requires no grad, and loss and g are "
                   "non-leaves that kept nothing (g asked too late).")
