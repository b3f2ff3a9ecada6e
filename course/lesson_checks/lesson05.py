"""Check cells for lesson 05, "The memory cost of retained graphs".

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 builds the model its text shows and reads the storages its graph saves;
exercise 2 runs each snippet and watches which activations are still alive when it ends;
exercise 3 runs the reader's function and watches the activations while it runs and after
it returns, and the mode its model's Dropout ran in, then compares its results with the
leaky version's. None of them moves the global RNG: models are built with `seeding.fresh`,
batches come from private generators, and the reader's function runs on a forked RNG (a
Dropout left in training mode draws from it).
"""
import numbers
import weakref
from collections import Counter

import torch
from torch import nn

from autograd_lens import retained_bytes, saved_tensors

from .answers import as_number, close, kind, raised, read_labels
from .language import say
from .seeding import fresh
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered

FLOAT32 = 4  # bytes per element of every tensor the exercises save
ACTIVATIONS = (nn.ReLU, nn.Tanh, nn.GELU)


def _batch(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


class _ActivationWatch:
    """Weak references to the storage of every output of a model's activation modules.

    A weak reference keeps nothing alive: it is dead as soon as nothing (no tensor you
    name, no graph that saved one over it) holds the storage. It is taken on the storage,
    not on the tensor, because autograd keeps a saved output as a new tensor object over
    the same storage: the tensor object can be gone while its memory is held.
    `alive_at_forward` records, each time an activation runs, how many earlier
    activation outputs were still alive.
    """

    def __init__(self, model):
        self.refs, self.alive_at_forward = [], []
        for module in model.modules():
            if isinstance(module, ACTIVATIONS):
                module.register_forward_hook(self._record)

    def _record(self, module, inputs, output):
        self.alive_at_forward.append(self.alive())
        self.refs.append(weakref.ref(output.untyped_storage()))

    def alive(self) -> int:
        return sum(ref() is not None for ref in self.refs)

    def __deepcopy__(self, memo):
        # copy.deepcopy(model) copies the hooks, and with them a bound method's object:
        # the copy's activations must be recorded here too, not in a copy of the watch
        return self


# Exercise 1: which storages does retained_bytes(loss) count, for a GELU and Tanh MLP?
# The answer is a list of shapes, not a number of bytes: a number could be pasted from
# retained_bytes(loss) without counting anything.

EXERCISE_1_BATCH = 25
SHAPES_EXAMPLE = "[(8, 16), (8, 32)]"  # shapes from section 1's net, not this model


def _exercise_1_model() -> nn.Sequential:
    """The model the exercise shows (its weights play no part in what is saved)."""
    return fresh(lambda: nn.Sequential(nn.Linear(10, 40), nn.GELU(), nn.Linear(40, 20),
                                       nn.Tanh(), nn.Linear(20, 3)), seed=5)


def _exercise_1_loss(model):
    return model(_batch(5, EXERCISE_1_BATCH, model[0].in_features)).pow(2).mean()


def _exercise_1_storages() -> Counter:
    """The shapes of the storages the graph keeps, as retained_bytes counts them: each
    storage once, those shared with a leaf left aside; found by running the model."""
    shapes = {}
    for row in saved_tensors(_exercise_1_loss(_exercise_1_model())):
        if row.tensor is not None and not row.is_leaf:
            shapes[row.tensor.untyped_storage().data_ptr()] = tuple(row.tensor.shape)
    return Counter(shapes.values())


def _exercise_1_measured() -> int:
    return retained_bytes(_exercise_1_loss(_exercise_1_model()))


def _is_shape(shape) -> bool:
    """A tuple, list or torch.Size of positive whole numbers (not bools)."""
    return isinstance(shape, (list, tuple, torch.Size)) and \
        all(isinstance(n, numbers.Integral) and not isinstance(n, bool) and n > 0 for n in shape)


def _read_shapes(answer):
    """(a Counter of shapes as tuples of ints, None) from a list of shapes; else (None, the
    first entry that is not a shape), or (None, None) when the answer is not a list at all."""
    if isinstance(answer, (str, bytes, dict, torch.Tensor)) or \
            not isinstance(answer, (list, tuple, set, frozenset)):
        return None, None
    for shape in answer:
        if not _is_shape(shape):
            return None, shape
    return Counter(tuple(int(n) for n in shape) for shape in answer), None


def _short_repr(value, limit=40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _parameter_shapes(model) -> set:
    """Every parameter's shape and, for a weight, that of its transpose (Wᵀ)."""
    shapes = set()
    for p in model.parameters():
        shapes.update({tuple(p.shape), tuple(p.shape)[::-1]})
    return shapes


def exercise_1(answer) -> Verdict:
    """Which storages does retained_bytes(loss) count? Their shapes, one per storage."""
    if answer is None:
        return unanswered(say(f"set `answer` to a list of shapes, one per storage, e.g. "
                              f"{SHAPES_EXAMPLE}, then run this cell again",
                              "`answer`에 스토리지마다 shape를 하나씩 적은 리스트(예: "
                              f"{SHAPES_EXAMPLE})를 넣고 이 셀을 다시 실행하세요"))
    if as_number(answer) is not None:
        return not_yet(say(f"give the shapes, one per storage, not a number: a list such as "
                           f"{SHAPES_EXAMPLE}; the checker adds up the bytes",
                           "숫자 하나가 아니라 스토리지마다 shape를 하나씩 적은 리스트로 답하세요. "
                           f"예: {SHAPES_EXAMPLE}. 바이트 수는 채점기가 더합니다"))
    given, odd_entry = _read_shapes(answer)
    if given is None and odd_entry is None:
        return not_yet(say(f"expected a list of shapes such as {SHAPES_EXAMPLE}, each a tuple "
                           f"of positive whole numbers; got {kind(answer)}",
                           f"{SHAPES_EXAMPLE}처럼 양의 정수로 된 튜플들의 리스트가 와야 하는데 "
                           f"{kind(answer)}가 왔습니다"))
    if given is None:  # a list, but one of its entries is not a shape
        entry = _short_repr(odd_entry)
        return not_yet(say(f"expected a list of shapes such as {SHAPES_EXAMPLE}, each a tuple "
                           f"of positive whole numbers; the entry {entry} is not one",
                           f"{SHAPES_EXAMPLE}처럼 양의 정수로 된 튜플들의 리스트가 와야 하는데, "
                           f"{entry} 항목은 그런 튜플이 아닙니다"))
    if not given:
        return not_yet(say("the list is empty: go through the nodes from the loss back and list, "
                           "once each, the storages their backward needs",
                           "리스트가 비어 있습니다. 손실에서부터 노드를 하나씩 거슬러 가며, "
                           "각 노드의 역전파에 필요한 스토리지를 겹치지 않게 한 번씩 나열하세요"))
    right = _exercise_1_storages()
    if given == right:
        bytes_ = _exercise_1_measured()
        return correct(say(f"{bytes_} bytes = 4 × 25 × (10 + 40 + 40 + 20 + 3): x, GELU's input "
                           "and its output, the Tanh output once, and the output pow(2) saves. "
                           "Check it against saved_tensors(loss): one row per saved tensor, so "
                           "rows that share a storage make one entry, and rows marked yes under "
                           "leaf are left out.",
                           f"{bytes_}바이트 = 4 × 25 × (10 + 40 + 40 + 20 + 3): x, GELU의 "
                           "입력과 출력, 한 번만 센 Tanh 출력, 그리고 pow(2)가 저장하는 "
                           "출력입니다. saved_tensors(loss)의 표와도 맞춰 보세요. 표에는 저장된 "
                           "텐서마다 행이 하나 있으므로 스토리지를 공유하는 행들은 한 항목이 되고, "
                           "leaf 열이 yes인 행은 빠집니다."))
    return not_yet(_exercise_1_hint(answer, given, right))


def _activation_shapes(model) -> set:
    """The shapes of the activations' inputs and outputs (batch, width): what an answer
    gets wrong when it takes an activation to save its input instead of its output."""
    layers = list(model)
    return {(EXERCISE_1_BATCH, previous.out_features)
            for previous, layer in zip(layers, layers[1:]) if isinstance(layer, ACTIVATIONS)}


def _exercise_1_hint(answer, given, right) -> str:
    """What kind of slip the answer makes. A shape the graph keeps, listed too often or
    missing, is never named; a shape that no storage of this graph has is (naming it says
    nothing about which storages the graph keeps)."""
    if isinstance(answer, (set, frozenset)) and set(given) == set(right):
        return say("a set keeps each shape once, but two storages can have the same shape: "
                   "give a list", "집합은 같은 shape를 한 번만 담지만, 두 스토리지의 shape가 같을 "
                                  "수 있습니다. 리스트로 답하세요")
    if Counter(tuple(sorted(s)) for s in given.elements()) == \
            Counter(tuple(sorted(s)) for s in right.elements()):
        return say("give each shape as PyTorch does, the batch first: (25, 10) for x",
                   "shape는 PyTorch가 주는 대로 배치를 앞에 두어 쓰세요. 예를 들어 x는 (25, "
                   "10)입니다")
    extra, missing = given - right, right - given
    model = _exercise_1_model()
    if any(shape in _parameter_shapes(model) for shape in extra):
        return say("you listed a parameter or a weight's Wᵀ: they are leaves, or views of "
                   "leaves, which live with or without the graph and which retained_bytes "
                   "leaves out",
                   "매개변수나 가중치의 Wᵀ를 넣었습니다. 이들은 잎 텐서이거나 잎 텐서의 뷰이므로 "
                   "그래프가 있든 없든 살아 있고, retained_bytes도 세지 않습니다")
    if any(shape in right for shape in extra):
        entries, storages = sum(given.values()), sum(right.values())
        if entries > storages and set(extra) <= _activation_shapes(model):
            # the same list comes from counting a shared storage twice and from taking an
            # activation to save its input as well: ask about both
            return say("more entries than storages: when one node saves its output and the next "
                       "saves it as its input, that is one storage, listed once; and does each "
                       "activation's backward need its input or its output?",
                       "항목이 스토리지보다 많습니다. 한 노드가 저장한 출력을 다음 노드가 "
                       "입력으로 저장하면 스토리지는 하나이므로 한 번만 씁니다. 그리고 활성화 "
                       "함수마다 역전파에 입력과 출력 가운데 무엇이 필요한지도 따져 보세요")
        if entries > storages:
            return say("more entries than storages: when one node saves its output and the next "
                       "saves it as its input, that is one storage, listed once",
                       "항목이 스토리지보다 많습니다. 한 노드가 저장한 출력을 다음 노드가 "
                       "입력으로 저장하면 스토리지는 하나이므로 한 번만 씁니다")
        # the activation question only when every surplus and shortfall is an
        # activation's input or output; else it would point at the wrong place
        about_activations = set(extra) | set(missing) <= _activation_shapes(model)
        if entries == storages and about_activations:
            return say("the right number of storages, but a shape too many and another too few: "
                       "which activation saves its input?",
                       "스토리지 개수는 맞지만, 어떤 shape는 너무 많고 다른 shape는 너무 "
                       "적습니다. 입력을 저장하는 활성화 함수는 어느 것일까요?")
        if entries == storages:
            return say("the right number of storages, but a shape too many and another too few: "
                       "for each node from the loss back, which storage does its backward need, "
                       "and is any counted twice?",
                       "스토리지 개수는 맞지만, 어떤 shape는 너무 많고 다른 shape는 너무 "
                       "적습니다. 손실에서부터 노드를 하나씩 거슬러 가며, 각 노드의 역전파에 어느 "
                       "스토리지가 필요한지, 두 번 센 것은 없는지 따져 보세요")
        if about_activations:
            return say("a shape is listed more often than the graph keeps it, and storages are "
                       "missing: for each activation, ask whether its backward needs its input "
                       "or its output",
                       "어떤 shape는 그래프가 붙잡는 것보다 많이 나열되었고, 빠진 스토리지도 "
                       "있습니다. 활성화 함수마다 역전파에 입력과 출력 가운데 무엇이 필요한지 "
                       "따져 보세요")
        return say("a shape is listed more often than the graph keeps it, and storages are "
                   "missing: for each node from the loss back, which storage does its backward "
                   "need, and is any counted twice?",
                   "어떤 shape는 그래프가 붙잡는 것보다 많이 나열되었고, 빠진 스토리지도 "
                   "있습니다. 손실에서부터 노드를 하나씩 거슬러 가며, 각 노드의 역전파에 어느 "
                   "스토리지가 필요한지, 두 번 센 것은 없는지 따져 보세요")
    if extra:
        return say(f"{sorted(extra)[0]} is not the shape of a storage this graph keeps; go "
                   "through the nodes from the loss back and ask what each one's backward needs",
                   f"이 그래프가 붙잡는 스토리지 가운데 shape가 {sorted(extra)[0]}인 것은 "
                   "없습니다. 손실에서부터 노드를 하나씩 거슬러 가며 각 노드의 역전파에 무엇이 "
                   "필요한지 따져 보세요")
    # one question for one kind of omission, the first found (never the whole checklist)
    if (EXERCISE_1_BATCH, model[0].in_features) in missing:
        return say("at least one storage is missing: what does the first Linear's backward need "
                   "to compute its weight's gradient?",
                   "빠진 스토리지가 있습니다. 첫 번째 Linear의 역전파가 가중치의 변화도를 "
                   "계산하려면 무엇이 필요할까요?")
    if (EXERCISE_1_BATCH, model[-1].out_features) in missing:
        return say("at least one storage is missing: what does the backward of pow(2) need?",
                   "빠진 스토리지가 있습니다. pow(2)의 역전파에는 무엇이 필요할까요?")
    return say("at least one storage is missing: for each activation, does its backward need "
               "its input or its output, and what does the Linear after it save?",
               "빠진 스토리지가 있습니다. 활성화 함수마다 역전파에 입력과 출력 가운데 무엇이 "
               "필요할까요? 그 뒤의 Linear는 무엇을 저장할까요?")


# Exercise 2: which snippets still hold saved tensors once they finish?
# The checker runs each of these fixed strings (never the reader's) with `model`, a
# Linear(16, 32) -> ReLU -> Linear(32, 1), and `batches`, three inputs of shape (8, 16).

SNIPPETS = {
    "A": """\
model.eval()
outputs = []
for x in batches:
    outputs.append(model(x))""",
    "B": """\
losses = []
for x in batches:
    loss = model(x).pow(2).mean()
    loss.backward()
    losses.append(loss)""",
    "C": """\
for x in batches:
    loss = model(x).pow(2).mean()
    loss.backward(retain_graph=True)""",
    "D": """\
total = 0
with torch.no_grad():
    for x in batches:
        total += model(x).pow(2).mean()""",
    "E": """\
total = 0
for x in batches:
    total += model(x).pow(2).mean()""",
    "F": """\
total = 0
for x in batches:
    loss = model(x).pow(2).mean()
    total += loss.detach()""",
}

def look_again() -> str:
    """The question for every wrong answer, whichever labels are wrong: naming a label, or
    how many are wrong, would let a reader flip labels until the verdict turns."""
    return say("not every label is on the right side. For each snippet, ask: does it build a "
               "graph at all, and once it has finished, does a name still in scope reach that "
               "graph's nodes, with no backward() having dropped their saved tensors?",
               "잘못 분류한 레이블이 있습니다. 스니펫마다 따져 보세요. 그래프를 만들기는 하나요? "
               "만든다면, 실행이 끝난 뒤에도 스코프에 남은 이름이 그 그래프의 노드에 닿아 있고, "
               "그 노드들의 저장된 텐서를 버린 backward()는 없었나요?")


def _holds_saved_tensors(text) -> bool:
    """Run a snippet; are any of its activations still alive while its names are?"""
    model = fresh(lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)),
                  seed=7)
    watch = _ActivationWatch(model)
    names = {"torch": torch, "model": model,
             "batches": [_batch(60 + k, 8, 16) for k in range(3)]}
    exec(text, names)  # fixed strings above, never the reader's
    assert watch.refs, say("the snippet did not run the model",
                           "스니펫이 모델을 실행하지 않았습니다")
    return watch.alive() > 0  # `names` (the snippet's variables) is still alive here


def exercise_2(answer) -> Verdict:
    """Which snippets, once finished, still hold saved tensors alive?"""
    if answer is None:
        return unanswered(say("set `answer` to the set of labels that keep saved tensors "
                              "alive, e.g. {'A', 'B'}",
                              "`answer`에 저장된 텐서를 살려 두는 스니펫의 레이블 집합을 넣고 이 "
                              "셀을 다시 실행하세요. 예: {'A', 'B'}"))
    chosen, hint = read_labels(answer, SNIPPETS)
    if hint:
        return not_yet(hint)
    keepers = {label for label, text in SNIPPETS.items() if _holds_saved_tensors(text)}
    if chosen != keepers:
        return not_yet(look_again())
    return correct(say(f"{', '.join(sorted(keepers))} keep saved tensors alive: they live as long "
                       "as a tensor you hold reaches their graph and no backward() dropped them. "
                       "A: eval() does not turn off graph building; C: the last `loss` was "
                       "backpropagated with retain_graph=True; E: `total` reaches every batch's "
                       "graph; F: `loss` still names the last batch's loss, and so its graph "
                       "(only what was added to `total` was detached); "
                       "B: backward() freed them although `losses` holds the tensors; "
                       "D: no_grad() built none.",
                       f"{', '.join(sorted(keepers))}가 저장된 텐서를 살려 둡니다. 여러분이 가진 "
                       "텐서가 그래프에 닿아 있고 그 그래프의 저장된 텐서를 버린 backward()가 "
                       "없는 한, 저장된 텐서는 살아 있습니다. A: eval()은 그래프 생성을 끄지 "
                       "않습니다. C: 마지막 `loss`에 retain_graph=True로 backward()를 "
                       "호출했습니다. E: `total`이 모든 배치의 그래프에 닿아 있습니다. "
                       "F: `loss`는 아직 마지막 배치의 손실을 가리키므로 그 그래프도 붙잡고 있습니다"
                       "(detach한 것은 `total`에 더한 값뿐입니다). "
                       "B: `losses`가 텐서를 붙잡고 있어도 backward()가 저장된 텐서를 해제했습니다. "
                       "D: no_grad()는 그래프를 하나도 만들지 않았습니다."))


# Exercise 3: fix `evaluate`, which returns the average loss and the predictions, and leaks.

def _exercise_3_setup():
    """A model with Dropout, so that its results depend on `model.eval()`: as the lesson's
    section 3 shows, eval() and no_grad() do different jobs, and the fix needs both."""
    model = fresh(lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.5),
                                        nn.Linear(32, 1)), seed=11)
    batches = [(_batch(20 + k, 8, 16), _batch(40 + k, 8, 1)) for k in range(4)]
    return model, batches


def _activations_in(model) -> int:
    """How many activation modules a forward pass through `model` runs (each records once)."""
    return sum(isinstance(module, ACTIVATIONS) for module in model.modules())


def _dropout_modes(model) -> list:
    """A list that gets, each time a Dropout of `model` runs, whether it was in training mode."""
    modes = []
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.register_forward_pre_hook(lambda module, inputs: modes.append(module.training))
    return modes


def _exercise_3_expected():
    """The leaky version's results, worked out in eval mode under torch.no_grad()."""
    model, batches = _exercise_3_setup()
    model.eval()
    with torch.no_grad():
        outputs = [model(x) for x, _ in batches]
        losses = [nn.functional.mse_loss(out, y).item() for out, (_, y) in zip(outputs, batches)]
    return sum(losses) / len(losses), torch.cat(outputs), losses


def _graph_holders(result) -> list:
    """Which of the returned values is a tensor with a graph."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return [say("a tensor", "텐서")] if _has_graph(result) else []
    names = (say("the average loss", "평균 손실"), say("the predictions", "예측값"))
    return [name for name, value in zip(names, result) if _has_graph(value)]


def _has_graph(value) -> bool:
    return isinstance(value, torch.Tensor) and value.grad_fn is not None


def _run_evaluation(answer, model, batches):
    """Call the reader's function; return (result, problem): problem is a hint or None."""
    grad_mode = torch.is_grad_enabled()
    try:  # on a forked RNG: a Dropout left in training mode draws from it
        with torch.random.fork_rng(devices=[]), watch_backward_calls() as calls:
            result = answer(model, batches)
    except Exception as error:  # the reader's code: report it, don't crash the cell
        return None, raised(error)
    finally:
        grad_mode_changed = torch.is_grad_enabled() != grad_mode
        torch.set_grad_enabled(grad_mode)  # the notebook's cells after this one need it
    if grad_mode_changed:
        return None, say("your function left gradient tracking switched off for the code after "
                         "it; a `with` block switches it back on when it ends",
                         "함수가 끝난 뒤의 코드에서도 변화도 추적이 꺼진 채로 남았습니다. "
                         "`with` 블록을 쓰면 블록이 끝날 때 다시 켜집니다")
    if not all(p.requires_grad for p in model.parameters()):
        return None, say("your function switched off requires_grad on the model's parameters: "
                         "the model could no longer be trained; leave the model as it is",
                         "함수가 모델 매개변수의 requires_grad를 껐습니다. 그러면 모델을 더는 "
                         "학습시킬 수 없습니다. 모델은 그대로 두세요")
    if calls or any(p.grad is not None for p in model.parameters()):
        return None, say("your function ran a backward pass or set the model's .grad: an "
                         "evaluation needs no gradients, and must leave .grad alone",
                         "함수가 역전파 단계를 실행했거나 모델의 .grad를 설정했습니다. 평가에는 "
                         "변화도가 필요 없으니 .grad는 건드리지 마세요")
    return result, None


def _check_results(result, expected_average, expected_predictions, losses):
    """A hint about the returned values, or None if they are the leaky version's."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return say(f"your function returned {kind(result)}; return two things, as evaluate "
                   "does: the average loss, then the predictions",
                   f"함수가 {kind(result)}를 반환했습니다. evaluate처럼 평균 손실과 예측값을 이 "
                   "순서로 반환하세요")
    average, predictions = result
    value = as_number(average)
    if value is None:
        return say(f"the average loss should be one number; your function returned "
                   f"{kind(average)}",
                   f"평균 손실은 숫자 하나여야 하는데, 함수가 {kind(average)}를 반환했습니다")
    if not close(value, expected_average):
        if close(value, sum(losses)):
            return say("that average loss is the total over the batches; divide by len(batches)",
                       "그 평균 손실은 모든 배치의 합계입니다. len(batches)로 나누세요")
        if close(value, losses[-1]):
            return say("that average loss is the last batch's alone; add up every batch's loss",
                       "그 평균 손실은 마지막 배치의 손실뿐입니다. 모든 배치의 손실을 더하세요")
        return say("the average loss is not the leaky version's: keep its arithmetic, the mean "
                   "of the batches' mse_loss",
                   "평균 손실이 누수가 있는 원래 버전의 값과 다릅니다. 계산은 원래대로 배치별 "
                   "mse_loss의 평균으로 두세요")
    if not isinstance(predictions, torch.Tensor):
        return say(f"the predictions should be one tensor, every batch's output in order, as "
                   f"torch.cat makes it; got {kind(predictions)}",
                   f"예측값은 torch.cat으로 만든 것처럼 모든 배치의 출력을 차례대로 이은 "
                   f"텐서 하나여야 하는데 {kind(predictions)}가 왔습니다")
    if tuple(predictions.shape) != tuple(expected_predictions.shape):
        return say(f"the predictions should have shape {tuple(expected_predictions.shape)}, "
                   f"every batch's output in order; got {tuple(predictions.shape)}",
                   "예측값의 shape가 맞지 않습니다. 모든 배치의 출력을 차례대로 이은 shape는 "
                   f"{tuple(expected_predictions.shape)}인데, 받은 것은 "
                   f"{tuple(predictions.shape)}입니다")
    if not close(predictions, expected_predictions):
        return say("the predictions are not the model's outputs for the batches, in order",
                   "예측값이 배치별 모델 출력을 차례대로 이은 것과 다릅니다")
    return None


def exercise_3(answer) -> Verdict:
    """A function(model, batches) -> (average loss, predictions) that keeps no graph alive."""
    if answer is None:
        return unanswered(say("set `answer` to your function, e.g. `answer = evaluate_fixed`",
                              "`answer`에 작성한 함수를 넣고 이 셀을 다시 실행하세요. 예: "
                              "`answer = evaluate_fixed`"))
    if not callable(answer):
        return not_yet(say(f"expected a function taking (model, batches), like "
                           f"`def evaluate_fixed(model, batches): ...`; got {kind(answer)}",
                           f"`def evaluate_fixed(model, batches): ...`처럼 (model, batches)를 "
                           f"받는 함수가 와야 하는데 {kind(answer)}가 왔습니다"))
    expected_average, expected_predictions, losses = _exercise_3_expected()
    model, batches = _exercise_3_setup()
    watch, dropout_modes = _ActivationWatch(model), _dropout_modes(model)
    result, problem = _run_evaluation(answer, model, batches)
    if problem:
        return not_yet(problem)
    if not watch.refs:
        return not_yet(say("your function never ran the model: call model(x) for every (x, y) "
                           "in batches",
                           "함수가 모델을 한 번도 실행하지 않았습니다. batches의 모든 (x, y)에 "
                           "대해 model(x)를 호출하세요"))
    runs = len(watch.refs) // _activations_in(model)
    if runs < len(batches):  # fewer runs than batches: some results did not come from the model
        return not_yet(say(f"your function ran the model {runs} time(s) for {len(batches)} batches: "
                           "run it on each batch's inputs and use what it returns",
                           f"배치는 {len(batches)}개인데 모델을 {runs}번 실행했습니다. 배치마다 "
                           "그 입력으로 한 번씩 실행하고, 그 결과를 쓰세요"))
    alive = watch.alive()  # `result` is still held here, as a caller would hold it
    if alive:
        holders = _graph_holders(result)
        if holders:
            # Korean: "평균 손실과 예측값" (손실 ends in a consonant, so 과)
            return not_yet(say(f"your function returns {' and '.join(holders)} with a graph "
                               f"still attached, keeping {alive} of the {len(batches)} batches' "
                               "activations alive",
                               f"함수가 반환하는 {'과 '.join(holders)}에 그래프가 아직 붙어 "
                               f"있어서, 배치 {len(batches)}개 중 {alive}개의 활성값이 살아 "
                               "있습니다"))
        return not_yet(say(f"once your function has returned, {alive} batch(es) of activations "
                           "are still alive: is a tensor with a graph kept outside it?",
                           f"함수가 끝난 뒤에도 배치 {alive}개분의 활성값이 살아 있습니다. "
                           "그래프가 붙은 텐서를 함수 밖에 보관하고 있지 않나요?"))
    holders = _graph_holders(result)
    if holders:
        return not_yet(say(f"your function returns {' and '.join(holders)} with a graph still "
                           "attached (a grad_fn): return results without one",
                           f"함수가 반환하는 {'과 '.join(holders)}에 그래프(grad_fn)가 아직 붙어 "
                           "있습니다. 그래프가 없는 결과를 반환하세요"))
    piled_up = max(watch.alive_at_forward)
    if piled_up > 1:
        return not_yet(say(f"nothing is left once your function returns, but while it runs the "
                           f"graphs pile up: when a batch ran, {piled_up} earlier batches' "
                           "activations were still alive; don't let the graphs accumulate",
                           "함수가 끝난 뒤에는 남는 것이 없지만, 실행되는 동안 그래프가 "
                           f"쌓입니다. 어떤 배치가 실행될 때 앞선 배치 {piled_up}개의 활성값이 "
                           "아직 살아 있었습니다. 그래프가 쌓이지 않게 하세요"))
    if any(dropout_modes):
        return not_yet(say("your function ran the model in training mode, where the checker's "
                           "model's Dropout zeroes activations at random: evaluate's results "
                           "depend on eval mode; keep model.eval()",
                           "함수가 모델을 학습 모드로 실행했습니다. 학습 모드에서는 채점기 모델의 "
                           "Dropout이 활성값을 무작위로 0으로 만듭니다. evaluate의 결과는 평가 "
                           "모드에 달려 있으니 model.eval()을 그대로 두세요"))
    hint = _check_results(result, expected_average, expected_predictions, losses)
    if hint:
        return not_yet(hint)
    if piled_up:  # a graph per batch, each dropped when the next batch's names replaced it
        return correct(say(f"average loss {expected_average:.4f} and the "
                           f"{len(expected_predictions)} predictions, with at most one earlier "
                           "batch's graph alive while the next one ran, and none once your "
                           "function returned (under torch.no_grad() there would be none at all).",
                           f"평균 손실 {expected_average:.4f}, 예측값 "
                           f"{len(expected_predictions)}개. 다음 배치가 실행될 때 살아 있던 이전 "
                           "배치의 그래프는 많아야 하나였고, 함수가 끝난 뒤에는 하나도 "
                           "없습니다(torch.no_grad() 안에서라면 처음부터 하나도 없었을 "
                           "것입니다)."))
    return correct(say(f"average loss {expected_average:.4f} and the {len(expected_predictions)} "
                       "predictions, with no earlier batch's activations alive while the next one "
                       "ran, and none once your function returned.",
                       f"평균 손실 {expected_average:.4f}, 예측값 {len(expected_predictions)}개. "
                       "다음 배치가 실행될 때 이전 배치의 활성값은 하나도 살아 있지 않았고, "
                       "함수가 끝난 뒤에도 하나도 없습니다."))
