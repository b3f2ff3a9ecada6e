"""Check cells for lesson 02, "retain_graph: what backward() frees".

exercise_1: which expressions survive a second backward() without retain_graph;
exercise_2: which saved tensors are still alive after an order of backward calls;
exercise_3: a function that calls backward() once on each of three losses that share
            part of a graph, in an order it chooses, with as few retain_graph=True as
            possible.

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 backpropagates each expression twice, exercise 2 runs the calls and asks weak
references what is still alive, exercise 3 tries every order and every choice of flags
for the fewest that work, then runs the reader's function on a fresh graph and watches
what it asks autograd to do (which loss each call starts from, with what weight and
flags, how often each node runs, `w.grad`).
The hints of exercises 1 and 2 redo the reasoning, and every wrong answer gets the same
one: trying one label at a time tells nothing about any label.
"""
import builtins
import inspect
import itertools
import weakref
from contextlib import contextmanager
from functools import lru_cache

import torch

from .answers import kind, raised, read_labels
from .errors import FREED_BUFFER, NO_ERROR, error_raised_by, which_error
from .language import language, say
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


def _label_range(choices) -> str:
    """'A'–'F': the labels of `choices`, first to last, as the strings they are."""
    first, *_, last = choices
    return f"'{first}'–'{last}'"


def _kind(value) -> str:
    """kind(value), with the module named when the type borrows a builtin's name: 'a
    numpy.bool', not 'a bool', for numpy's True_."""
    name, module = type(value).__name__, type(value).__module__
    if module == "builtins" or not hasattr(builtins, name):
        return kind(value)  # kind() speaks the chosen language
    name = f"{module}.{name}"
    return say(("an " if name[0].lower() in "aeiou" else "a ") + name, f"{name} 객체")


def _element(value) -> str:
    """One element of the reader's answer, for a one-line hint: `1 (an int)`, or only its
    kind when its text could be long or hold an address."""
    if value is None or isinstance(value, (bool, int, float)):
        # kind() speaks the chosen language; Korean puts no space before a parenthesis
        space = "" if language() == "ko" else " "
        return f"{value!r}{space}({kind(value)})"
    return _kind(value)


def _read_labels(answer, choices):
    """read_labels, with a hint that says what is wrong with an answer that is not a set of
    label strings, and shows no example set (an example could be part of the answer)."""
    collection = isinstance(answer, (set, frozenset, list, tuple))
    strange = [value for value in answer if not isinstance(value, str)] if collection else []
    labels = _label_range(choices)
    if strange:
        return None, say(f"got {kind(answer)} containing {_element(strange[0])}; the labels "
                         f"are strings {labels}",
                         f"{kind(answer)}에 문자열이 아닌 항목이 들어 있습니다. 그중 하나는 "
                         f"{_element(strange[0])}입니다. 레이블은 문자열 {labels}입니다")
    if not collection:
        return None, say(f"expected a set of labels, strings {labels}; got {kind(answer)}",
                         f"문자열 {labels} 레이블의 집합(set)이 와야 하는데 {kind(answer)}가 "
                         "왔습니다")
    return read_labels(answer, choices)


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


def _hint_1() -> str:
    """The reasoning to redo, the same for every wrong answer: no label's verdict."""
    return say("not the set that survives. For each expression, ask whether some node's gradient "
               "formula needs a value that it saves as a tensor: the first backward frees it, "
               "even when the value is the leaf `a` you still hold (section 2) or a plain number "
               "such as the 2 in `b * 2`, which MulBackward0 saves as a tensor (section 1). A "
               "node whose gradient needs no value saves nothing, as for a.sum() and a + 1 "
               "(section 4). Decide again and run this check again; saved_tensors(expression) "
               "shows why afterwards.",
               "살아남는 식의 집합이 아닙니다. 식마다, 어떤 노드의 변화도 공식에 필요한 값이 "
               "텐서로 저장되는지 따져 보세요. 그 텐서는 첫 번째 역전파가 해제합니다. 그 값이 "
               "여러분이 아직 가지고 있는 잎 텐서 `a`여도(2절), `b * 2`의 2 같은 평범한 수여도 "
               "마찬가지입니다. MulBackward0은 이 2를 텐서로 저장합니다(1절). 변화도에 아무 값도 "
               "필요 없는 노드는 아무것도 저장하지 않습니다. 4절의 a.sum()과 a + 1이 그렇습니다. "
               "다시 판단한 뒤 이 확인 셀을 실행하세요. 그다음에 saved_tensors(식)으로 이유를 "
               "확인할 수 있습니다.")


def exercise_1(answer) -> Verdict:
    """Which expressions survive a second backward() without retain_graph=True?"""
    if answer is None:
        return unanswered(say("set `answer` to the set of labels that survive, strings "
                              f"{_label_range(EXPRESSIONS)}",
                              "`answer`에 살아남는 식의 레이블 집합을 넣고 이 셀을 다시 "
                              f"실행하세요. 레이블은 문자열 {_label_range(EXPRESSIONS)}입니다"))
    chosen, hint = _read_labels(answer, EXPRESSIONS)
    if hint:
        return not_yet(hint)
    survivors = {label for label in EXPRESSIONS if _survives_second_backward(label)}
    if chosen != survivors:
        return not_yet(_hint_1())
    return correct(say(f"{', '.join(sorted(survivors))} save no tensors, so a second backward "
                       "works; each of the others saves one, which the first backward frees.",
                       f"{', '.join(sorted(survivors))}는 저장하는 텐서가 없으므로 두 번째 역전파도 "
                       "오류 없이 실행됩니다. 나머지는 텐서를 하나씩 저장하고, 첫 번째 역전파가 "
                       "그 텐서를 해제합니다."))


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
# `_saved_self` it is. The notebook describes each one in these words (each a function,
# so that it speaks the language chosen when it is called).
SAVED_2 = {
    "A": (lambda: say("the `h * 3` saved by p's SinBackward0",
                      "p의 SinBackward0 노드가 저장한 `h * 3`"),
          lambda ns: _node_under(ns["p"])),
    "B": (lambda: say("the `h` saved by q's CosBackward0",
                      "q의 CosBackward0 노드가 저장한 `h`"),
          lambda ns: _node_under(ns["q"])),
    "C": (lambda: say("the `h * 5` saved by m's SinBackward0",
                      "m의 SinBackward0 노드가 저장한 `h * 5`"),
          lambda ns: ns["m"].grad_fn),
    "D": (lambda: say("the `h / 4` saved by t's CosBackward0",
                      "t의 CosBackward0 노드가 저장한 `h / 4`"),
          lambda ns: _node_under(ns["t"])),
}

def _hint_2() -> str:
    """The reasoning to redo, the same for every wrong answer: no label's verdict."""
    return say("not the set still alive. A saved tensor lives while anything holds it: a name "
               "you hold, or a node that no backward without retain_graph has run through yet. "
               "For each of the four calls, follow every node it runs through, not only the nodes "
               "of the output's own line: an output computed from another one runs through that "
               "one's nodes too.",
               "아직 살아 있는 텐서의 집합이 아닙니다. 저장된 텐서는 무언가가 참조하는 동안 살아 "
               "있습니다. 여러분이 가진 이름이나, retain_graph 없는 역전파가 아직 지나가지 않은 "
               "노드가 그렇습니다. 네 호출 각각에 대해, 그 호출이 지나가는 노드를 모두 따라가 보세요. 그 "
               "출력을 만든 줄의 노드만 보면 안 됩니다. 다른 출력으로 계산한 출력이라면, 역전파는 "
               "그 다른 출력의 노드도 지나갑니다.")


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
        return unanswered(say("set `answer` to the set of labels still alive, strings "
                              f"{_label_range(SAVED_2)} (or set() for none)",
                              "`answer`에 아직 살아 있는 텐서의 레이블 집합을 넣고 이 셀을 다시 "
                              f"실행하세요. 레이블은 문자열 {_label_range(SAVED_2)}이고, 하나도 "
                              "없으면 set()입니다"))
    chosen, hint = _read_labels(answer, SAVED_2)
    if hint:
        return not_yet(hint)
    alive = _alive_after_calls()
    if chosen != alive:
        return not_yet(_hint_2())
    return correct(say(f"alive: {', '.join(sorted(alive))}. A node's backward drops its references "
                       "to its saved tensors; a tensor goes only when nothing else (your names, a node not yet "
                       "run, a retained graph) still holds it.",
                       f"살아 있는 텐서: {', '.join(sorted(alive))}. 역전파가 노드를 지나가면 "
                       "노드는 저장된 텐서에 대한 참조를 버립니다. 하지만 텐서가 메모리에서 사라지는 것은 "
                       "여러분의 이름, 아직 실행되지 않은 노드, 유지된 그래프 가운데 어느 것도 "
                       "그 텐서를 참조하지 않을 때뿐입니다."))


# Exercise 3 ---------------------------------------------------------------
# The forward pass, as the notebook runs it (a test compares the two); `w` is a 1x4 leaf.
FORWARD_3 = """\
s = w + 1
p = s.sin()
q = s.exp()
loss1 = p.sum()
loss2 = (p + q).sum()
loss3 = q.sum()"""
LOSSES_3 = ("loss1", "loss2", "loss3")
# torch.autograd.backward's own parameters, read before anyone wraps it.
BACKWARD_SIGNATURE = inspect.signature(torch.autograd.backward)


def _forward_3(seed=5):
    """A fresh leaf `w` and the three losses built from it by FORWARD_3."""
    namespace = {"w": fresh_leaf(seed=seed)}
    exec(FORWARD_3, {}, namespace)  # a fixed string above, never the reader's
    return namespace["w"], [namespace[name] for name in LOSSES_3]


@lru_cache(maxsize=None)
def fewest_flags() -> int:
    """The fewest retain_graph=True with which one backward() per loss runs, over every
    order of the three calls and every choice of flags, found by running them."""
    fewest = None
    for order in itertools.permutations(range(len(LOSSES_3))):
        for flags in itertools.product((False, True), repeat=len(LOSSES_3)):
            _, losses = _forward_3()

            def run():
                for index, keep in zip(order, flags):
                    losses[index].backward(retain_graph=keep)
            if error_raised_by(run) == NO_ERROR and (fewest is None or sum(flags) < fewest):
                fewest = sum(flags)
    return fewest


def _reference_gradient():
    w, losses = _forward_3()
    sum(losses).backward()
    return w.grad


@contextmanager
def _watched_graph(w, losses):
    """Watch the reader's backward calls on the graph of `losses`: for each call, its
    flags, the weight each loss it started from received, whether it failed, and `w.grad` before and after it; and how many times
    each node of the graph ran, over all calls."""
    calls, runs, handles = [], {}, []
    current = []  # the call running now, for the hooks

    for node in _nodes(*losses):
        runs[node] = 0
        handles.append(node.register_hook(
            lambda grad_inputs, grad_outputs, node=node: runs.__setitem__(node, runs[node] + 1)))
    def weight_of(index):
        def note(grad_outputs):  # returns None: the gradient goes on unchanged
            if current:
                gradient = grad_outputs[0]
                current[-1]["weights"].append(
                    (index, None if gradient is None else gradient.detach().clone()))
        return note

    for index, loss in enumerate(losses):
        handles.append(loss.grad_fn.register_prehook(weight_of(index)))

    inner = torch.autograd.backward  # watch_backward_calls' spy, when inside it
    engine = torch.autograd._engine_run_backward  # what every backward pass goes through

    def record(run, retain_graph, create_graph):
        """Run one backward call, noting its flags as given (retain_graph None: its default)."""
        # The engine reads a flag as an integer, not through bool(): a value that is not
        # True, False or None could keep the graph while bool() says it does not.
        odd = [(name, value) for name, value in (("retain_graph", retain_graph),
                                                 ("create_graph", create_graph))
               if value is not None and not isinstance(value, bool)]
        call = {"retain": bool(retain_graph or create_graph), "create": bool(create_graph),
                "odd": odd, "weights": [],
                "failed": False, "before": None if w.grad is None else w.grad.clone()}
        calls.append(call)
        current.append(call)
        try:
            return run()
        except Exception:
            call["failed"] = True  # even if the reader's code swallows the error
            raise
        finally:
            current.pop()
            call["after"] = None if w.grad is None else w.grad.clone()

    def recorded(*args, **kwargs):
        arguments = BACKWARD_SIGNATURE.bind(*args, **kwargs).arguments
        return record(lambda: inner(*args, **kwargs),
                      arguments.get("retain_graph"), arguments.get("create_graph"))

    def engine_recorded(outputs, gradients, retain_graph, create_graph, *args, **kwargs):
        """A backward pass that did not come through torch.autograd.backward's name: the
        reader called the function under another (`from torch.autograd import backward`)."""
        def run():
            return engine(outputs, gradients, retain_graph, create_graph, *args, **kwargs)
        if current or not kwargs.get("accumulate_grad"):  # seen already, or autograd.grad
            return run()
        return record(run, retain_graph, create_graph)

    torch.autograd.backward = recorded
    torch.autograd._engine_run_backward = engine_recorded
    try:
        yield calls, runs
    finally:  # even when the reader's code raised
        torch.autograd.backward = inner
        torch.autograd._engine_run_backward = engine
        for handle in handles:
            handle.remove()


def _expected_runs(losses, runs):
    """Each node should run once for each loss whose graph reaches it."""
    reach = [set(map(id, _nodes(loss))) for loss in losses]
    return {node: sum(id(node) in nodes for nodes in reach) for node in runs}


def _freed_hint() -> str:
    return say("a backward ran through a node whose saved tensors an earlier call had freed. "
               "Before each call, ask which nodes it runs through save a tensor "
               "(saved_tensors(loss1, loss2, loss3) lists them), and whether a later call runs "
               "through one of them too.",
               "앞선 호출이 저장된 텐서를 해제한 노드를 이후의 역전파가 다시 지나갔습니다. "
               "각 호출에 앞서, 그 호출이 지나가는 노드 가운데 텐서를 저장하는 노드가 무엇인지, "
               "그리고 뒤에 오는 호출도 그 노드를 지나가는지 따져 보세요. 텐서를 저장하는 노드는 "
               "saved_tensors(loss1, loss2, loss3)가 보여 줍니다.")


def exercise_3(answer) -> Verdict:
    """backwards(loss1, loss2, loss3): one backward() on each loss, in the order it
    chooses, all three run, w.grad their gradients added, with the fewest
    retain_graph=True that work (found by running every order and choice of flags)."""
    if answer is None:
        return unanswered(say("set `answer` to your function, e.g. `answer = backwards`",
                              "`answer`에 작성한 함수를 넣고 이 셀을 다시 실행하세요. 예: "
                              "`answer = backwards`"))
    if not callable(answer):
        return not_yet(say(f"expected a function taking the three losses, like "
                           f"`def backwards(loss1, loss2, loss3): ...`; got {kind(answer)}",
                           f"`def backwards(loss1, loss2, loss3): ...`처럼 세 손실을 받는 함수가 "
                           f"와야 하는데 {kind(answer)}가 왔습니다"))
    w, losses = _forward_3()
    with watch_backward_calls() as seen, _watched_graph(w, losses) as (calls, runs):
        try:
            answer(*losses)
        except Exception as error:  # the reader's code: report it, don't crash the cell
            if which_error(error) == FREED_BUFFER:
                return not_yet(_freed_hint())
            return not_yet(raised(error))
    odd = next((flag for call in calls for flag in call["odd"]), None)
    if odd:
        name, value = odd
        return not_yet(say(f"{name}= was given {_element(value)}: pass True or False (or leave "
                           "it out), so that the count of retain_graph=True is what autograd did.",
                           f"{name}=에 넘긴 값은 {_element(value)}입니다. True나 False를 넘기거나 "
                           "인자를 생략하세요. 그래야 retain_graph=True의 개수가 autograd가 "
                           "실제로 한 일과 맞습니다."))
    if any(call["failed"] for call in calls):
        return not_yet(_freed_hint())
    if len(seen) > len(calls):
        return not_yet(say("it calls torch.autograd.grad, which leaves w.grad alone: call "
                           "backward() on each loss.",
                           "torch.autograd.grad를 호출했습니다. 이 함수는 w.grad를 건드리지 "
                           "않습니다. 손실마다 backward()를 호출하세요."))
    if not calls:
        return not_yet(say("no backward call was seen: call backward() once on each loss.",
                           "backward() 호출이 보이지 않습니다. 손실마다 backward()를 한 번씩 "
                           "호출하세요."))
    started = [[index for index, _ in call["weights"]] for call in calls]
    if any(len(indexes) > 1 for indexes in started):
        return not_yet(say("one call starts from several losses. One (loss1 + loss2 + loss3)"
                           ".backward() is the way when only the total counts, and needs no "
                           "retain_graph at all; here each loss gets a backward() call of its own.",
                           "호출 하나가 여러 손실에서 시작합니다. 합계만 필요하다면 (loss1 + "
                           "loss2 + loss3).backward() 한 번으로 충분하고 retain_graph도 필요 "
                           "없습니다. 하지만 여기서는 손실마다 backward()를 따로 호출합니다."))
    if sorted(index for indexes in started for index in indexes) != list(range(len(losses))) \
            or any(not indexes for indexes in started):
        return not_yet(say("call backward() exactly once on each of the three losses you "
                           "receive, each call on one loss.",
                           "받은 세 손실 각각에 backward()를 정확히 한 번씩 호출하세요. 한 "
                           "호출에는 손실 하나만 씁니다."))
    # A gradient= of ones is the default, said aloud; any other weight changes w.grad's shares.
    if not all(weight is not None and bool((weight == 1).all())
               for call in calls for _, weight in call["weights"]):
        return not_yet(say("a call gives its loss a weight (a factor or a gradient= argument): "
                           "call backward() on each loss itself.",
                           "어떤 호출이 손실에 계수를 곱하거나 gradient= 인자를 줍니다. 손실 "
                           "자체에서 backward()를 호출하세요."))
    if any(call["create"] for call in calls):
        return not_yet(say("it uses create_graph=True, which keeps the graph too and builds "
                           "another for the gradients: use retain_graph=True where keeping is "
                           "needed.",
                           "create_graph=True를 썼습니다. 이 인자도 그래프를 유지하지만, 변화도를 "
                           "계산하는 그래프도 하나 더 만듭니다. 유지가 필요한 곳에는 "
                           "retain_graph=True를 쓰세요."))
    if calls[0]["before"] is not None:
        return not_yet(say("w.grad already held something when the first backward ran: leave "
                           "it to the three calls.",
                           "첫 번째 역전파가 실행될 때 w.grad에 이미 값이 들어 있었습니다. "
                           "w.grad는 세 호출에 맡기세요."))
    if w.grad is None or calls[-1]["after"] is None or not torch.equal(w.grad, calls[-1]["after"]):
        return not_yet(say("w.grad was changed after the backward calls: let them write all "
                           "of it.",
                           "backward() 호출이 끝난 뒤에 w.grad가 바뀌었습니다. w.grad는 처음부터 "
                           "끝까지 세 호출이 쓰게 두세요."))
    if runs != _expected_runs(losses, runs) or not torch.allclose(w.grad, _reference_gradient()):
        return not_yet(say("the graph's nodes did not each run once per loss through them: "
                           "run backward() on the losses you receive, once each.",
                           "노드마다 그 노드를 지나는 손실의 수만큼 실행되어야 하는데 그렇지 "
                           "않았습니다. 받은 손실마다 backward()를 한 번씩 실행하세요."))
    flags = sum(call["retain"] for call in calls)
    if flags > fewest_flags():
        return not_yet(say(f"all three ran, with {flags} retain_graph=True; fewer will do. A "
                           "call needs it only if a later call runs through a node whose saved "
                           "tensors it would free, and the order is yours: find the nodes that "
                           "save a tensor (saved_tensors(loss1, loss2, loss3)) and the losses "
                           "that run through each.",
                           f"세 역전파가 모두 실행되었지만 retain_graph=True를 {flags}번 썼습니다. "
                           "더 적어도 됩니다. 호출에 retain_graph=True가 필요한 것은 그 호출이 "
                           "해제할 저장된 텐서를 가진 노드를 뒤에 오는 호출이 지나갈 때뿐이고, 호출 "
                           "순서는 여러분이 정합니다. 텐서를 저장하는 노드(saved_tensors(loss1, "
                           "loss2, loss3))와 각 노드를 지나가는 손실을 찾아보세요."))
    return correct(say(f"all three ran, with {flags} retain_graph=True, the fewest possible: "
                       "only a call that shares a tensor-saving node with a later call needs to "
                       "keep the graph. "
                       "w + 1 saves nothing, so sharing it needs no keeping.",
                       f"retain_graph=True를 {flags}번만 써서 세 역전파가 모두 실행되었고, 이것이 "
                       "가능한 최소입니다. 그래프를 유지해야 하는 호출은 텐서를 저장하는 노드를 뒤에 "
                       "오는 호출과 함께 지나가는 호출뿐입니다. w + 1은 아무것도 저장하지 않으므로 함께 "
                       "지나가도 유지할 필요가 없습니다."))
