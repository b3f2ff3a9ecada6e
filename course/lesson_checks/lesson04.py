"""Check cells for lesson 04, multi-task losses (notebooks/04_multi_task_losses.ipynb).

Both checkers run on the lesson's own model, which the check cell passes in
(`lesson04.exercise_1(answer, TwoHeadNet)`): a fresh `TwoHeadNet()`, built seeded, an
SGD optimizer (lr 0.1) and a small data set of the lesson's kind (64 samples, 8
features, a regression target and 3 classes) from a private generator, so that a check
gives the same verdict in every run and leaves the reader's random numbers alone.
Each checker works the right answer out by running PyTorch, not from a stored key.

- exercise_1(answer, TwoHeadNet): which error (freed buffer, version counter, none) each
  of four sequences of calls raises;
- exercise_2(answer, TwoHeadNet): which changes fix a broken training loop, with one
  backward pass through the trunk per step.
"""
import torch
import torch.nn.functional as F
from torch import nn

from autograd_lens import backward_passes

from .answers import kind, read_labels
from .errors import (FREED_BUFFER, NO_ERROR, VERSION_COUNTER, describe, error_raised_by,
                     read_error_names)
from .language import say
from .seeding import seeded
from .verdict import correct, not_yet, unanswered

N_SAMPLES, N_FEATURES, N_CLASSES = 64, 8, 3
LEARNING_RATE = 0.1


def _data():
    generator = torch.Generator().manual_seed(4)
    x = torch.randn(N_SAMPLES, N_FEATURES, generator=generator)
    y_reg = torch.sin(x @ torch.randn(N_FEATURES, generator=generator))
    y_cls = torch.randint(0, N_CLASSES, (N_SAMPLES,), generator=generator)
    return x, y_reg, y_cls


def _losses(model, data):
    """loss1: the regression's mean squared error; loss2: the classification's cross-entropy."""
    x, y_reg, y_cls = data
    prediction, logits = model(x)
    return F.mse_loss(prediction, y_reg), F.cross_entropy(logits, y_cls)


def _fresh(model_class):
    """The same model and a new SGD optimizer at every call."""
    with seeded(4):
        model = model_class()
    return model, torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)


def _model_class_problem(model_class, exercise):
    """A hint if `model_class` is not the lesson's two-head model, else None.
    `exercise`: the checker's name, for the example call ("exercise_1")."""
    usage = say("pass the lesson's model class as the second argument, "
                f"e.g. {exercise}(answer, TwoHeadNet)",
                f"두 번째 인자로 강의의 모델 클래스를 넘기세요. 예: {exercise}(answer, TwoHeadNet)")
    if not isinstance(model_class, type) or not issubclass(model_class, nn.Module):
        return say(f"{usage}; got {kind(model_class)}",
                   f"{usage}. 받은 것: {kind(model_class)}")
    try:
        model, _ = _fresh(model_class)
        _losses(model, _data())
        model.trunk.parameters()
    except Exception as error:  # the lesson's code changed: say so, never crash the check
        return say(f"the model class passed in does not run as the lesson's TwoHeadNet does "
                   f"({describe(error)}): re-run the lesson's cells from the top, then this one",
                   f"넘겨받은 모델 클래스가 강의의 TwoHeadNet처럼 실행되지 않습니다"
                   f"({describe(error)}). 강의의 셀을 처음부터 다시 실행한 뒤 이 셀을 실행하세요")
    return None


# Exercise 1: which error does each sequence raise? -------------------------------------
# Each sequence starts from _fresh(TwoHeadNet) and one forward pass (loss1, loss2).
# The exercise's text in the notebook shows these bodies; tests keep the two the same.

def sequence_a(model, optimizer, loss1, loss2):
    loss1.backward(retain_graph=True)
    loss2.backward()
    loss1.backward()


def sequence_b(model, optimizer, loss1, loss2):
    loss1.backward(retain_graph=True)
    optimizer.zero_grad()
    loss2.backward()


def sequence_c(model, optimizer, loss1, loss2):
    torch.autograd.grad(loss1, list(model.regression_head.parameters()))
    loss2.backward()


def sequence_d(model, optimizer, loss1, loss2):
    loss2.backward(retain_graph=True)
    optimizer.step()
    loss1.backward()


SEQUENCES = {"A": sequence_a, "B": sequence_b, "C": sequence_c, "D": sequence_d}

def sequence_hints():
    """The hint for a wrong answer: sequence_hints()[label][the answer given], in the
    current language (made at each call: the language is chosen after import)."""
    return {
        "A": {
            NO_ERROR: say("A's third call runs loss1's backward again, down into the trunk: "
                          "what did loss2.backward(), without retain_graph, do to the trunk's "
                          "saved tensors?",
                          "A의 세 번째 호출은 loss1의 역전파를 몸통까지 다시 실행합니다. "
                          "retain_graph 없이 호출한 loss2.backward()는 몸통의 저장된 텐서를 "
                          "어떻게 했나요?"),
            VERSION_COUNTER: say("A changes nothing in place (there is no optimizer.step()), "
                                 "so no version moves: look at what each call keeps or frees",
                                 "A는 아무것도 제자리에서 바꾸지 않으므로(optimizer.step()이 "
                                 "없습니다) 어떤 버전도 바뀌지 않습니다. 각 호출이 무엇을 "
                                 "유지하고 무엇을 해제하는지 보세요"),
        },
        "B": {
            FREED_BUFFER: say("in B the first call kept every saved tensor (retain_graph=True): "
                              "does optimizer.zero_grad() touch the graph?",
                              "B의 첫 호출은 저장된 텐서를 모두 유지했습니다"
                              "(retain_graph=True). optimizer.zero_grad()가 그래프를 "
                              "건드리나요?"),
            VERSION_COUNTER: say("optimizer.zero_grad() resets each .grad: does it change a "
                                 "parameter, or anything the graph saved?",
                                 "optimizer.zero_grad()는 각 .grad를 초기화합니다. 이것이 "
                                 "매개변수나, 그래프가 저장한 무언가를 바꾸나요?"),
        },
        "C": {
            FREED_BUFFER: say("torch.autograd.grad runs only the nodes between loss1 and the "
                              "tensors you ask for, and frees only their saved tensors: is the "
                              "trunk between loss1 and the regression head's parameters?",
                              "torch.autograd.grad는 loss1과 요청한 텐서 사이에 있는 노드만 "
                              "실행하고, 그 노드들의 저장된 텐서만 해제합니다. 몸통이 loss1과 "
                              "회귀 헤드의 매개변수 사이에 있나요?"),
            VERSION_COUNTER: say("C changes nothing in place: torch.autograd.grad returns "
                                 "gradients, it updates no tensor",
                                 "C는 아무것도 제자리에서 바꾸지 않습니다. torch.autograd.grad는 "
                                 "변화도를 반환할 뿐, 어떤 텐서도 갱신하지 않습니다"),
        },
        "D": {
            FREED_BUFFER: say("D's first call keeps the saved tensors (retain_graph=True), so "
                              "none is freed: what did optimizer.step() do to the tensors they "
                              "include?",
                              "D의 첫 호출은 저장된 텐서를 유지하므로(retain_graph=True) 해제되는 "
                              "것이 없습니다. optimizer.step()은 저장된 텐서 가운데 일부에 "
                              "무엇을 했나요?"),
            NO_ERROR: say("optimizer.step() changed in place every parameter whose .grad "
                          "loss2's backward filled: does loss1's backward need any of them as "
                          "saved?",
                          "optimizer.step()은 loss2의 역전파가 .grad를 채운 매개변수를 모두 "
                          "제자리에서 바꿨습니다. loss1의 역전파에 그중 저장된 텐서로 필요한 "
                          "것이 있나요?"),
        },
    }


def _error_raised_by_sequence(model_class, sequence):
    model, optimizer = _fresh(model_class)
    loss1, loss2 = _losses(model, _data())
    return error_raised_by(lambda: sequence(model, optimizer, loss1, loss2))


def _named(labels):
    return say(f"sequence {', '.join(labels)}", f"순서 {', '.join(labels)}")


def exercise_1(answer, model_class=None):
    """answer: {"A": ..., "B": ..., "C": ..., "D": ...}, each "freed buffer", "version
    counter" or "none": what the sequence raises on a fresh TwoHeadNet."""
    if answer is None:
        return unanswered(say('set `answer` to a dict {"A": ..., "B": ..., "C": ..., "D": ...}, '
                              'each "freed buffer", "version counter" or "none"',
                              '`answer`에 딕셔너리 {"A": ..., "B": ..., "C": ..., "D": ...}를 '
                              '넣으세요. 각 값은 "freed buffer", "version counter", "none" 중 '
                              '하나입니다'))
    problem = _model_class_problem(model_class, "exercise_1")
    if problem:
        return not_yet(problem)
    given, problem = read_error_names(answer, list(SEQUENCES), _named,
                                      "{" + ", ".join(f'"{label}": ...' for label in SEQUENCES) + "}")
    if problem:
        return not_yet(problem)
    right = {label: _error_raised_by_sequence(model_class, sequence)
             for label, sequence in SEQUENCES.items()}
    wrong = [label for label in SEQUENCES if given[label] != right[label]]
    if not wrong:
        return correct(say("a backward fails when it needs a saved tensor that an earlier "
                           "call freed, or that changed in place since it was saved; a call "
                           "that never runs through a node, or that touches only .grad, leaves "
                           "it whole",
                           "역전파는 앞선 호출이 해제한 저장된 텐서나, 저장된 뒤 제자리에서 "
                           "바뀐 저장된 텐서가 필요할 때 실패합니다. 어떤 노드를 한 번도 "
                           "지나지 않는 호출이나 .grad만 건드리는 호출은 그 노드를 온전히 "
                           "남겨 둡니다"))
    label = wrong[0]
    hint = sequence_hints()[label].get(
        given[label], say(f"run sequence {label} in your head, call by call",
                          f"순서 {label}의 호출을 하나씩 머릿속으로 실행해 보세요"))
    right_count = len(SEQUENCES) - len(wrong)
    return not_yet(say(f"{right_count} of {len(SEQUENCES)} right. {label}: {hint}",
                       f"{len(SEQUENCES)}개 중 {right_count}개 정답. 순서 {label}: {hint}"))


# Exercise 2: which changes fix the broken loop? -----------------------------------------
# The loop: STEPS times, (loss1, loss2) from a forward pass, optimizer.zero_grad(),
# loss1.backward(), loss2.backward(), optimizer.step(). Each change replaces the two
# backward calls with the body below; the notebook shows them, tests keep them the same.

STEPS = 3


def change_a(model, loss1, loss2):
    loss1.backward(retain_graph=True)
    loss2.backward()


def change_b(model, loss1, loss2):
    loss1.backward()
    loss2.backward(retain_graph=True)


def change_c(model, loss1, loss2):
    (loss1 + loss2).backward()


def change_d(model, loss1, loss2):
    torch.autograd.grad([loss1, loss2], list(model.parameters()))


def change_e(model, loss1, loss2):
    torch.autograd.backward([loss1, loss2])


def the_broken_loop(model, loss1, loss2):
    loss1.backward()
    loss2.backward()


CHANGES = {"A": change_a, "B": change_b, "C": change_c, "D": change_d, "E": change_e}


def _train(model_class, backward):
    """Run the loop with `backward` in place of its two calls: (error, parameters, passes)."""
    model, optimizer = _fresh(model_class)
    data = _data()

    def loop():
        for _ in range(STEPS):
            loss1, loss2 = _losses(model, data)
            optimizer.zero_grad()
            backward(model, loss1, loss2)
            optimizer.step()

    with backward_passes(model.trunk) as passes:
        error = error_raised_by(loop)
    parameters = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    return error, parameters, passes.count


# The errors' names in the Korean hints, as the lesson names them (해제된 버퍼(freed buffer) 오류).
_KOREAN_ERROR_NAMES = {FREED_BUFFER: "해제된 버퍼", VERSION_COUNTER: "버전 카운터"}


def _outcome(model_class, backward, intended, start):
    """None if `backward` does what the loop intends, else what goes wrong (a hint's end)."""
    error, parameters, passes = _train(model_class, backward)
    if error != NO_ERROR:
        return say(f"the loop still raises the {error} error: which call needs what an "
                   "earlier one freed or changed?",
                   f"루프에서 여전히 {_KOREAN_ERROR_NAMES.get(error, error)} 오류가 납니다. "
                   "어느 호출에, 앞선 호출이 해제했거나 바꾼 것이 필요할까요?")
    if torch.allclose(parameters, start):
        return say("it runs, but the parameters never move: where do the gradients go, and "
                   "where does optimizer.step() read them?",
                   "실행은 되지만 매개변수가 전혀 바뀌지 않습니다. 변화도는 어디로 가고, "
                   "optimizer.step()은 변화도를 어디에서 읽나요?")
    if not torch.allclose(parameters, intended, atol=1e-6):
        return say("it runs, but its update is not one SGD step on loss1 + loss2",
                   "실행은 되지만, 그 갱신은 loss1 + loss2에 대한 SGD 스텝 한 번이 아닙니다")
    if passes != STEPS:
        return say(f"it trains right, but walks the trunk backward {passes // STEPS} times a "
                   "step, where one pass can do",
                   f"학습은 제대로 되지만, 몸통을 지나는 역전파 단계가 스텝마다 "
                   f"{passes // STEPS}번입니다. 한 번이면 됩니다")
    return None


def _intended(model_class):
    """The loop as meant: one update on loss1 + loss2 per step, gradients from autograd.grad."""
    model, _ = _fresh(model_class)
    data = _data()
    for _ in range(STEPS):
        params = list(model.parameters())
        grads = torch.autograd.grad(sum(_losses(model, data)), params)
        with torch.no_grad():
            for param, grad in zip(params, grads):
                param -= LEARNING_RATE * grad
    return torch.nn.utils.parameters_to_vector(model.parameters()).detach()


def exercise_2(answer, model_class=None):
    """answer: the set of letters of the changes (A to E) that make the broken loop train
    on loss1 + loss2, one update per step, with one backward pass through the trunk."""
    last = list(CHANGES)[-1]
    if answer is None:
        return unanswered(say(f"set `answer` to the set of letters (A to {last}) of the "
                              'changes that work, such as {"A", "B"}',
                              f"`answer`에 제대로 동작하는 수정안의 글자(A부터 {last}까지) 집합을 "
                              '넣으세요. 예: {"A", "B"}'))
    problem = _model_class_problem(model_class, "exercise_2")
    if problem:
        return not_yet(problem)
    given, hint = read_labels(answer, CHANGES)
    if hint:
        return not_yet(hint)
    if not given:
        return not_yet(say("at least one of the changes works: try each one call by call",
                           "수정안 가운데 적어도 하나는 동작합니다. 하나씩 호출 단위로 따라가 "
                           "보세요"))
    intended = _intended(model_class)
    start = torch.nn.utils.parameters_to_vector(_fresh(model_class)[0].parameters()).detach()
    outcomes = {label: _outcome(model_class, change, intended, start)
                for label, change in CHANGES.items()}
    for label in sorted(given):
        if outcomes[label] is not None:
            return not_yet(f"{label}: {outcomes[label]}")
    right = {label for label, outcome in outcomes.items() if outcome is None}
    if given != right:
        return not_yet(say("the changes you chose work, but they are not the only ones: ask "
                           "of each change whether it runs, puts the gradient of loss1 + loss2 "
                           "where optimizer.step() reads it, and walks the trunk once",
                           "고른 수정안은 동작하지만, 동작하는 수정안이 더 있습니다. 수정안마다 "
                           "물어보세요: 오류 없이 실행되는가, loss1 + loss2의 변화도를 "
                           "optimizer.step()이 읽는 곳에 두는가, 몸통을 한 번만 지나가는가"))
    return correct(say("one backward pass from both losses fills .grad, then one step; "
                       "retain_graph on the first call pays for a second pass through the "
                       "trunk, on the second call it comes too late, and autograd.grad leaves "
                       ".grad empty for the step",
                       "두 손실에서 시작하는 역전파 단계 한 번이 .grad를 채우고, 그다음에 스텝 "
                       "한 번입니다. 첫 호출의 retain_graph는 몸통을 한 번 더 지나가는 비용을 "
                       "치르고, 두 번째 호출의 retain_graph는 너무 늦으며, autograd.grad는 "
                       "스텝에 쓸 .grad를 비워 둡니다"))
