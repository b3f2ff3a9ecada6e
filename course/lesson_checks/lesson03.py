"""Check cells for lesson 03, gradient accumulation.

exercise_1: predict `w.grad`, and `g` taken from it before `w.grad = None`, after three
backward() calls.
exercise_2: which normalisation layers keep "micro-batches add up to the full batch".
exercise_3: an accumulation function for micro-batches of unequal sizes.

Each checker works out the right answer by running PyTorch, never from a stored key,
and leaves the reader's random state alone (models and data come from seeded set-ups).
"""
import weakref

import torch
from torch import nn
from torch.nn import functional as F

from .answers import as_float_tensor, close, hint_for_unknown_labels, kind, labels, raised
from .language import say
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


def _run_the_calls():
    """Each call's own gradient, and w.grad and g after the exercise's code: call 1,
    g = w.grad, w.grad = None, calls 2 and 3."""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    with torch.enable_grad():
        own = [torch.autograd.grad(loss, w)[0] for loss in _losses(w)]
        first, second, third = _losses(w)
        first.backward()
        g = w.grad
        w.grad = None
        second.backward()
        third.backward()
    return own, w.grad, g


def _pair(answer):
    """The reader's (w.grad, g) as a 2 × 2 tensor of finite numbers, or None."""
    values = as_float_tensor(answer)
    if values is None and isinstance(answer, (list, tuple)) and len(answer) == 2:
        parts = [as_float_tensor(part) for part in answer]  # e.g. (w.grad, g), two tensors
        if all(part is not None and part.shape == (2,) for part in parts):
            values = torch.stack(parts)
    if values is None or values.shape != (2, 2) or not torch.isfinite(values).all():
        return None
    return values


def _the_wrong_item(answer):
    """For a pair with exactly one item that is not two finite numbers: which item, and
    what it is; None otherwise."""
    if not isinstance(answer, (list, tuple)) or len(answer) != 2:
        return None
    wrong = []
    for position, name, part in ((say("first", "첫 번째"), "w.grad", answer[0]),
                                 (say("second", "두 번째"), "g", answer[1])):
        values = as_float_tensor(part)
        if part is None:
            wrong.append((position, name, say("is None", "이 None입니다")))
        elif values is None:
            wrong.append((position, name, say(f"is {kind(part)}", f"은 {kind(part)}입니다")))
        elif values.shape != (2,):
            shape = tuple(values.shape)
            wrong.append((position, name, say(f"has shape {shape}", f"은 shape가 {shape}입니다")))
        elif not torch.isfinite(values).all():
            wrong.append((position, name, say("holds a value that is not a finite number",
                                              "에 유한한 수가 아닌 값이 있습니다")))
    return wrong[0] if len(wrong) == 1 else None


def _what_was_given(answer):
    values = as_float_tensor(answer)
    if values is None:
        return kind(answer)
    if values.shape == (2, 2):
        return say("a value that is not a finite number", "유한한 수가 아닌 값")
    return say(f"numbers of shape {tuple(values.shape)}", f"shape가 {tuple(values.shape)}인 수")


def _w_grad_hint(value, own):
    """What is wrong with the reader's w.grad; None if it is right."""
    if close(value, own[1] + own[2]):
        return None
    if close(value, sum(own)):
        return say("w.grad: call 1's gradient is in your answer; what did w.grad = None do "
                   "to what .grad held?",
                   "w.grad: 답에 호출 1의 변화도가 들어 있습니다. w.grad = None은 .grad가 "
                   "가지고 있던 것을 어떻게 했을까요?")
    for k, alone in enumerate(own, start=1):
        if close(value, alone):
            return say(f"w.grad: that is the gradient of call {k}, {CALLS[k - 1]}, alone; which "
                       "calls since w.grad = None have added into .grad?",
                       f"w.grad: 답한 값은 호출 {k}, 즉 {CALLS[k - 1]}의 변화도 하나뿐입니다. "
                       "w.grad = None 이후 어느 호출들이 .grad에 더했을까요?")
    if close(value, (own[1] + own[2]) / 2):
        return say("w.grad: that is the average of calls 2 and 3; does backward() average "
                   "with what .grad holds?",
                   "w.grad: 호출 2와 3의 평균입니다. backward()가 .grad에 있는 값과 평균을 "
                   "낼까요?")
    if close(value, own[1] + 2 * own[2]):
        return say("w.grad: call 3 takes a mean over w's 2 elements, not a sum",
                   "w.grad: 호출 3은 w의 원소 2개에 대해 합이 아니라 평균을 구합니다")
    return say("w.grad: work out each call's gradient at w = [1, -2] on its own, then combine "
               "those that reach .grad after w.grad = None as backward() does; mind that call 3 "
               "takes a mean",
               "w.grad: w = [1, -2]에서 각 호출의 변화도를 따로 구한 다음, w.grad = None 뒤에 "
               ".grad에 닿는 것들을 backward()가 하는 대로 합치세요. 호출 3은 평균을 구한다는 "
               "점에 주의하세요")


def _g_hint(value, own, w_grad):
    """What is wrong with the reader's g; None if it is right."""
    if close(value, own[0]):
        return None
    if close(value, w_grad) or close(value, sum(own)):
        return say("g: g = w.grad gave a name to the tensor .grad held after call 1; after "
                   "w.grad = None, do calls 2 and 3 add into that tensor?",
                   "g: g = w.grad는 호출 1 뒤에 .grad가 가지고 있던 텐서에 이름을 붙였습니다. "
                   "w.grad = None 뒤에도 호출 2와 3이 그 텐서에 더할까요?")
    if close(value, torch.zeros(2)):
        return say("g: w.grad = None changes what w.grad refers to; does it change the tensor "
                   "g refers to?",
                   "g: w.grad = None은 w.grad가 가리키는 것을 바꿉니다. g가 가리키는 텐서도 "
                   "바꿀까요?")
    return say("g: g is what w.grad held right after call 1: work out call 1's gradient at "
               "w = [1, -2]",
               "g: g는 호출 1 직후 w.grad가 가지고 있던 것입니다. w = [1, -2]에서 호출 1의 "
               "변화도를 구하세요")


def exercise_1(answer) -> Verdict:
    """answer: (w.grad, g) after the calls, as two lists of two numbers."""
    if answer is None:
        return unanswered(say("replace None with (w.grad, g) after the calls, as two lists of "
                              "two numbers, e.g. ([0.0, 0.0], [0.0, 0.0])",
                              "`answer`에 호출들이 끝난 뒤의 (w.grad, g)를 수 두 개짜리 리스트 두 개로 "
                              "넣고 이 셀을 다시 실행하세요. 예: ([0.0, 0.0], [0.0, 0.0])"))
    values = _pair(answer)
    wrong_item = _the_wrong_item(answer) if values is None else None
    if wrong_item:
        position, name, what = wrong_item
        return not_yet(say(f"the {position} item {what}; give {name} as two numbers: (w.grad, g) "
                           "as two lists of two numbers, e.g. ([0.0, 0.0], [0.0, 0.0])",
                           f"{position} 항목{what}. {name}를 수 두 개로 주세요. (w.grad, g)는 "
                           "수 두 개짜리 리스트 두 개입니다. 예: ([0.0, 0.0], [0.0, 0.0])"))
    if values is None:
        return not_yet(say("give (w.grad, g) as two lists of two numbers, e.g. "
                           "([0.0, 0.0], [0.0, 0.0]) (w has two elements, so each gradient has "
                           f"two); got {_what_was_given(answer)}",
                           "w의 원소가 두 개이므로 (w.grad, g)를 수 두 개짜리 리스트 두 개로 "
                           "주세요. 예: ([0.0, 0.0], [0.0, 0.0]). 받은 것: "
                           f"{_what_was_given(answer)}"))
    own, w_grad, g = _run_the_calls()
    given_w_grad, given_g = values
    if close(given_w_grad, g) and close(given_g, w_grad):
        return not_yet(say("the two are the other way round: answer (w.grad, g)",
                           "두 값의 순서가 바뀌었습니다. (w.grad, g) 순서로 답하세요"))
    hints = [hint for hint in (_w_grad_hint(given_w_grad, own), _g_hint(given_g, own, w_grad))
             if hint]
    if hints:
        # each hint but the last ends as a sentence ("?" or "."), then a space
        return not_yet(" ".join([h if h.endswith("?") else h + "." for h in hints[:-1]]
                                + hints[-1:]))
    parts = " + ".join(str(gradient.tolist()) for gradient in own[1:])
    return correct(say(f"w.grad = {parts} = {w_grad.tolist()}: w.grad = None let call 2 start "
                       f"a new tensor; g = {g.tolist()} still names call 1's, which no later "
                       "backward() adds into",
                       f"w.grad = {parts} = {w_grad.tolist()}: w.grad = None 뒤에 호출 2가 새 "
                       f"텐서를 만들었습니다. g = {g.tolist()}은 여전히 호출 1의 텐서를 "
                       "가리키고, 그 뒤의 backward()는 거기에 더하지 않습니다"))


# Exercise 2 ---------------------------------------------------------------

N_SAMPLES_2, N_MICRO_2 = 64, 4

# label: (the layer between the two Linear layers, the mode the model is put in)
LAYERS = {
    "A": (lambda: nn.BatchNorm1d(4), "eval"),
    "B": (lambda: nn.LayerNorm(4), "train"),
    "C": (lambda: nn.BatchNorm1d(4, affine=False), "train"),
    "D": (lambda: nn.BatchNorm1d(4, track_running_stats=False), "eval"),
}


EXAMPLE_2 = '{"A", "D"}'  # the example the lesson and every message show


def _how_to_decide() -> str:
    """The hint for any wrong set: the reasoning that sorts the layers, the same words
    whichever labels are on the wrong side, so that it gives no label's verdict away."""
    return say("for each layer, in the mode the model runs in, ask which mean and variance "
               "it normalises a sample with: the sample's own, averages kept from training, "
               "or those of the batch it is given; a layer breaks the equality when a "
               "sample's output depends on the other samples of its micro-batch",
               "계층마다, 모델이 실행되는 모드에서 한 샘플을 어떤 평균과 분산으로 정규화하는지 "
               "따져 보세요. 그 샘플 자신의 것인지, 학습 중에 모아 둔 이동 평균인지, 입력으로 "
               "받은 배치의 것인지 말입니다. 한 샘플의 출력이 같은 마이크로 배치에 든 다른 샘플에 "
               "따라 달라지는 계층이 등식을 깨뜨립니다")


def _model_with(label):
    make_layer, mode = LAYERS[label]
    model = fresh(lambda: nn.Sequential(nn.Linear(3, 4), make_layer(), nn.Linear(4, 1)), seed=0)
    return model.train(mode == "train")


def keeps_the_equality(label) -> bool:
    """Run it: do 4 micro-batches, each loss scaled by 1/4, give the full batch's gradient?"""
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
        return unanswered(say('replace None with the set of labels whose layer keeps the '
                              f'equality, e.g. {EXAMPLE_2}, or set() for none',
                              "`answer`에 등식을 지키는 계층의 레이블 집합을 넣고 이 셀을 다시 "
                              f"실행하세요. 예: {EXAMPLE_2}. 하나도 없으면 set()입니다"))
    given = labels(answer)
    if given is None:  # the example is the lesson's own, a set that is not the key
        return not_yet(say(f'expected a set of labels such as {EXAMPLE_2}; got {kind(answer)}',
                           f'{EXAMPLE_2} 같은 레이블 집합(set)이 와야 하는데 '
                           f'{kind(answer)}가 왔습니다'))
    hint = hint_for_unknown_labels(given, LAYERS)
    if hint:
        return not_yet(hint)
    keeps = {label for label in LAYERS if keeps_the_equality(label)}
    if given == keeps:
        breaks = sorted(set(LAYERS) - keeps)
        return correct(say(f"{' and '.join(sorted(keeps))} treat each sample on its own; "
                           f"{' and '.join(breaks)} normalise each micro-batch with its own "
                           "mean and variance",
                           f"{', '.join(sorted(keeps))}: 각 샘플을 따로 다룹니다. "
                           f"{', '.join(breaks)}: 각 마이크로 배치를 그 배치 자신의 평균과 "
                           "분산으로 정규화합니다"))
    return not_yet(_how_to_decide())


# Exercise 3 ---------------------------------------------------------------

N_SAMPLES_3 = 50  # 4 and 3 do not divide it: the micro-batches differ in size
N_MICRO_TRIED = (4, 3)


def _fresh_linear():
    return fresh(lambda: nn.Linear(3, 1), seed=0)


def _full_batch_grads(X, y):
    model = _fresh_linear()
    return _grads(lambda: F.mse_loss(model(X), y), model)


class _Saved:
    """What the checker's pack hook stores for one saved tensor: it lives exactly as long
    as the graph keeps that saved tensor (a backward that frees it lets the box go)."""
    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor):
        self.tensor = tensor


def _run_reader_function(function, X, y, n_micro):
    """Run the reader's function on a model holding stale grads; record what it did: the
    model's inputs, the gradient each backward call brought to the weight and to the bias,
    how many times backward added into the weight's .grad, whether an earlier
    micro-batch's graph still held saved tensors when a forward pass began (every graph
    alive at once: no memory saved), .grad as the last backward call left it, and whether
    a gradient was written into .grad before a backward call added to it."""
    model = _fresh_linear()
    with torch.enable_grad():  # gradients left over from an earlier step
        F.mse_loss(model(3 * X[:5]), y[:5]).backward()
    stale = [p.grad.clone() for p in model.parameters()]
    inputs, weight_grads, bias_grads, saved, overlaps, added = [], [], [], [], [], []

    def before_forward(module, args):
        overlaps.append(any(box() is not None for box in saved))
        inputs.append(args[0] if args else None)

    def pack(tensor):
        box = _Saved(tensor)
        saved.append(weakref.ref(box))
        return box

    model.register_forward_pre_hook(before_forward)
    model.weight.register_hook(lambda grad: weight_grads.append(grad.detach().clone()))
    model.bias.register_hook(lambda grad: bias_grads.append(grad.detach().clone()))
    # runs only when backward adds into .grad, not for torch.autograd.grad
    model.weight.register_post_accumulate_grad_hook(lambda weight: added.append(True))
    # .grad as the last backward call left it, to compare with .grad once the function ends
    left = {}
    for name, parameter in (("weight", model.weight), ("bias", model.bias)):
        parameter.register_post_accumulate_grad_hook(
            lambda p, name=name: left.__setitem__(name, p.grad.detach().clone()))
    # .grad just before each backward call adds into it (a tensor hook on a leaf runs
    # before the adding): None, zeros or the stale gradient before the first, and
    # what the previous call left (up to a factor) before a later one, unless written in
    written = []

    def check_before(name, parameter, stale_grad):
        def hook(grad):
            held = parameter.grad
            if held is None or close(held, torch.zeros_like(held)):
                return
            previous = left.get(name)
            if previous is None:
                written.append(not close(held, stale_grad))
            else:
                a, b = held.detach().double().flatten(), previous.double().flatten()
                written.append(b.norm() == 0 or not close(a, (a @ b) / (b @ b) * b))
        parameter.register_hook(hook)

    for (name, parameter), stale_grad in zip((("weight", model.weight), ("bias", model.bias)),
                                             stale):
        check_before(name, parameter, stale_grad)
    with seeded(0), torch.enable_grad(), watch_backward_calls() as calls, \
            torch.autograd.graph.saved_tensors_hooks(pack, lambda box: box.tensor):
        function(model, X, y, n_micro)
    sizes = [len(x) if isinstance(x, torch.Tensor) and x.dim() > 0 else 0 for x in inputs]
    reached = {"weight": weight_grads, "bias": bias_grads}
    return (model, stale, inputs, sizes, len(calls), reached, len(added), any(overlaps), left,
            any(written))


def _rows_of(X, inputs):
    """For each input the model got, the indices of its rows in X; None if some row of
    some input is not a row of X."""
    found = []
    for x in inputs:
        if not isinstance(x, torch.Tensor) or x.dim() != 2 or x.shape[1] != X.shape[1]:
            return None
        match = (x.detach()[:, None, :] == X[None]).all(-1)
        if not bool(match.any(1).all()):
            return None
        found.append(match.float().argmax(1))
    return found


def _same_direction(a, b):
    """a = c·b for some c ≠ 0 (a micro-batch's loss may be scaled any way)."""
    a, b = a.flatten().double(), b.flatten().double()
    if a.norm() == 0 or b.norm() == 0:
        return False
    a, b = a / a.norm(), b / b.norm()
    return close(a, b) or close(a, -b)


def _backward_not_its_own(X, y, rows, reached):
    """The first backward call (1, 2, ...) whose gradient is not, up to a factor, the
    gradient of the mean loss over the rows its micro-batch's forward took (e.g. a
    backward through the full batch after a forward on a micro-batch); None if all are."""
    names = [name for name in ("weight", "bias") if len(reached[name]) == len(rows)]
    for k, index in enumerate(rows):
        model = _fresh_linear()
        own = _grads(lambda: F.mse_loss(model(X[index]), y[index]), model)
        own = dict(zip(("weight", "bias"), own))
        if not _same_direction(torch.cat([reached[n][k].flatten() for n in names]),
                               torch.cat([own[n].flatten() for n in names])):
            return k + 1
    return None


def _came_from_backward(final, stale, reached):
    """Is the weight's final .grad what the reader's backward calls put there: the sum of
    the gradients that reached it from some call on (.grad cleared in the loop), with or
    without the stale gradient, up to one factor (a sum of losses divided afterwards)?
    A gradient written in by hand after backward calls that computed something else is not."""
    for start in range(len(reached)):
        total = sum(reached[start:])
        for candidate in (total, stale + total):
            factor = (final * candidate).sum() / (candidate * candidate).sum()
            # a factor of 0 would pass for any .grad of zeros, e.g. one zeroed after the calls
            if torch.isfinite(factor) and abs(factor) > 1e-3 and close(final, factor * candidate):
                return True
    return False


def _changed_after_backward(model, left):
    """Did the function change a parameter's .grad after its last backward call, other than
    by scaling it (a division of a summed loss is fine; subtracting the stale gradient,
    or writing another tensor in, is not)?"""
    finals = [getattr(model, name).grad for name in left]
    if any(final is None for final in finals):
        return False  # reported on its own
    # one factor for all the parameters together: a bias alone is one number, a multiple
    # of any other
    final = torch.cat([f.detach().double().flatten() for f in finals])
    last = torch.cat([t.double().flatten() for t in left.values()])
    if close(last, torch.zeros_like(last)):
        return not close(final, last)
    factor = (final @ last) / (last @ last)
    return not close(final, factor * last)


def _holds_some_of(grads, candidate, stale):
    """Are `grads` the candidate plus the stale gradients of some or all of the parameters
    (left in .grad where the reader did not clear it, all scaled by one factor when a sum
    is divided afterwards)?"""
    factors = []
    for g, c, s in zip(grads, candidate, stale):
        leftover, s = (g - c).flatten().double(), s.flatten().double()
        if close(leftover, torch.zeros_like(leftover)):
            continue  # this parameter's stale gradient was cleared
        factor = (leftover @ s) / (s @ s)
        if not (abs(factor) > 1e-3 and close(leftover, factor * s)):
            return False
        factors.append(factor)
    return bool(factors) and all(close(f, factors[0]) for f in factors)


def _wrong_ways(X, y, sizes, expected):
    """(gradients, hint) for the usual mistakes, worked out by running them on the
    micro-batches the reader's function used (taken as consecutive pieces of X)."""
    model = _fresh_linear()
    own = [_grads(lambda: F.mse_loss(model(X_k), y_k), model)
           for X_k, y_k in zip(X.split(sizes), y.split(sizes))]

    def weighted(weights, pieces=own):
        return [sum(w * g[i] for w, g in zip(weights, pieces)) for i in range(len(expected))]

    n, total = len(sizes), sum(sizes)
    last_only = say("only the last micro-batch's gradient is left in .grad: "
                    "what clears it in the loop?",
                    ".grad에 마지막 마이크로 배치의 변화도만 남아 있습니다. 루프 안에서 무엇이 "
                    ".grad를 비우고 있을까요?")
    return [
        (weighted([1 / n] * n),
         say(f"each micro-batch counts 1/{n}, but they hold {sizes} samples: "
             "a sample in a smaller one counts more than in the full batch's mean",
             f"마이크로 배치마다 1/{n}을 곱했지만, 마이크로 배치들의 샘플 수는 {sizes}입니다. "
             "작은 마이크로 배치에 든 샘플은 전체 배치의 평균에서보다 더 큰 비중을 갖게 "
             "됩니다")),
        (weighted([1] * n),
         say(f"unscaled, the {n} micro-batch means add up to about {n} times the "
             "full batch's mean: scale each micro-batch loss by its share",
             f"스케일을 맞추지 않으면 마이크로 배치 {n}개의 평균을 더한 값이 전체 배치 "
             f"평균의 약 {n}배가 됩니다. 각 마이크로 배치의 손실에 그 몫을 곱하세요")),
        ([total * g for g in expected],
         say(f"your gradients are {total} times the full batch's: "
             "a sum of squared errors where the full batch takes their mean",
             f"변화도가 전체 배치의 {total}배입니다. 전체 배치는 오차 제곱의 평균을 쓰는데, "
             "오차 제곱의 합을 썼습니다")),
        (weighted([sizes[-1] / total], own[-1:]), last_only),
        (weighted([1 / n], own[-1:]), last_only),
        (weighted([1], own[-1:]), last_only),
    ]


def exercise_3(answer) -> Verdict:
    """answer: a function accumulate(model, X, y, n_micro) that fills each parameter's .grad."""
    if answer is None:
        return unanswered(say("replace None with your function accumulate(model, X, y, n_micro)",
                              "`answer`에 직접 작성한 함수 accumulate(model, X, y, n_micro)를 "
                              "넣고 이 셀을 다시 실행하세요"))
    if not callable(answer):
        return not_yet(say("answer should be a function accumulate(model, X, y, n_micro) "
                           "(def accumulate(...): ..., then answer = accumulate); "
                           f"got {kind(answer)}",
                           "`answer`에는 함수 accumulate(model, X, y, n_micro)가 와야 하는데 "
                           f"{kind(answer)}가 왔습니다. def accumulate(...): ...로 정의한 뒤 "
                           "answer = accumulate로 넣으세요"))
    X, y = _regression_data(N_SAMPLES_3, seed=5)
    for n_micro in N_MICRO_TRIED:
        try:
            model, stale, inputs, sizes, backwards, reached, added, overlapping, left, \
                written = _run_reader_function(answer, X, y, n_micro)
        except Exception as error:  # the reader's code: report, do not crash
            return not_yet(say(f"{raised(error)} (called with n_micro={n_micro} on "
                               f"{N_SAMPLES_3} samples)",
                               f"{raised(error)} (샘플 {N_SAMPLES_3}개에 n_micro={n_micro}로 "
                               "호출했을 때)"))
        if len(sizes) != n_micro or min(sizes, default=0) < 1 or sum(sizes) != N_SAMPLES_3:
            # the checker sees a forward pass only as a call to model(...): say so when it
            # saw none (a forward written with F.linear on model.weight, say)
            unseen = say("; a forward pass counts only as a call to model(...) on a "
                         "micro-batch", ". 채점기는 마이크로 배치로 model(...)을 호출한 것만 "
                         "순전파로 셉니다") if not sizes else ""
            on_sizes = say(f", on inputs of sizes {sizes}",
                           f"(입력 크기 {sizes})") if sizes else ""
            return not_yet(say(f"with n_micro={n_micro}, expected {n_micro} forward passes, "
                               f"calls to model(...), on micro-batches that together hold the "
                               f"{N_SAMPLES_3} samples; model(...) was called {len(sizes)} "
                               f"time(s){on_sizes}{unseen}",
                               f"n_micro={n_micro}일 때는 샘플 {N_SAMPLES_3}개를 나누어 담은 "
                               f"마이크로 배치들에 대해 순전파, 즉 model(...) 호출이 모두 {n_micro}번 "
                               f"있어야 합니다. 실제 model(...) 호출은 {len(sizes)}번이었습니다"
                               f"{on_sizes}{unseen}"))
        if backwards != n_micro or len(reached["weight"]) != n_micro:
            return not_yet(say(f"with n_micro={n_micro}, expected one backward() per "
                               f"micro-batch, {n_micro} in all, each reaching model.weight; "
                               "backward passes counted (backward() or torch.autograd.grad): "
                               f"{backwards}, of which {len(reached['weight'])} reached "
                               "model.weight",
                               f"n_micro={n_micro}일 때, backward()가 마이크로 배치마다 한 번씩 모두 "
                               f"{n_micro}번 호출되고, 각 호출이 model.weight까지 닿아야 "
                               "합니다. 센 결과: 역전파(backward() 또는 torch.autograd.grad) "
                               f"{backwards}번, 그중 model.weight에 "
                               f"닿은 것 {len(reached['weight'])}번"))
        if overlapping:
            return not_yet(say(f"with n_micro={n_micro}, a forward pass began while an earlier "
                               "micro-batch's graph still held its saved tensors: with every "
                               "graph alive at once, micro-batches save no memory; run each "
                               "micro-batch's backward() before the next forward",
                               f"n_micro={n_micro}일 때, 앞선 마이크로 배치의 그래프가 아직 "
                               "저장된 텐서를 붙잡고 있는 동안 다음 순전파가 시작되었습니다. "
                               "모든 그래프가 한꺼번에 살아 있으면 마이크로 배치로 나누어도 "
                               "메모리가 줄지 않습니다. 다음 순전파 전에 각 마이크로 배치의 "
                               "backward()를 실행하세요"))
        rows = _rows_of(X, inputs)
        if rows is None:
            return not_yet(say(f"with n_micro={n_micro}, the model was given something other "
                               "than rows of X: give it the micro-batches, pieces of X",
                               f"n_micro={n_micro}일 때, 모델이 X의 행이 아닌 입력을 받았습니다. "
                               "X를 나눈 조각인 마이크로 배치를 주세요"))
        not_its_own = _backward_not_its_own(X, y, rows, reached)
        if not_its_own is not None:
            return not_yet(say(f"with n_micro={n_micro}, backward call {not_its_own} did not "
                               "compute the gradient of the micro-batch just run forward: each "
                               "backward() should go through that micro-batch's graph only, not "
                               "through the full batch",
                               f"n_micro={n_micro}일 때, {not_its_own}번째 backward 호출이 방금 "
                               "순전파한 마이크로 배치의 변화도를 계산하지 않았습니다. 각 "
                               "backward()는 전체 배치가 아니라 그 마이크로 배치의 그래프만 "
                               "거쳐야 합니다"))
        if added != n_micro:
            return not_yet(say(f"with n_micro={n_micro}, {added} of your {n_micro} backward "
                               "passes added into .grad: torch.autograd.grad returns a gradient "
                               "without adding it; call backward() and let it add each "
                               "micro-batch's gradient into .grad",
                               f"n_micro={n_micro}일 때, 역전파 {n_micro}번 중 .grad에 "
                               f"더한 것은 {added}번입니다. torch.autograd.grad는 변화도를 "
                               ".grad에 더하지 않고 돌려줍니다. backward()를 호출해 각 마이크로 "
                               "배치의 변화도가 .grad에 더해지게 하세요"))
        grads = [p.grad for p in model.parameters()]
        if any(g is None for g in grads):
            return not_yet(say(f"with n_micro={n_micro}, a parameter's .grad is None "
                               "afterwards",
                               f"n_micro={n_micro}일 때, 함수가 끝난 뒤 어떤 매개변수의 .grad가 "
                               "None입니다"))
        if written or not _came_from_backward(model.weight.grad, stale[0], reached["weight"]):
            return not_yet(say(f"with n_micro={n_micro}, model.weight's .grad is not what your "
                               "backward() calls computed: let them fill .grad, do not write a "
                               "gradient in by hand",
                               f"n_micro={n_micro}일 때, model.weight의 .grad가 backward() 호출들이 "
                               "계산한 값이 아닙니다. .grad는 backward()가 채우게 두고, "
                               "변화도를 손으로 써넣지 마세요"))
        if _changed_after_backward(model, left):
            return not_yet(say(f"with n_micro={n_micro}, your function changed .grad after its "
                               "last backward() call (other than by scaling it): clear .grad "
                               "before the micro-batches rather than correcting it afterwards",
                               f"n_micro={n_micro}일 때, 함수가 마지막 backward() 호출 뒤에 "
                               ".grad를 (스케일하는 것 말고) 바꾸었습니다. 나중에 고치지 "
                               "말고 마이크로 배치를 처리하기 전에 .grad를 비우세요"))
        expected = _full_batch_grads(X, y)
        if _all_close(grads, expected):
            continue
        mistakes = _wrong_ways(X, y, sizes, expected)
        for candidate in [expected] + [wrong for wrong, _ in mistakes]:
            if _holds_some_of(grads, candidate, stale):
                return not_yet(say("the gradients the model held before your function ran "
                                   "are still in .grad, added to yours",
                                   "함수가 실행되기 전에 모델이 가지고 있던 변화도가 아직 "
                                   ".grad에 남아, 새로 계산한 변화도에 더해져 있습니다"))
        for wrong, hint in mistakes:
            if _all_close(grads, wrong):
                return not_yet(say(f"with n_micro={n_micro}: {hint}",
                                   f"n_micro={n_micro}일 때, {hint}"))
        return not_yet(say(f"with n_micro={n_micro} the gradients differ from the full "
                           "batch's: each micro-batch loss is a mean over its own samples; "
                           "what scale makes every sample count as in the mean over all "
                           f"{N_SAMPLES_3}?",
                           f"n_micro={n_micro}일 때, 변화도가 전체 배치의 변화도와 다릅니다. "
                           "각 마이크로 배치의 손실은 그 배치 자신의 샘플들에 대한 평균입니다. "
                           "각 손실에 무엇을 곱해야 모든 샘플이 샘플 "
                           f"{N_SAMPLES_3}개 전체의 평균에서와 같은 비중을 가질까요?"))
    return correct(say(f"for n_micro in {N_MICRO_TRIED} on {N_SAMPLES_3} samples, one "
                       "backward() per micro-batch leaves the full batch's gradient in .grad",
                       f"샘플 {N_SAMPLES_3}개에서 n_micro가 {N_MICRO_TRIED}의 어느 값이든, "
                       "마이크로 배치마다 한 번씩 호출한 backward()가 .grad에 전체 배치의 "
                       "변화도를 남깁니다"))
