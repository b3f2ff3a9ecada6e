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
from .language import say
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
    which = say(f"{label}, `{EXPRESSIONS[label]}`, does not survive",
                f"{label}, `{EXPRESSIONS[label]}` 식은 두 번째 역전파에서 살아남지 못합니다")
    if not rows:
        return say(f"{which}: run it twice and read the error.",
                   f"{which}: 두 번 실행해 보고 오류 메시지를 읽어 보세요.")
    row = rows[0]
    if row.tensor is a:
        return say(f"{which}: {row.node} saves `{row.attribute}`, which is `a` itself. After the "
                   "first backward `a` is still alive (you hold it), but the node has dropped "
                   "its reference to it, and the second backward needs it.",
                   f"{which}: {row.node} 노드가 저장하는 텐서(`{row.attribute}`)는 `a` 자신입니다. "
                   "첫 번째 역전파 뒤에도 `a`는 살아 있지만(여러분이 참조하고 있으니까요), 노드는 "
                   "그 텐서에 대한 참조를 버렸고, 두 번째 역전파에는 그 텐서가 필요합니다.")
    return say(f"{which}: {row.node} saves `{row.attribute}` as a tensor, and the first "
               "backward frees it.",
               f"{which}: {row.node} 노드는 `{row.attribute}` 값을 텐서로 저장하고, 첫 번째 "
               "역전파가 그 텐서를 해제합니다.")


def _why_it_survives(label) -> str:
    _, out = _build(label)
    names = [node.name() for node in _nodes(out) if not hasattr(node, "variable")]
    return say(f"{label}, `{EXPRESSIONS[label]}`, survives too: none of its nodes "
               f"({', '.join(names)}) saves a tensor, so the first backward has nothing to free.",
               f"{label}, `{EXPRESSIONS[label]}` 식도 살아남습니다: 이 식의 노드"
               f"({', '.join(names)}) 중 텐서를 저장하는 노드가 없으므로, 첫 번째 역전파가 "
               "해제할 것이 없습니다.")


def exercise_1(answer) -> Verdict:
    """Which expressions survive a second backward() without retain_graph=True?"""
    if answer is None:
        return unanswered(say("set `answer` to the set of labels that survive, e.g. {'A', 'B'}",
                              "`answer`에 살아남는 식의 레이블 집합을 넣으세요. 예: {'A', 'B'}"))
    chosen, hint = read_labels(answer, EXPRESSIONS)
    if hint:
        return not_yet(hint)
    survivors = {label for label in EXPRESSIONS if _survives_second_backward(label)}
    wrongly_in, missing = sorted(chosen - survivors), sorted(survivors - chosen)
    if wrongly_in:
        return not_yet(_why_it_fails(wrongly_in[0]))
    if missing:
        return not_yet(_why_it_survives(missing[0]))
    return correct(say(f"{', '.join(sorted(survivors))} save no tensors, so a second backward "
                       "works; each of the others saves one, which the first backward frees.",
                       f"{', '.join(sorted(survivors))}: 저장하는 텐서가 없으므로 두 번째 역전파도 "
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

# Why a label is alive or gone, for the hint to a reader who got that label wrong.
# Each speaks of its own label only; tests check that the state it explains is the one
# PyTorch produces. Functions, like the descriptions above, for the language.
GONE_BECAUSE = {
    "A": lambda: say("p.backward() ran through p's SinBackward0 without retain_graph, so the "
                     "node dropped `h * 3`, and nothing else held that tensor.",
                     "p.backward() 호출이 retain_graph 없이 p의 SinBackward0 노드를 지나갔으므로 "
                     "노드는 `h * 3`을 버렸고, 그 텐서를 참조하는 다른 것은 없었습니다."),
    "C": lambda: say("r.backward(retain_graph=True) kept it, but s is computed from m too: "
                     "s.backward() runs through m's SinBackward0 without retain_graph, and "
                     "nothing else held `h * 5`.",
                     "r.backward(retain_graph=True) 호출은 그 텐서를 유지했지만, s도 m에서 "
                     "계산됩니다: s.backward() 호출이 retain_graph 없이 m의 SinBackward0 노드를 "
                     "지나갔고, `h * 5`를 참조하는 다른 것은 없었습니다."),
}
ALIVE_BECAUSE = {
    "B": lambda: say("q.backward() made CosBackward0 drop its reference, but that tensor is "
                     "`h`, a name you still hold.",
                     "q.backward() 호출로 CosBackward0 노드는 참조를 버렸지만, 그 텐서는 "
                     "여러분이 아직 가지고 있는 이름 `h`입니다."),
    "D": lambda: say("no backward ran through t's CosBackward0 (nobody called t.backward()), "
                     "so it still holds `h / 4`.",
                     "t의 CosBackward0 노드를 지나간 역전파가 없으므로(아무도 t.backward()를 "
                     "호출하지 않았습니다) 노드는 아직 `h / 4`를 참조하고 있습니다."),
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
        return unanswered(say("set `answer` to the set of labels still alive, e.g. {'A', 'B'} "
                              "(or set() for none)",
                              "`answer`에 아직 살아 있는 텐서의 레이블 집합을 넣으세요. "
                              "예: {'A', 'B'} (하나도 없으면 set())"))
    chosen, hint = read_labels(answer, SAVED_2)
    if hint:
        return not_yet(hint)
    alive = _alive_after_calls()
    wrongly_in, missing = sorted(chosen - alive), sorted(alive - chosen)
    if wrongly_in:
        label = wrongly_in[0]
        why = GONE_BECAUSE.get(label, lambda: say("its node dropped it.",
                                                  "노드가 그 텐서를 버렸습니다."))()
        return not_yet(say(f"{label} is gone: {why}", f"{label} 텐서는 사라졌습니다: {why}"))
    if missing:
        label = missing[0]
        why = ALIVE_BECAUSE.get(label, lambda: say("something still holds it.",
                                                   "무언가가 아직 그 텐서를 참조하고 있습니다."))()
        return not_yet(say(f"{label} is still alive: {why}",
                           f"{label} 텐서는 아직 살아 있습니다: {why}"))
    return correct(say(f"alive: {', '.join(sorted(alive))}. A node's backward drops its saved "
                       "tensors; a tensor goes only when nothing else (your names, a node not yet "
                       "run, a retained graph) still holds it.",
                       f"살아 있는 것: {', '.join(sorted(alive))}. 역전파가 노드를 지나가면 노드는 "
                       "저장된 텐서를 버립니다. 텐서는 다른 어떤 것(여러분의 이름, 아직 실행되지 "
                       "않은 노드, 유지된 그래프)도 참조하지 않게 될 때에만 사라집니다."))


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
        return say("the backward must start from c.mean() and c.sum() themselves, not from a "
                   "loss or a gradient worked out by hand.",
                   "역전파는 손으로 구한 손실이나 변화도가 아니라 c.mean()과 c.sum() 자체에서 "
                   "시작해야 합니다.")
    if not below["Mean"] or not below["Sum"]:
        if below["Sum"]:
            has, lacks = say("a sum", "합"), "mean"
        else:
            has, lacks = say("a mean", "평균"), "sum"
        return say(f"the backward starts from {has} but from no c.{lacks}(): the one call must "
                   "start from both, not from one with a weight worked out by hand.",
                   f"역전파가 {has}에서는 시작하지만 c.{lacks}()에서는 시작하지 않습니다: 그 한 번의 "
                   "호출은 손으로 구한 가중치를 곱한 한쪽이 아니라 둘 모두에서 시작해야 합니다.")
    shared = [n for n in below["Mean"] if n is not None and any(n is m for m in below["Sum"])]
    if not any(getattr(leaf, "variable", None) is a for leaf in _nodes_from(*shared)):
        return say("the mean and the sum are taken of two different c's: build c once, so that "
                   "one graph holds both outputs.",
                   "평균과 합을 서로 다른 두 c에서 구했습니다: c를 한 번만 만들어서, 그래프 하나에 "
                   "두 출력이 모두 들어 있게 하세요.")
    return None


def exercise_3(answer) -> Verdict:
    """one_pass(a): a.grad = the gradients of c.mean() and c.sum() added, c built once
    from a, ONE backward call, no retain_graph, nothing written into a.grad by hand."""
    if answer is None:
        return unanswered(say("set `answer` to your function, e.g. `answer = one_pass`",
                              "`answer`에 작성한 함수를 넣으세요. 예: `answer = one_pass`"))
    if not callable(answer):
        return not_yet(say(f"expected a function taking `a`, like `def one_pass(a): ...`; "
                           f"got {kind(answer)}",
                           f"`def one_pass(a): ...`처럼 `a`를 받는 함수가 와야 하는데 "
                           f"{kind(answer)}가 왔습니다"))
    a = fresh_leaf(seed=3)
    with watch_backward_calls() as calls, _backward_records(a) as records:
        try:
            answer(a)
        except Exception as error:  # the reader's code: report it, don't crash the cell
            if which_error(error) == FREED_BUFFER:
                return not_yet(say("its second backward still runs through the nodes whose "
                                   "saved tensors the first one freed: one backward must do both.",
                                   "첫 번째 역전파가 저장된 텐서를 해제한 노드들을 두 번째 역전파가 "
                                   "여전히 지나갑니다: 역전파 한 번으로 둘 다 구해야 합니다."))
            return not_yet(raised(error))
    if any(call.retain_graph for call in calls):
        return not_yet(say("it uses retain_graph=True (or create_graph=True): do it without "
                           "keeping the graph.",
                           "retain_graph=True(또는 create_graph=True)를 쓰고 있습니다: 그래프를 "
                           "유지하지 말고 해 보세요."))
    if not calls:
        return not_yet(say("no backward call was seen", "backward() 호출이 보이지 않습니다")
                       + (say("; a.grad was written by hand: let backward() compute it.",
                              ". a.grad를 손으로 써넣었습니다: backward()가 계산하게 하세요.")
                          if a.grad is not None else
                          say(": call backward on what you built.",
                              ": 만든 것에서 backward()를 호출하세요.")))
    if len(calls) > 1:
        return not_yet(say(f"it runs {len(calls)} backward passes: the exercise asks for one "
                           "call that gives both gradients, so that the shared nodes run once.",
                           f"역전파 단계를 {len(calls)}번 실행합니다: 이 문제는 두 변화도를 모두 "
                           "내는 호출 한 번을 요구합니다. 그래야 공유된 노드가 한 번만 실행됩니다."))
    if not records:
        return not_yet(say("it calls torch.autograd.grad, which leaves a.grad alone; let "
                           "backward() write a.grad.",
                           "torch.autograd.grad를 호출합니다. 이 함수는 a.grad를 건드리지 "
                           "않습니다: backward()가 a.grad에 쓰게 하세요."))
    record = records[0]
    if record["before"] is not None:
        return not_yet(say("a.grad already held something when backward ran: start from "
                           "a.grad = None and let the one backward write all of it.",
                           "backward()가 실행될 때 a.grad에 이미 값이 들어 있었습니다: "
                           "a.grad = None에서 시작해서, 한 번의 역전파가 전부 쓰게 하세요."))
    if record["after"] is None:
        return not_yet(say("the backward call did not reach `a`: build c from the `a` your "
                           "function receives.",
                           "backward() 호출이 `a`까지 닿지 않았습니다: 함수가 받은 `a`로 c를 "
                           "만드세요."))
    if a.grad is None or not torch.equal(a.grad, record["after"]):
        return not_yet(say("a.grad was changed after the backward call: let backward() write "
                           "all of it, nothing by hand.",
                           "backward() 호출 뒤에 a.grad가 바뀌었습니다: 손으로 고치지 말고 "
                           "backward()가 전부 쓰게 하세요."))
    wrong_roots = _what_is_wrong_with_the_roots(record["roots"], a)
    if wrong_roots:
        return not_yet(wrong_roots)
    expected = 5 * a.detach()
    if a.grad.shape != a.shape or not torch.allclose(a.grad, expected):
        return not_yet(say("a.grad is not the gradient of c.mean() plus that of c.sum(): "
                           "build c as (a ** 2) * 2.",
                           "a.grad가 c.mean()의 변화도와 c.sum()의 변화도를 더한 값이 아닙니다: "
                           "c를 (a ** 2) * 2로 만드세요."))
    return correct(say("a.grad = a + 4a = 5a from one backward through one graph: the shared "
                       "nodes ran once, and nothing was retained.",
                       "그래프 하나를 지나는 역전파 한 번으로 a.grad = a + 4a = 5a가 됩니다: 공유된 "
                       "노드는 한 번만 실행되었고, 유지된 것은 없습니다."))
