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
from .language import say
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
        return unanswered(say("set `answer` to 'self' or 'result', then run this cell again",
                              "`answer`에 'self' 또는 'result'를 넣고 이 셀을 다시 실행하세요"))
    if isinstance(answer, torch.Tensor):
        return not_yet(say("give the name of the saved tensor as a string, 'self' or 'result', "
                           "not a tensor",
                           "텐서가 아니라 저장된 텐서의 이름을 문자열로 주세요: 'self' 또는 "
                           "'result'"))
    if not isinstance(answer, str):
        return not_yet(say(f"expected a string, 'self' or 'result'; got {kind(answer)}",
                           f"'self' 또는 'result' 문자열이 와야 하는데 {kind(answer)}가 왔습니다"))
    name = answer.strip().strip("'\"").lower()
    for prefix in ("_saved_", "_raw_saved_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    saved = _saved_by_exp()  # ['result']: read from a real node, not assumed
    if name in saved and name == "result":
        return correct(say("ExpBackward0 saves `result`, the output y: the derivative of "
                           "exp(a) is exp(a) itself, so y is all its formula needs and the "
                           "node does not save a.",
                           "ExpBackward0 노드는 출력 y인 `result`를 저장합니다: exp(a)의 "
                           "도함수는 exp(a) 자신이므로 공식에 필요한 것은 y뿐이고, 노드는 "
                           "a를 저장하지 않습니다."))
    if name in saved:
        return correct(say(f"ExpBackward0 saves `{name}` on this version of PyTorch.",
                           f"이 버전의 PyTorch에서 ExpBackward0 노드가 저장하는 텐서는 "
                           f"`{name}`입니다."))
    if name == "self":
        return not_yet(say("it could keep a and compute exp(a) again during backward, but the "
                           "derivative of exp(a) is exp(a): which tensor already holds that?",
                           "a를 저장했다가 역전파 때 exp(a)를 다시 계산할 수도 있겠지만, "
                           "exp(a)의 도함수는 exp(a)입니다: 그 값을 이미 담고 있는 텐서는 "
                           "어느 것일까요?"))
    if name == "other":
        return not_yet(say("`other` is the second input of a two-input op such as b * 2; "
                           "exp has a single input. Choose between 'self' and 'result'.",
                           "`other`는 b * 2처럼 입력이 둘인 연산의 두 번째 입력인데, exp는 "
                           "입력이 하나뿐입니다. 'self'와 'result' 중에서 고르세요."))
    return not_yet(say(f"{answer.strip()!r} is not one of the choices: answer 'self' (the "
                       "input a) or 'result' (the output y)",
                       f"{answer.strip()!r} 값은 보기에 없습니다: 'self'(입력 a)나 "
                       "'result'(출력 y) 중 하나로 답하세요"))


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
    if isinstance(answer, (str, bytes)) or not isinstance(answer, (list, tuple)):
        return None, say(f"expected a list of (node name, number) pairs such as "
                         f"{PAIRS_EXAMPLE}; got {kind(answer)}",
                         f"{PAIRS_EXAMPLE}처럼 (노드 이름, 숫자) 쌍의 리스트가 와야 하는데 "
                         f"{kind(answer)}가 왔습니다")
    pairs = []
    for pair in answer:
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (list, tuple)) \
                or len(pair) != 2:
            return None, say(f"each pair has two parts, (node name, number), as in "
                             f"{PAIRS_EXAMPLE}; one of yours is {kind(pair)}",
                             f"{PAIRS_EXAMPLE}처럼 쌍마다 (노드 이름, 숫자) 두 부분이 "
                             f"있어야 합니다. 답 가운데 하나가 {kind(pair)}입니다")
        name, index = pair
        if isinstance(name, torch.autograd.graph.Node):
            return None, say("give each node by its name, a string such as 'MulBackward0' "
                             "(as `names` prints it), not the node object",
                             "노드 객체가 아니라 노드의 이름을 'MulBackward0' 같은 문자열로 "
                             "주세요(`names`가 출력하는 그대로)")
        if name is not None and not isinstance(name, str):
            return None, say(f"a node's name is a string (or None); one of yours is "
                             f"{kind(name)}",
                             f"노드 이름은 문자열(또는 None)입니다. 답 가운데 하나가 "
                             f"{kind(name)}입니다")
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            return None, say(f"the second part of a pair is a whole number such as 0; one of "
                             f"yours is {kind(index)}",
                             f"쌍의 두 번째 부분은 0 같은 정수입니다. 답 가운데 하나가 "
                             f"{kind(index)}입니다")
        pairs.append((name.strip().lower() if name is not None else None, int(index)))
    return pairs, None


def exercise_2(answer) -> Verdict:
    """After EXERCISE_2_CODE, what does names(y.grad_fn) list?"""
    if answer is None:
        return unanswered(say(f"set `answer` to the list of pairs that names(y.grad_fn) "
                              f"shows, e.g. {PAIRS_EXAMPLE}, then run this cell again",
                              f"`answer`에 names(y.grad_fn)의 결과인 쌍의 리스트(예: "
                              f"{PAIRS_EXAMPLE})를 넣고 이 셀을 다시 실행하세요"))
    given, hint = _read_pairs(answer)
    if hint:
        return not_yet(hint)
    expected = _exercise_2_expected()  # [('SplitBackward0', 2), ('SplitBackward0', 0)]
    wanted = [(name.lower(), index) for name, index in expected]
    if len(given) != len(wanted):
        return not_yet(say(f"`last * first` has {len(wanted)} inputs, so next_functions holds "
                           f"one pair per input, {len(wanted)} pairs; yours has {len(given)}",
                           f"`last * first`의 입력은 {len(wanted)}개이므로 next_functions에는 "
                           f"입력마다 쌍이 하나씩, 모두 {len(wanted)}개 있습니다. 답에는 "
                           f"{len(given)}개가 있습니다"))
    if given == wanted:
        (node, i_last), (_, i_first) = expected
        return correct(say(f"MulBackward0's inputs in order: last, output {i_last} of the one "
                           f"{node} that chunk made, then first, its output {i_first}.",
                           f"MulBackward0 노드의 입력을 순서대로 보면, 먼저 last는 chunk가 "
                           f"만든 {node} 노드 하나의 출력 {i_last}번이고, 다음 first는 같은 "
                           f"노드의 출력 {i_first}번입니다."))
    names_given = [name for name, _ in given]
    if names_given != [name for name, _ in wanted]:
        if None in names_given:
            return not_yet(say("None marks an input that needs no gradient; first and last "
                               "were both computed from x, which requires grad",
                               "None은 변화도가 필요 없는 입력을 뜻합니다. first와 last는 "
                               "둘 다 requires_grad=True인 x로부터 계산되었습니다"))
        # AccumulateGrad's name, with or without its C++ namespace ("torch" "::" "autograd")
        if any(name is not None and name.split("::")[-1] == "accumulategrad"
               for name in names_given):
            return not_yet(say("first and last are not leaves, chunk computed them from x: "
                               "their pairs name the node chunk made, not x's AccumulateGrad",
                               "first와 last는 잎 텐서가 아닙니다. chunk가 x로부터 계산했기 "
                               "때문입니다. 그래서 두 쌍에는 x의 AccumulateGrad가 아니라 "
                               "chunk가 만든 노드의 이름이 들어갑니다"))
        if "mulbackward0" in names_given:
            return not_yet(say("y.grad_fn is MulBackward0 itself; its pairs name the nodes "
                               "that made its inputs, last and first",
                               "y.grad_fn이 바로 MulBackward0입니다. 그 쌍에는 입력 last와 "
                               "first를 만든 노드의 이름이 들어갑니다"))
        return not_yet(say("which node made last and first? chunk's node is the one section 3 "
                           "found behind halves[1]; give its name as `names` prints it",
                           "last와 first는 어느 노드가 만들었을까요? chunk의 노드는 3절에서 "
                           "halves[1] 뒤에서 찾은 바로 그 노드입니다. `names`가 출력하는 "
                           "그대로 이름을 주세요"))
    indices_given = [index for _, index in given]
    indices_wanted = [index for _, index in wanted]
    if indices_given == indices_wanted[::-1]:
        return not_yet(say("the pairs follow the order of the operation's inputs: in "
                           "`last * first`, which input comes first?",
                           "쌍은 연산의 입력 순서를 따릅니다. `last * first`에서 먼저 오는 "
                           "입력은 어느 것일까요?"))
    if all(index == 0 for index in indices_given):
        return not_yet(say("the number is not an input number: it says which output of that "
                           "node each input is. Which of chunk's outputs is last?",
                           "숫자는 입력의 번호가 아닙니다. 각 입력이 그 노드의 몇 번째 "
                           "출력인지를 나타냅니다. last는 chunk의 몇 번째 출력일까요?"))
    if indices_given == [index + 1 for index in indices_wanted]:
        return not_yet(say("a node's outputs are numbered from 0, like a list's items",
                           "노드의 출력은 리스트의 항목처럼 0부터 번호를 매깁니다"))
    return not_yet(say("the number says which output of the split node feeds each input, "
                       "counted from 0 in the order chunk returns them",
                       "숫자는 split 노드의 몇 번째 출력이 각 입력으로 들어가는지를 "
                       "나타냅니다. chunk가 돌려주는 순서대로 0부터 셉니다"))


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
# code, so that a hint never settles any other name. Functions, not constants: the hints
# are written in the language chosen when the check runs.

def why_no_grad() -> dict:
    """The names whose .grad is None, each with its hint."""
    return {
        "x": say("x was computed (arange, then * 2), yet it is a leaf: does it require grad?",
                 "x는 계산으로 만들어졌지만(arange 다음 * 2) 잎 텐서입니다. 그런데 x는 "
                 "requires_grad=True일까요?"),
        "g": say("g.retain_grad() came after loss.backward(): can it keep a gradient that "
                 "was already passed on and dropped?",
                 "g.retain_grad()는 loss.backward() 다음에 호출되었습니다. 이미 다음으로 "
                 "넘기고 버린 변화도를 남겨 둘 수 있을까요?"),
        "loss": say("loss is not a leaf: what would it take for a non-leaf to keep its .grad?",
                    "loss는 잎 텐서가 아닙니다. 잎 텐서가 아닌 텐서가 .grad를 남기려면 "
                    "무엇이 필요할까요?"),
    }


def why_grad() -> dict:
    """The names whose .grad is not None, each with its hint."""
    return {
        "w": say("w is a leaf that requires grad: was loss computed from it?",
                 "w는 requires_grad=True인 잎 텐서입니다. loss는 w로부터 계산되었나요?"),
        "u": say("0 * u.sum() is still an operation autograd records: does backward reach u, "
                 "and is a gradient of zeros still a .grad?",
                 "0 * u.sum()도 autograd가 기록하는 연산입니다. 역전파가 u까지 닿을까요? "
                 "그리고 0으로 채워진 변화도도 .grad일까요?"),
        "h": say("h is not a leaf, but look at what the code asks of h before loss.backward()",
                 "h는 잎 텐서가 아니지만, 코드가 loss.backward() 전에 h에 무엇을 요청하는지 "
                 "보세요"),
    }


def _look_again(name) -> str:
    """The hint for a name that has no hint of its own (on another PyTorch version)."""
    return say(f"look again at {name}", f"{name} 텐서를 다시 보세요")


def _with_grad() -> set:
    """The names in EXERCISE_3_CODE whose .grad is not None once it has run."""
    tensors = _run(EXERCISE_3_CODE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading a non-leaf's .grad warns that it is None
        return {name for name in TENSOR_NAMES if tensors[name].grad is not None}


def exercise_3(answer) -> Verdict:
    """After EXERCISE_3_CODE, which of w, u, x, h, g, loss have a .grad that is not None?"""
    if answer is None:
        return unanswered(say("set `answer` to the set of names whose .grad is not None, "
                              "e.g. {'w', 'x'}, then run this cell again",
                              "`answer`에 .grad가 None이 아닌 텐서의 이름 집합(예: "
                              "{'w', 'x'})을 넣고 이 셀을 다시 실행하세요"))
    if isinstance(answer, (set, frozenset, list, tuple)) \
            and any(isinstance(item, torch.Tensor) for item in answer):
        return not_yet(say("give the tensors' names as strings, {'w', 'x'}, not the tensors",
                           "텐서가 아니라 텐서의 이름을 문자열로 주세요: {'w', 'x'}"))
    chosen = labels(answer)
    if chosen is None:
        return not_yet(say(f"expected a set of names such as {{'w', 'x'}}; got {kind(answer)}",
                           f"{{'w', 'x'}} 같은 이름 집합(set)이 와야 하는데 {kind(answer)}가 "
                           f"왔습니다"))
    chosen = {name.lower() for name in chosen}
    unknown = sorted(chosen - set(TENSOR_NAMES))
    if unknown:
        return not_yet(say(f"unknown name(s) {', '.join(unknown)}: the tensors are "
                           f"{', '.join(TENSOR_NAMES)}",
                           f"알 수 없는 이름입니다: {', '.join(unknown)}. 텐서 이름은 "
                           f"{', '.join(TENSOR_NAMES)}입니다"))
    truth = _with_grad()  # {'w', 'u', 'h'}: read from the tensors after running the code
    no_grad, grad = why_no_grad(), why_grad()
    for name in TENSOR_NAMES:  # one hint at a time, in the code's order
        if name in chosen and name not in truth:
            return not_yet(no_grad.get(name) or _look_again(name))
    for name in TENSOR_NAMES:
        if name in truth and name not in chosen:
            return not_yet(grad.get(name) or _look_again(name))
    return correct(say("w and u are leaves that require grad and loss was computed from both "
                       "(u's .grad holds zeros); h kept its gradient because retain_grad() "
                       "came before backward; x requires no grad, and loss and g are "
                       "non-leaves that kept nothing (g asked too late).",
                       "w와 u는 requires_grad=True인 잎 텐서이고 loss는 둘 모두로부터 "
                       "계산되었습니다(u의 .grad에는 0이 들어 있습니다). h는 retain_grad()가 "
                       "역전파보다 먼저 호출되었으므로 변화도를 남겼습니다. x는 변화도가 "
                       "필요 없고, loss와 g는 잎 텐서가 아닌 텐서로서 아무것도 남기지 "
                       "않았습니다(g는 너무 늦게 요청했습니다)."))
