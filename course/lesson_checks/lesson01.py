"""Check cells for lesson 01, "backward() and the graph it walks".

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 runs the exercise's code and reads which of each product's `_saved_self` and
`_saved_other` hold a tensor; exercise 2 runs the exercise's code and reads
`y.grad_fn.next_functions`; exercise 3 runs the exercise's code and reads each tensor's
`.grad` and `.is_leaf`. The hints of exercises 1 and 3 state a rule and say how to apply
it; no hint says which name is wrong. The exercises' code lives here as text, and the
notebook shows that very text (tests/test_exercises_lesson01.py checks it). No checker
touches the global RNG: every leaf is built from fixed values.
"""
import numbers
import warnings

import torch

from .answers import kind, labels
from .language import say
from .verdict import Verdict, correct, not_yet, unanswered


def _run(code) -> dict:
    """Run one of the exercises' fixed texts (never the reader's) and return its names."""
    namespace = {"torch": torch}
    exec(code, namespace)
    return namespace


# Exercise 1: which factors does each product's MulBackward0 save?

EXERCISE_1_CODE = """\
w = torch.tensor([1.0, 2.0], requires_grad=True)
x = torch.tensor([3.0, 4.0])
y1 = x * w
y2 = w * x
y3 = w * w.exp()
y4 = w.exp() * x"""

PRODUCTS = ("y1", "y2", "y3", "y4")
SLOTS = ("self", "other")


def _saved_slots() -> dict:
    """Each product's name -> the slots of its MulBackward0 that hold a tensor, read from
    the real nodes (`_saved_self` / `_saved_other` is None where nothing was saved)."""
    products = _run(EXERCISE_1_CODE)
    return {name: {slot for slot in SLOTS
                   if getattr(products[name].grad_fn, f"_saved_{slot}") is not None}
            for name in PRODUCTS}


def _slot_name(label: str) -> str:
    """'self' from 'self', '_saved_self', 'saved_self' or " 'Self' "."""
    name = label.strip().strip("'\"").strip().lower()
    for prefix in ("_saved_", "saved_"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return name


def _quoted(names) -> str:
    """Names as the reader typed them, quoted, so that '' or ' ' show as such."""
    return ", ".join(repr(name) for name in names)


def _read_slots(answer):
    """({product: set of slots}, None), or (None, a one-line hint on the answer's form)."""
    if not isinstance(answer, dict):
        return None, say(f"expected a dict such as {{'y1': set(), 'y2': {{'self', 'other'}}, "
                         f"...}}; got {kind(answer)}",
                         f"{{'y1': set(), 'y2': {{'self', 'other'}}, ...}} 같은 딕셔너리가 와야 "
                         f"하는데 {kind(answer)}가 왔습니다")
    if any(not isinstance(key, str) for key in answer):
        return None, say("the keys are the products' names as strings, 'y1' to 'y4'",
                         "키는 곱의 이름을 문자열로 쓴 'y1'부터 'y4'까지입니다")
    chosen = {}
    for key, value in answer.items():
        if isinstance(value, str):
            value = {value}
        if not isinstance(value, (set, frozenset, list, tuple)) \
                or any(not isinstance(item, str) for item in value):
            return None, say("each value is a set of slot names as strings: {'self'}, "
                             "{'other'}, {'self', 'other'} or set()",
                             "값은 저장 자리 이름을 문자열로 담은 집합, 즉 {'self'}, {'other'}, "
                             "{'self', 'other'}, set() 가운데 하나입니다")
        name = key.strip().strip("'\"").strip().lower()
        if name in chosen:  # 'y1' and 'Y1': one product given twice, the last would win
            return None, say(f"two keys name the same product, {name}: give each product "
                             f"once",
                             f"두 키가 같은 곱({name})을 가리킵니다. 곱마다 한 번씩만 "
                             f"주세요")
        chosen[name] = {_slot_name(item) for item in value}
    unknown = sorted(set(chosen) - set(PRODUCTS))
    if unknown:
        return None, say(f"unknown name(s) {_quoted(unknown)}: the products are "
                         f"{', '.join(PRODUCTS)}",
                         f"알 수 없는 이름이 있습니다({_quoted(unknown)}). 곱의 이름은 "
                         f"{', '.join(PRODUCTS)}입니다")
    missing = [name for name in PRODUCTS if name not in chosen]
    if missing:
        return None, say(f"give a set for every product; none for {', '.join(missing)}",
                         f"{', '.join(missing)}의 답이 없습니다. 곱마다 집합을 하나씩 주세요")
    slots = set().union(*chosen.values())
    if slots - set(SLOTS):
        return None, say(f"unknown slot name(s) {_quoted(sorted(slots - set(SLOTS)))}: the "
                         f"slots are 'self' (the first factor) and 'other' (the second)",
                         "알 수 없는 자리 이름이 "
                         f"있습니다({_quoted(sorted(slots - set(SLOTS)))}). 자리는 'self'(첫째 "
                         "인수)와 'other'(둘째 인수)입니다")
    return chosen, None


def factor_rule() -> str:
    """The hint for any wrong answer: the principle of section 4 and how to apply it;
    never which product is wrong, nor which slot, nor in which direction."""
    return say("in self * other, the gradient for one factor is the incoming gradient times "
               "the other factor, so the node saves a factor when, and only when, the other "
               "factor needs a gradient; a tensor needs one if it requires grad: a leaf made "
               "with requires_grad=True, or any tensor computed from one. Apply this to both "
               "factors of every product",
               "self * other에서 한 인수에 대한 변화도는 들어온 변화도에 다른 인수를 곱한 "
               "값입니다. 그래서 노드는 다른 인수에 변화도가 필요할 때에만 이 인수를 "
               "저장합니다. 변화도가 필요한 텐서는 requires_grad=True로 만든 잎 텐서이거나 "
               "그런 텐서로부터 계산된 텐서입니다. 곱마다 두 인수를 모두 이렇게 따져 보세요")


def exercise_1(answer) -> Verdict:
    """For y1 to y4 of EXERCISE_1_CODE: which of _saved_self / _saved_other hold a tensor?"""
    if answer is None:
        return unanswered(say("set `answer` to a dict from each product to the slots that "
                              "hold a tensor, e.g. {'y1': set(), 'y2': {'self', 'other'}, "
                              "...}, then run this cell again",
                              "`answer`에 곱마다 텐서가 저장되는 자리의 집합을 적은 딕셔너리(예: "
                              "{'y1': set(), 'y2': {'self', 'other'}, ...})를 넣고 이 셀을 다시 "
                              "실행하세요"))
    chosen, hint = _read_slots(answer)
    if hint:
        return not_yet(hint)
    # {'y1': {'self'}, 'y2': {'other'}, 'y3': {'self', 'other'}, 'y4': {'other'}}: read
    if chosen != _saved_slots():
        return not_yet(factor_rule())
    return correct(say("∂(self * other)/∂self = other and ∂/∂other = self: a factor is saved "
                       "for the gradient of the other one. In y1 only w (other) requires "
                       "grad, so x (self) is saved; in y2 w is self, so x (other) is saved; "
                       "in y3 both factors need a gradient, so both are saved; in y4 "
                       "w.exp() is no leaf but was computed from w, so it needs a gradient "
                       "and x (other) is saved.",
                       "∂(self * other)/∂self = other이고 ∂/∂other = self이므로, 한 인수는 다른 "
                       "인수의 변화도를 구하려고 저장됩니다. y1에서는 w(other)만 "
                       "requires_grad=True이므로 x(self)가 저장됩니다. y2에서는 w가 self이므로 "
                       "x(other)가 저장됩니다. y3에서는 두 인수 모두 변화도가 필요하므로 둘 다 "
                       "저장됩니다. y4의 w.exp()는 잎 텐서가 아니지만 w로부터 계산되었으므로 "
                       "변화도가 필요하고, 그래서 x(other)가 저장됩니다."))


# Exercise 2: y.grad_fn.next_functions for a product of two chunks, as names.

EXERCISE_2_CODE = """\
x = torch.arange(6.0, requires_grad=True)
first, middle, last = x.chunk(3)
y = last * first.exp()"""

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
                              "`answer`에 names(y.grad_fn)이 돌려주는 쌍의 리스트(예: "
                              f"{PAIRS_EXAMPLE})를 넣고 이 셀을 다시 실행하세요"))
    given, hint = _read_pairs(answer)
    if hint:
        return not_yet(hint)
    expected = _exercise_2_expected()  # [('SplitBackward0', 2), ('ExpBackward0', 0)]
    wanted = [(name.lower(), index) for name, index in expected]
    if len(given) != len(wanted):
        return not_yet(say(f"`last * first.exp()` has {len(wanted)} inputs, so next_functions "
                           f"holds one pair per input, {len(wanted)} pairs; yours has "
                           f"{len(given)}",
                           f"`last * first.exp()`의 입력은 {len(wanted)}개이므로 next_functions에는 "
                           f"입력마다 쌍이 하나씩, 모두 {len(wanted)}개 있습니다. 답에는 "
                           f"{len(given)}개가 있습니다"))
    if given == wanted:
        (split, i_last), (exp, i_exp) = expected
        return correct(say(f"Each pair names the node that made that input: last is output "
                           f"{i_last} of the one {split} that chunk made; first.exp() is "
                           f"output {i_exp}, the only one, of the {exp} that exp made. first "
                           f"itself feeds that {exp}, one step further back.",
                           f"쌍마다 그 입력을 만든 노드가 나옵니다. last는 chunk가 만든 {split} "
                           f"노드의 {i_last}번 출력이고, first.exp()는 exp가 만든 {exp} 노드의 "
                           f"{i_exp}번 출력(하나뿐인 출력)입니다. first 자체는 그보다 한 단계 "
                           f"앞에서 {exp} 노드의 입력이 됩니다."))
    names_given = [name for name, _ in given]
    names_wanted = [name for name, _ in wanted]
    if names_given != names_wanted:
        if None in names_given:
            return not_yet(say("None marks an input that needs no gradient; both inputs "
                               "were computed from x, which requires grad",
                               "None은 변화도가 필요 없는 입력을 뜻합니다. 두 입력은 모두 "
                               "requires_grad=True인 x로부터 계산되었습니다"))
        # AccumulateGrad's name, with or without its C++ namespace ("torch" "::" "autograd")
        if any(name is not None and name.split("::")[-1] == "accumulategrad"
               for name in names_given):
            return not_yet(say("neither input is a leaf, both were computed from x: each "
                               "pair names the node that made that input, not x's "
                               "AccumulateGrad",
                               "두 입력은 모두 잎 텐서가 아닙니다. x로부터 계산되었기 "
                               "때문입니다. 그래서 쌍에는 x의 AccumulateGrad가 아니라 그 입력을 "
                               "만든 노드의 이름이 들어갑니다"))
        if "mulbackward0" in names_given:
            return not_yet(say("y.grad_fn is MulBackward0 itself; its pairs name the nodes "
                               "that made its inputs, last and first.exp()",
                               "y.grad_fn이 바로 MulBackward0입니다. 쌍에는 그 입력인 last와 "
                               "first.exp()를 만든 노드의 이름이 들어갑니다"))
        if names_given == names_wanted[::-1]:
            return not_yet(say("the pairs follow the order of the operation's inputs: in "
                               "`last * first.exp()`, which input comes first?",
                               "쌍은 연산의 입력 순서를 따릅니다. `last * first.exp()`에서 먼저 "
                               "오는 입력은 어느 것일까요?"))
        if names_given[1] == names_wanted[0]:  # chunk's node for both: a step too far back
            return not_yet(say("a pair names the node that made that very input, the last "
                               "operation applied to it, not a node further back in the graph: "
                               "which operation made each factor of `last * first.exp()`?",
                               "쌍에는 그 입력 자체를 만든 노드, 즉 그 입력에 마지막으로 적용된 "
                               "연산의 노드가 들어갑니다. 그래프에서 더 앞에 있는 노드가 아닙니다. "
                               "`last * first.exp()`의 두 인수는 각각 어떤 연산이 만들었을까요?"))
        if names_given[0] != names_wanted[0]:
            return not_yet(say("which node made last? chunk's node is the one section 3 "
                               "found behind halves[1]; give its name as `names` prints it",
                               "last는 어느 노드가 만들었을까요? chunk의 노드는 3절에서 "
                               "halves[1]을 만든 것으로 확인한 그 노드입니다. `names`가 "
                               "출력하는 그대로 이름을 주세요"))
        return not_yet(say("which node made first.exp()? A backward node is named after its "
                           "operation, as PowBackward0 is for `**`; give its name as `names` "
                           "prints it",
                           "first.exp()는 어느 노드가 만들었을까요? 역전파 노드의 이름은 "
                           "`**`의 노드가 PowBackward0인 것처럼 연산의 이름을 따릅니다. "
                           "`names`가 출력하는 그대로 이름을 주세요"))
    indices_given = [index for _, index in given]
    indices_wanted = [index for _, index in wanted]
    if indices_given in ([0] * len(given), list(range(len(given)))):
        return not_yet(say("the number is not an input number: it says which output of that "
                           "node each input is. Which of chunk's outputs is last?",
                           "숫자는 입력의 번호가 아닙니다. 각 입력이 그 노드의 몇 번 "
                           "출력인지를 나타냅니다. last는 chunk의 몇 번 출력일까요?"))
    if indices_given == [index + 1 for index in indices_wanted]:
        return not_yet(say("a node's outputs are numbered from 0, like a list's items",
                           "노드의 출력은 리스트의 항목처럼 0부터 번호를 매깁니다"))
    return not_yet(say("the number says which output of the node in its pair each input is, "
                       "counted from 0 in the order that operation returns its outputs",
                       "숫자는 각 입력이 쌍에 적힌 노드의 몇 번 출력인지를 나타냅니다. 그 "
                       "연산이 출력을 돌려주는 순서대로 0부터 셉니다"))


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

# Every wrong answer gets the same hint: the rule for which tensors get a .grad, leaves and
# non-leaves alike. It never says which name is wrong, nor whether it is one too many or
# one too few, nor which kind of tensor (leaf or not) holds the mistake: a hint per kind
# would let a reader fix the answer one kind at a time.
# A function, not a constant: the hint is written in the language chosen when the check
# runs.

def grad_rule() -> str:
    """The hint for any wrong answer: the whole rule, naming no tensor and no kind."""
    return say("after backward(), a tensor has a .grad in two cases: it is a leaf (no "
               "tracked operation made it) that requires grad and that the backward pass "
               "reaches; or it is a non-leaf whose retain_grad() was called before "
               "backward() ran. Check every tensor, in your set or not, against this rule",
               "backward()를 실행한 뒤 .grad를 가지는 텐서는 두 가지입니다. "
               "requires_grad=True이고 역전파가 닿는 잎 텐서(추적되는 연산이 만들지 않은 "
               "텐서), 그리고 backward()가 실행되기 전에 retain_grad()를 호출한, 잎 텐서가 "
               "아닌 텐서입니다. 답에 넣었든 넣지 않았든 모든 텐서를 이 규칙에 비추어 "
               "보세요")


def _run_exercise_3() -> tuple:
    """Run EXERCISE_3_CODE: (the names whose .grad is not None, the names of the leaves)."""
    tensors = _run(EXERCISE_3_CODE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading a non-leaf's .grad warns that it is None
        with_grad = {name for name in TENSOR_NAMES if tensors[name].grad is not None}
    return with_grad, {name for name in TENSOR_NAMES if tensors[name].is_leaf}


def _with_grad() -> set:
    """The names in EXERCISE_3_CODE whose .grad is not None once it has run."""
    return _run_exercise_3()[0]


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
                           "텐서가 아니라 텐서의 이름을 문자열로 주세요. 예: {'w', 'x'}"))
    chosen = labels(answer)
    if chosen is None:
        return not_yet(say(f"expected a set of names such as {{'w', 'x'}}; got {kind(answer)}",
                           f"{{'w', 'x'}} 같은 이름 집합(set)이 와야 하는데 {kind(answer)}가 "
                           f"왔습니다"))
    chosen = {name.lower() for name in chosen}
    unknown = sorted(chosen - set(TENSOR_NAMES))
    if unknown:
        return not_yet(say(f"unknown name(s) {_quoted(unknown)}: the tensors are "
                           f"{', '.join(TENSOR_NAMES)}",
                           f"알 수 없는 이름이 있습니다({_quoted(unknown)}). 텐서 이름은 "
                           f"{', '.join(TENSOR_NAMES)}입니다"))
    truth, _ = _run_exercise_3()  # {'w', 'u', 'h'}: read, not stored
    if chosen != truth:  # the same hint whichever names are wrong, and however many
        return not_yet(grad_rule())
    return correct(say("w and u are leaves that require grad and loss was computed from both "
                       "(u's .grad holds zeros); h kept its gradient because retain_grad() "
                       "came before backward; x requires no grad, and loss and g are "
                       "non-leaves that kept nothing (g's retain_grad() came after backward).",
                       "w와 u는 requires_grad=True인 잎 텐서이고 loss는 둘 모두로부터 "
                       "계산되었습니다(u의 .grad에는 0이 들어 있습니다). h는 역전파보다 먼저 "
                       "retain_grad()를 호출했으므로 변화도를 남겼습니다. x는 변화도가 필요 없고, "
                       "loss와 g는 잎 텐서가 아닌 텐서로서 아무것도 남기지 않았습니다(g는 "
                       "backward()가 끝난 뒤에야 retain_grad()를 호출했습니다)."))
