"""Check cells for lesson 05, "The memory cost of retained graphs".

Every checker works out the right answer by running PyTorch, not from a stored key:
exercise 1 builds the model its text shows and measures it with `retained_bytes`;
exercise 2 runs each snippet and watches which activations are still alive when it ends;
exercise 3 runs the reader's function and watches the activations while it runs and after
it returns, then compares its results with the leaky version's. None of them moves the
global RNG: models are built with `seeding.fresh`, batches come from private generators.
"""
import weakref
from itertools import combinations

import torch
from torch import nn

from autograd_lens import retained_bytes

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
    """Weak references to every output of a model's activation modules, as they run.

    A weak reference keeps nothing alive: it is dead as soon as nothing (no name, no
    graph that saved it) holds the tensor. `alive_at_forward` records, each time an
    activation runs, how many earlier activation outputs were still alive.
    """

    def __init__(self, model):
        self.refs, self.alive_at_forward = [], []
        for module in model.modules():
            if isinstance(module, ACTIVATIONS):
                module.register_forward_hook(self._record)

    def _record(self, module, inputs, output):
        self.alive_at_forward.append(self.alive())
        self.refs.append(weakref.ref(output))

    def alive(self) -> int:
        return sum(ref() is not None for ref in self.refs)


# Exercise 1: predict retained_bytes(loss) for a GELU and Tanh MLP.

EXERCISE_1_BATCH = 25


def _exercise_1_model() -> nn.Sequential:
    """The model the exercise shows (its weights play no part in the bytes)."""
    return fresh(lambda: nn.Sequential(nn.Linear(10, 40), nn.GELU(), nn.Linear(40, 20),
                                       nn.Tanh(), nn.Linear(20, 3)), seed=5)


def _exercise_1_measured() -> int:
    model = _exercise_1_model()
    x = _batch(5, EXERCISE_1_BATCH, model[0].in_features)
    return retained_bytes(model(x).pow(2).mean())


def _exercise_1_slips() -> list:
    """(how far off, hint) for each slip a hand count is likely to make."""
    model = _exercise_1_model()
    first, middle, last = (m for m in model if isinstance(m, nn.Linear))

    def batch_of(units):  # bytes of one float32 activation of the batch, `units` wide
        return FLOAT32 * EXERCISE_1_BATCH * units

    saved_weights = FLOAT32 * (middle.weight.nelement() + last.weight.nelement())
    parameters = FLOAT32 * sum(p.nelement() for p in model.parameters())
    return [
        (-batch_of(first.out_features), say(
            "one 25 × 40 tensor short: around GELU, what does "
            "GeluBackward0 need, and what does the next addmm need? Are they one storage?",
            "25 × 40 텐서 하나가 모자랍니다: GELU 앞뒤에서 GeluBackward0에는 무엇이 필요하고, "
            "다음 addmm에는 무엇이 필요한가요? 둘은 같은 스토리지인가요?")),
        (batch_of(middle.out_features), say(
            "one 25 × 20 tensor too many: Tanh saves its output, "
            "and the last addmm saves that same tensor, one storage, counted once",
            "25 × 20 텐서 하나가 더 들어갔습니다: Tanh는 출력을 저장하고, 마지막 addmm도 "
            "바로 그 텐서를 저장합니다. 스토리지 하나이므로 한 번만 셉니다")),
        (-batch_of(first.in_features), say(
            "you left out the input batch x: the first addmm "
            "saves it, for its weight's gradient",
            "입력 배치 x를 빠뜨렸습니다: 첫 번째 addmm이 가중치의 변화도를 구하려고 "
            "x를 저장합니다")),
        (-batch_of(last.out_features), say(
            "you left out the model's output: pow(2) saves it, "
            "since the derivative of out² is 2·out",
            "모델의 출력을 빠뜨렸습니다: out²의 도함수가 2·out이므로 pow(2)가 출력을 "
            "저장합니다")),
        (batch_of(1) - batch_of(last.out_features), say(
            "the model's output is 3 wide here, not "
            "1: pow(2) saves all of it",
            "여기서는 모델 출력의 너비가 1이 아니라 3입니다: pow(2)는 출력 전체를 "
            "저장합니다")),
        (saved_weights, say(
            "you counted the weights (Wᵀ) that the 2nd and 3rd addmm save: "
            "they are views of the parameters, leaves, which retained_bytes leaves out by default",
            "두 번째와 세 번째 addmm이 저장하는 가중치(Wᵀ)까지 셌습니다: 이것은 매개변수, "
            "곧 잎 텐서의 뷰이고, retained_bytes는 기본적으로 잎 텐서를 세지 않습니다")),
        (parameters, say(
            "you added the parameters: they are leaves, alive with or without the "
            "graph, which retained_bytes leaves out by default",
            "매개변수를 더했습니다: 매개변수는 그래프가 있든 없든 살아 있는 잎 텐서이고, "
            "retained_bytes는 기본적으로 잎 텐서를 세지 않습니다")),
    ]


def _exercise_1_hints(right) -> dict:
    """Wrong total -> hint: each slip alone, then any two of them together."""
    slips = _exercise_1_slips()
    hints = {}
    for (off_a, hint_a), (off_b, _) in combinations(slips, 2):
        hints.setdefault(right + off_a + off_b, say(f"two slips; one of them: {hint_a}",
                                                    f"실수가 두 가지입니다. 그중 하나: {hint_a}"))
    hints.update({right + off: hint for off, hint in slips})  # one slip: its own hint wins
    hints[right // FLOAT32] = say("that counts elements; the question asks for bytes, and a "
                                  "float32 takes 4",
                                  "그것은 원소의 개수입니다: 문제는 바이트 수를 묻고, "
                                  "float32 하나는 4바이트입니다")
    return hints


def exercise_1(answer) -> Verdict:
    """How many bytes does retained_bytes(loss) report for the exercise's model?"""
    if answer is None:
        return unanswered(say("set `answer` to a whole number of bytes, e.g. 1000, then run "
                              "this cell again",
                              "`answer`에 바이트 수를 정수로 넣고(예: 1000) 이 셀을 다시 "
                              "실행하세요"))
    if isinstance(answer, torch.Tensor):
        return not_yet(say("give the number of bytes as a plain number, like 1000 (not a "
                           "tensor; use .item() if you computed it)",
                           "바이트 수는 텐서가 아니라 1000 같은 보통 숫자로 주세요(텐서로 "
                           "계산했다면 .item()을 쓰세요)"))
    value = as_number(answer)
    if value is None:
        return not_yet(say(f"expected a whole number of bytes, such as 1000; got {kind(answer)}",
                           f"1000 같은 정수 바이트 수가 와야 하는데 {kind(answer)}가 왔습니다"))
    right = _exercise_1_measured()
    if value == right:
        return correct(say(f"{right} bytes = 4 × 25 × (10 + 40 + 40 + 20 + 3): x, GELU's input "
                           "and its output, the Tanh output once, and the output pow(2) saves.",
                           f"{right}바이트 = 4 × 25 × (10 + 40 + 40 + 20 + 3): x, GELU의 "
                           "입력과 출력, 한 번만 센 Tanh 출력, 그리고 pow(2)가 저장하는 "
                           "출력입니다."))
    hint = _exercise_1_hints(right).get(value)
    if hint:
        return not_yet(hint)
    return not_yet(say("count, at 4 bytes per float32, every tensor the graph saves except the "
                       "parameters, each storage once; for each activation, ask what its "
                       "backward needs, its input or its output",
                       "float32 하나를 4바이트로 쳐서, 그래프가 저장하는 텐서를 매개변수만 빼고 "
                       "모두 세되 스토리지마다 한 번씩만 세세요. 활성화 함수마다 그 역전파에 "
                       "입력과 출력 중 무엇이 필요한지 따져 보세요"))


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

def look_again(label) -> str:
    """A question that leads back to the reasoning, without saying which way the label goes."""
    return {
        "A": say("does model.eval() stop autograd from building graphs, and what does the list "
                 "hold?",
                 "model.eval()이 autograd의 그래프 생성을 멈추나요? 그리고 리스트에는 무엇이 "
                 "들어 있나요?"),
        "B": say("what did each backward() do to the saved tensors of the graphs whose losses the "
                 "list holds?",
                 "리스트에 담긴 손실들의 그래프에서, 각 backward()는 저장된 텐서에 무엇을 "
                 "했나요?"),
        "C": say("after the loop, what does `loss` still name, and what did retain_graph=True "
                 "keep?",
                 "루프가 끝난 뒤에도 `loss`는 무엇을 가리키고 있고, retain_graph=True는 무엇을 "
                 "남겨 두었나요?"),
        "D": say("what does autograd save under torch.no_grad()?",
                 "torch.no_grad() 아래에서 autograd는 무엇을 저장하나요?"),
        "E": say("what does `total`'s graph reach, and did a backward() drop anything?",
                 "`total`의 그래프는 어디까지 닿나요? 그리고 무언가를 해제한 backward()가 있었나요?"),
        "F": say("`total` has no graph, but what does `loss` still name after the loop, and did a "
                 "backward() drop anything?",
                 "`total`에는 그래프가 없습니다. 그런데 루프가 끝난 뒤에도 `loss`는 무엇을 "
                 "가리키고 있나요? 그리고 무언가를 해제한 backward()가 있었나요?"),
    }[label]


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
                              "`answer`에 저장된 텐서를 살려 두는 스니펫의 레이블 집합을 "
                              "넣으세요. 예: {'A', 'B'}"))
    chosen, hint = read_labels(answer, SNIPPETS)
    if hint:
        return not_yet(hint)
    keepers = {label for label, text in SNIPPETS.items() if _holds_saved_tensors(text)}
    wrong = sorted(chosen ^ keepers)
    if wrong:
        return not_yet(say(f"{len(wrong)} of the six labels {'is' if len(wrong) == 1 else 'are'} "
                           f"on the wrong side; look again at {wrong[0]}: {look_again(wrong[0])}",
                           f"레이블 여섯 개 중 {len(wrong)}개가 잘못 분류되었습니다. "
                           f"{wrong[0]} 스니펫을 다시 보세요: {look_again(wrong[0])}"))
    return correct(say(f"{', '.join(sorted(keepers))} keep saved tensors alive: they live as long "
                       "as a tensor you hold reaches their graph and no backward() dropped them.",
                       f"{', '.join(sorted(keepers))}: 저장된 텐서를 살려 둡니다. 여러분이 가진 "
                       "텐서가 그 그래프에 닿아 있고 어떤 backward()도 그것을 해제하지 않은 동안, "
                       "저장된 텐서는 살아 있습니다."))


# Exercise 3: fix `evaluate`, which returns the average loss and the predictions, and leaks.

def _exercise_3_setup():
    model = fresh(lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)),
                  seed=11)
    batches = [(_batch(20 + k, 8, 16), _batch(40 + k, 8, 1)) for k in range(4)]
    return model, batches


def _exercise_3_expected():
    """The leaky version's results, worked out under torch.no_grad()."""
    model, batches = _exercise_3_setup()
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
    try:
        with watch_backward_calls() as calls:
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
                         "함수가 모델 매개변수의 requires_grad를 껐습니다: 이러면 모델을 더는 "
                         "학습시킬 수 없습니다. 모델은 그대로 두세요")
    if calls or any(p.grad is not None for p in model.parameters()):
        return None, say("your function ran a backward pass or set the model's .grad: an "
                         "evaluation needs no gradients, and must leave .grad alone",
                         "함수가 역전파 단계를 실행했거나 모델의 .grad를 설정했습니다: 평가에는 "
                         "변화도가 필요 없고, .grad는 건드리지 않아야 합니다")
    return result, None


def _check_results(result, expected_average, expected_predictions, losses):
    """A hint about the returned values, or None if they are the leaky version's."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return say(f"your function returned {kind(result)}; return two things, as evaluate "
                   "does: the average loss, then the predictions",
                   f"함수가 {kind(result)}를 반환했습니다. evaluate처럼 두 가지를 반환하세요: "
                   "평균 손실, 그다음 예측값")
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
                   "평균 손실이 누수가 있는 원래 버전의 값과 다릅니다: 계산은 원래대로, 곧 "
                   "배치별 mse_loss의 평균으로 두세요")
    if not isinstance(predictions, torch.Tensor):
        return say(f"the predictions should be one tensor, every batch's output in order, as "
                   f"torch.cat makes it; got {kind(predictions)}",
                   f"예측값은 torch.cat으로 만든 것처럼 모든 배치의 출력을 차례대로 이은 "
                   f"텐서 하나여야 하는데 {kind(predictions)}가 왔습니다")
    if tuple(predictions.shape) != tuple(expected_predictions.shape):
        return say(f"the predictions should have shape {tuple(expected_predictions.shape)}, "
                   f"every batch's output in order; got {tuple(predictions.shape)}",
                   f"예측값의 shape가 맞지 않습니다: 모든 배치의 출력을 차례대로 이은 shape는 "
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
                              "`answer`에 작성한 함수를 넣으세요. 예: "
                              "`answer = evaluate_fixed`"))
    if not callable(answer):
        return not_yet(say(f"expected a function taking (model, batches), like "
                           f"`def evaluate_fixed(model, batches): ...`; got {kind(answer)}",
                           f"`def evaluate_fixed(model, batches): ...`처럼 (model, batches)를 "
                           f"받는 함수가 와야 하는데 {kind(answer)}가 왔습니다"))
    expected_average, expected_predictions, losses = _exercise_3_expected()
    model, batches = _exercise_3_setup()
    watch = _ActivationWatch(model)
    result, problem = _run_evaluation(answer, model, batches)
    if problem:
        return not_yet(problem)
    if not watch.refs:
        return not_yet(say("your function never ran the model: call model(x) for every (x, y) "
                           "in batches",
                           "함수가 모델을 한 번도 실행하지 않았습니다: batches의 모든 (x, y)에 "
                           "대해 model(x)를 호출하세요"))
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
                           f"함수가 반환된 뒤에도 배치 {alive}개분의 활성값이 살아 있습니다: "
                           "그래프가 붙은 텐서를 함수 밖에 보관하고 있지 않나요?"))
    piled_up = max(watch.alive_at_forward)
    if piled_up > 1:
        return not_yet(say(f"nothing is left once your function returns, but while it runs the "
                           f"graphs pile up: when a batch ran, {piled_up} earlier batches' "
                           "activations were still alive; don't let the graphs accumulate",
                           f"함수가 반환된 뒤에는 남는 것이 없지만, 실행되는 동안 그래프가 "
                           f"쌓입니다: 어떤 배치가 실행될 때 앞선 배치 {piled_up}개의 활성값이 "
                           "아직 살아 있었습니다. 그래프가 쌓이지 않게 하세요"))
    hint = _check_results(result, expected_average, expected_predictions, losses)
    if hint:
        return not_yet(hint)
    return correct(say(f"average loss {expected_average:.4f} and the {len(expected_predictions)} "
                       "predictions, with at most one batch's graph alive at a time and none "
                       "once your function returns.",
                       f"평균 손실 {expected_average:.4f}, 예측값 {len(expected_predictions)}개: "
                       "한 번에 살아 있는 그래프는 많아야 배치 하나의 것이고, 함수가 반환된 "
                       "뒤에는 하나도 없습니다."))
