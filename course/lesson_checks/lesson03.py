"""Check cells for lesson 03, gradient accumulation.

exercise_1: predict `w.grad` after three backward() calls without zeroing.
exercise_2: which normalisation layers keep "micro-batches add up to the full batch".
exercise_3: an accumulation function for micro-batches of unequal sizes.

Each checker works out the right answer by running PyTorch, never from a stored key,
and leaves the reader's random state alone (models and data come from seeded set-ups).
"""
import torch
from torch import nn
from torch.nn import functional as F

from .answers import as_float_tensor, close, kind, raised, read_labels
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


def _each_call_and_after_all():
    """Each call's own gradient, and w.grad after running the three backward() calls."""
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    with torch.enable_grad():
        own = [torch.autograd.grad(loss, w)[0] for loss in _losses(w)]
        for loss in _losses(w):
            loss.backward()
    return own, w.grad


def _two_numbers(answer):
    """The reader's w.grad as a tensor of two finite numbers, or None."""
    values = as_float_tensor(answer)
    if values is None or values.numel() != 2 or not torch.isfinite(values).all():
        return None
    return values.flatten()


def _what_was_given(answer):
    values = as_float_tensor(answer)
    if values is None:
        return kind(answer)
    if values.numel() == 2:
        return say("a value that is not a finite number", "유한한 수가 아닌 값")
    return say(f"{values.numel()} number(s)", f"수 {values.numel()}개")


def exercise_1(answer) -> Verdict:
    """answer: w.grad after the three calls, as two numbers, e.g. [0.0, 0.0]."""
    if answer is None:
        return unanswered(say("replace None with w.grad after the three calls, "
                              "as a list of two numbers, e.g. [0.0, 0.0]",
                              "None 대신 세 번 호출한 뒤의 w.grad를 두 수의 리스트로 넣으세요. "
                              "예: [0.0, 0.0]"))
    values = _two_numbers(answer)
    if values is None:
        return not_yet(say(f"give w.grad as a list of two numbers, e.g. [0.0, 0.0] (w has two "
                           f"elements, so its gradient has two); got {_what_was_given(answer)}",
                           f"w.grad를 두 수의 리스트로 주세요. 예: [0.0, 0.0] (w의 원소가 두 "
                           f"개이므로 변화도도 두 개입니다). 받은 것: {_what_was_given(answer)}"))
    own, after_all = _each_call_and_after_all()
    if close(values, after_all):
        parts = " + ".join(str(g.tolist()) for g in own)
        return correct(say(f"w.grad = {parts} = {after_all.tolist()}: each backward() adds its "
                           "own gradient to what .grad already holds",
                           f"w.grad = {parts} = {after_all.tolist()}: backward()는 호출될 "
                           "때마다 자기 변화도를 .grad에 이미 있는 값에 더합니다"))
    for k, alone in enumerate(own, start=1):
        if close(values, alone):
            return not_yet(say(f"that is call {k}'s gradient alone ({CALLS[k - 1]}); .grad is "
                               "not overwritten by a later call",
                               f"호출 {k}, 즉 {CALLS[k - 1]}의 변화도뿐입니다. 나중 호출이 "
                               ".grad를 덮어쓰지 않습니다"))
    if close(values, sum(own) / 3):
        return not_yet(say("that is the average of the three gradients; does backward() "
                           "average with what .grad holds?",
                           "세 변화도의 평균입니다. backward()가 .grad에 있는 값과 평균을 "
                           "낼까요?"))
    for k in range(3):
        if close(values, sum(own) - own[k]):
            return not_yet(say(f"call {k + 1}'s gradient is missing from your answer: "
                               "it is in .grad too",
                               f"답에 호출 {k + 1}의 변화도가 빠져 있습니다. 그 변화도도 "
                               ".grad에 들어 있습니다"))
    if close(values, sum(own) + own[2]):
        return not_yet(say("call 3 takes a mean over w's 2 elements, not a sum",
                           "호출 3은 w의 원소 2개에 대해 합이 아니라 평균을 구합니다"))
    return not_yet(say("work out each call's gradient at w = [1, -2] on its own, then combine "
                       "them as backward() does; mind that call 3 takes a mean",
                       "w = [1, -2]에서 각 호출의 변화도를 따로 구한 다음, backward()가 하는 "
                       "대로 합치세요. 호출 3은 평균을 구한다는 점에 주의하세요"))


# Exercise 2 ---------------------------------------------------------------

N_SAMPLES_2, N_MICRO_2 = 64, 4

# label: (the layer between the two Linear layers, the mode the model is put in)
LAYERS = {
    "A": (lambda: nn.BatchNorm1d(4), "eval"),
    "B": (lambda: nn.LayerNorm(4), "train"),
    "C": (lambda: nn.BatchNorm1d(4, affine=False), "train"),
    "D": (lambda: nn.BatchNorm1d(4, track_running_stats=False), "eval"),
}


def _look_again_at(label) -> str:
    """What to look at again, for a label the reader put on the wrong side (made when
    the verdict is, in the language chosen then)."""
    hints = {
        # left out, but it keeps the equality
        "A": say("look again at A: in eval mode, which mean and variance does BatchNorm "
                 "normalise with, and do they depend on the other samples of the micro-batch?",
                 "A를 다시 보세요: 평가 모드의 BatchNorm은 어떤 평균과 분산으로 정규화할까요? "
                 "그 값은 마이크로 배치에 함께 든 다른 샘플에 따라 달라질까요?"),
        "B": say("look again at B: LayerNorm normalises each sample over its own features; "
                 "does a sample's output depend on which micro-batch it is in?",
                 "B를 다시 보세요: LayerNorm은 각 샘플을 그 샘플 자신의 특징들에 대해 "
                 "정규화합니다. 한 샘플의 출력이 그 샘플이 어느 마이크로 배치에 드는지에 따라 "
                 "달라질까요?"),
        # put in, but it breaks the equality
        "C": say("look again at C: affine or not, what does BatchNorm normalise with in "
                 "train mode?",
                 "C를 다시 보세요: affine이든 아니든, 학습 모드의 BatchNorm은 무엇으로 "
                 "정규화할까요?"),
        "D": say("look again at D: a BatchNorm that keeps no running statistics has only one "
                 "mean and variance to normalise with, even in eval mode: which one?",
                 "D를 다시 보세요: 이동 통계를 두지 않는 BatchNorm에는 평가 모드에서도 "
                 "정규화에 쓸 평균과 분산이 한 가지뿐입니다. 어느 것일까요?"),
    }
    return hints.get(label) or say(f"look again at {label}", f"{label}를 다시 보세요")


def _model_with(label):
    make_layer, mode = LAYERS[label]
    model = fresh(lambda: nn.Sequential(nn.Linear(3, 4), make_layer(), nn.Linear(4, 1)), seed=0)
    return model.train(mode == "train")


def keeps_the_equality(label) -> bool:
    """Run it: do 4 micro-batches weighted 1/4 give the full batch's gradient?"""
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
                              'equality, e.g. {"A", "D"}, or set() for none',
                              'None 대신 등식을 지키는 계층의 레이블 집합을 넣으세요. '
                              '예: {"A", "D"}. 하나도 없으면 set()'))
    given, hint = read_labels(answer, LAYERS)
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
    # the first label on the wrong side (left out, or put in; the sets differ, so there
    # is one): one label at a time, so that the hint gives no other label away
    wrong = next(label for label in LAYERS if (label in keeps) != (label in given))
    return not_yet(_look_again_at(wrong))


# Exercise 3 ---------------------------------------------------------------

N_SAMPLES_3 = 50  # 4 and 3 do not divide it: the micro-batches differ in size
N_MICRO_TRIED = (4, 3)


def _fresh_linear():
    return fresh(lambda: nn.Linear(3, 1), seed=0)


def _full_batch_grads(X, y):
    model = _fresh_linear()
    return _grads(lambda: F.mse_loss(model(X), y), model)


def _run_reader_function(function, X, y, n_micro):
    """Run the reader's function on a model holding stale grads; record what it did."""
    model = _fresh_linear()
    with torch.enable_grad():  # gradients left over from an earlier step
        F.mse_loss(model(3 * X[:5]), y[:5]).backward()
    stale = [p.grad.clone() for p in model.parameters()]
    inputs, weight_grads = [], []
    model.register_forward_pre_hook(lambda module, args: inputs.append(args[0] if args else None))
    model.weight.register_hook(lambda grad: weight_grads.append(grad.detach().clone()))
    with seeded(0), torch.enable_grad(), watch_backward_calls() as calls:
        function(model, X, y, n_micro)
    sizes = [len(x) if isinstance(x, torch.Tensor) and x.dim() > 0 else 0 for x in inputs]
    return model, stale, sizes, len(calls), weight_grads


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


def _holds_some_of(grads, candidate, stale):
    """Are `grads` the candidate plus some multiple of the stale gradients (the stale ones
    left in .grad, maybe scaled with the rest when a sum is divided afterwards)?"""
    leftover = torch.cat([(g - c).flatten() for g, c in zip(grads, candidate)]).double()
    stale = torch.cat([s.flatten() for s in stale]).double()
    factor = (leftover @ stale) / (stale @ stale)
    return abs(factor) > 1e-3 and close(leftover, factor * stale)


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
                              "None 대신 직접 작성한 함수 accumulate(model, X, y, n_micro)를 "
                              "넣으세요"))
    if not callable(answer):
        return not_yet(say("answer should be a function accumulate(model, X, y, n_micro) "
                           "(def accumulate(...): ..., then answer = accumulate); "
                           f"got {kind(answer)}",
                           "answer로 함수 accumulate(model, X, y, n_micro)가 와야 하는데"
                           "(def accumulate(...): ...로 정의한 뒤 answer = accumulate) "
                           f"{kind(answer)}가 왔습니다"))
    X, y = _regression_data(N_SAMPLES_3, seed=5)
    for n_micro in N_MICRO_TRIED:
        try:
            model, stale, sizes, backwards, reached = _run_reader_function(
                answer, X, y, n_micro)
        except Exception as error:  # the reader's code: report, do not crash
            return not_yet(say(f"{raised(error)} (called with n_micro={n_micro} on "
                               f"{N_SAMPLES_3} samples)",
                               f"{raised(error)} (샘플 {N_SAMPLES_3}개에 n_micro={n_micro}로 "
                               "호출했을 때)"))
        if len(sizes) != n_micro or min(sizes, default=0) < 1 or sum(sizes) != N_SAMPLES_3:
            return not_yet(say(f"with n_micro={n_micro}, expected {n_micro} forward passes on "
                               f"micro-batches that together hold the {N_SAMPLES_3} samples; "
                               f"the model saw {len(sizes)}, of sizes {sizes}",
                               f"n_micro={n_micro}일 때, 합쳐서 샘플 {N_SAMPLES_3}개를 담은 "
                               f"마이크로 배치들에 순전파가 {n_micro}번 있어야 합니다. 모델이 "
                               f"받은 입력: {len(sizes)}개, 크기 {sizes}"))
        if backwards != n_micro or len(reached) != n_micro:
            return not_yet(say(f"with n_micro={n_micro}, expected one backward() per "
                               f"micro-batch, {n_micro} in all, each reaching the weight; "
                               f"counted {backwards} backward call(s), {len(reached)} "
                               "reaching the weight",
                               f"n_micro={n_micro}일 때, 마이크로 배치마다 한 번씩, 모두 "
                               f"{n_micro}번의 backward()가 있고 각각 가중치까지 닿아야 "
                               f"합니다. 센 결과: backward 호출 {backwards}번, 그중 가중치에 "
                               f"닿은 것 {len(reached)}번"))
        grads = [p.grad for p in model.parameters()]
        if any(g is None for g in grads):
            return not_yet(say(f"with n_micro={n_micro}, a parameter's .grad is None "
                               "afterwards",
                               f"n_micro={n_micro}일 때, 함수가 끝난 뒤 어떤 매개변수의 .grad가 "
                               "None입니다"))
        if not _came_from_backward(model.weight.grad, stale[0], reached):
            return not_yet(say(f"with n_micro={n_micro}, the weight's .grad is not what your "
                               "backward() calls computed: let them fill .grad, do not write a "
                               "gradient in by hand",
                               f"n_micro={n_micro}일 때, 가중치의 .grad가 backward() 호출들이 "
                               "계산한 값이 아닙니다. .grad는 backward()가 채우게 두고, "
                               "변화도를 손으로 써넣지 마세요"))
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
                                   f"n_micro={n_micro}일 때: {hint}"))
        return not_yet(say(f"with n_micro={n_micro} the gradients differ from the full "
                           "batch's: each micro-batch loss is a mean over its own samples; "
                           "what weight makes every sample count as in the mean over all "
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
