"""Check cells for lesson 04, multi-task losses (notebooks/04_multi_task_losses.ipynb).

Both checkers work the right answer out by running PyTorch, not from a stored key, on
the lesson's model: a fresh `TwoHeadNet()`, built seeded, an SGD optimizer (lr 0.1) and a
small data set of the lesson's kind (64 samples, 8 features, a regression target and 3
classes) from a private generator, so that a check gives the same verdict in every run
and leaves the reader's random numbers alone. The check cell passes the lesson's class in
(`lesson04.exercise_1(answer, TwoHeadNet)`); the checker judges on its own copy of it
and refuses a class that behaves otherwise (a trunk that saves nothing would turn every
answer into "none").

A wrong answer gets one hint, the same for every wrong answer to the exercise: the
reasoning that settles each sequence or change, and the kinds of mistake to look for. It
names no sequence or change, says nothing of how many are right, and does not depend on
what the right verdicts are, so changing one verdict at a time, or trying the changes one
at a time, learns nothing that thinking would not.

- exercise_1(answer, TwoHeadNet): which error (freed buffer, version counter, none) each
  of four sequences of calls raises;
- exercise_2(answer, TwoHeadNet): which changes make a broken training loop train on
  loss1 + loss2, one update per step, with one backward pass through the trunk per step.
"""
import torch
import torch.nn.functional as F
from torch import nn

from autograd_lens import backward_passes

from .answers import kind, read_labels
from .errors import NO_ERROR, describe, error_raised_by, read_error_names
from .language import say
from .seeding import seeded
from .verdict import correct, not_yet, unanswered

N_SAMPLES, N_FEATURES, N_CLASSES = 64, 8, 3
LEARNING_RATE = 0.1


class _LessonModel(nn.Module):
    """The checker's copy of the lesson's TwoHeadNet (tests keep the two the same)."""

    def __init__(self, n_features=8, hidden=32, n_classes=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(),
                                   nn.Linear(hidden, hidden), nn.ReLU())
        self.regression_head = nn.Linear(hidden, 1)
        self.classification_head = nn.Linear(hidden, n_classes)

    def forward(self, x):
        features = self.trunk(x)
        return self.regression_head(features).squeeze(-1), self.classification_head(features)


def _not_the_lessons_model():
    return say("the model class passed in does not behave as the lesson's TwoHeadNet: "
               "re-run the lesson's cells from the top, then this one, passing TwoHeadNet",
               "넘겨받은 모델 클래스가 강의의 TwoHeadNet처럼 동작하지 않습니다. 강의의 셀을 "
               "처음부터 다시 실행한 뒤, TwoHeadNet을 넘겨 이 셀을 실행하세요")


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

def reasoning_hint():
    """The one hint for any wrong answer to exercise 1, in the current language (made at
    each call: the language is chosen after import). It names no sequence and does not
    depend on the answer, so toggling verdicts tells neither which is wrong nor what is
    right."""
    return say(
        "for each backward call, ask which nodes it runs through (autograd.grad runs only "
        "those on a path from the loss to the tensors asked for). It raises the freed-buffer "
        "error if an earlier call without retain_graph=True ran through one of them, the "
        "version-counter error if one of them saved a tensor changed in place since "
        "(optimizer.step() changes in place each parameter that has a .grad; each Linear's "
        "mat2, where it saved one, is its weight, transposed), and nothing otherwise",
        "역전파 호출마다 어느 노드를 지나가는지 따져 보세요. autograd.grad는 손실에서 요청한 "
        "텐서로 가는 경로 위의 노드만 실행합니다. retain_graph=True 없이 실행된 앞선 호출이 그 "
        "노드 가운데 하나를 지나갔다면 해제된 버퍼(freed buffer) 오류가 납니다. 그 노드 가운데 "
        "하나가 저장한 텐서가 그 뒤 제자리에서 바뀌었다면 버전 오류가 납니다. 둘 다 아니면 "
        "오류가 나지 않습니다. optimizer.step()은 .grad가 있는 매개변수를 모두 제자리에서 바꾸고, "
        "Linear가 mat2를 저장했다면 그 mat2는 전치된 가중치입니다")


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
                              '넣고 이 셀을 다시 실행하세요. 각 값은 "freed buffer", "version '
                              'counter", "none" 가운데 하나입니다("해제된 버퍼 오류", "버전 오류", "없음"도 됩니다)'))
    problem = _model_class_problem(model_class, "exercise_1")
    if problem:
        return not_yet(problem)
    given, problem = read_error_names(answer, list(SEQUENCES), _named,
                                      "{" + ", ".join(f'"{label}": ...' for label in SEQUENCES) + "}")
    if problem:
        return not_yet(problem)
    right = {label: _error_raised_by_sequence(_LessonModel, sequence)
             for label, sequence in SEQUENCES.items()}
    if right != {label: _error_raised_by_sequence(model_class, sequence)
                 for label, sequence in SEQUENCES.items()}:
        return not_yet(_not_the_lessons_model())
    wrong = [label for label in SEQUENCES if given[label] != right[label]]
    if not wrong:
        return correct(say("a backward fails when it needs a saved tensor that an earlier "
                           "call freed, or that changed in place since it was saved; a call "
                           "that never runs through a node, or that touches only .grad, leaves "
                           "it whole",
                           "역전파는 필요한 저장된 텐서를 앞선 호출이 해제했거나, 그 텐서가 "
                           "저장된 뒤 제자리에서 바뀌었을 때 실패합니다. 노드를 지나가지 않는 "
                           "호출이나 .grad만 건드리는 호출은 그 노드를 온전히 남겨 둡니다"))
    hint = reasoning_hint()
    return not_yet(say(f"not every verdict is right. A hint: {hint}",
                       f"틀린 판정이 있습니다. 힌트: {hint}"))


# Exercise 2: which changes fix the broken loop? -----------------------------------------
# The loop: STEPS times, (loss1, loss2) from a forward pass, optimizer.zero_grad(),
# loss1.backward(), loss2.backward(), optimizer.step(). Each change replaces the two
# backward calls with the body below; the notebook shows them, tests keep them the same.
# None of them is one of the lesson's five ways as its cells show them.

STEPS = 3


def change_a(model, optimizer, loss1, loss2):
    loss1.backward(retain_graph=True)
    optimizer.zero_grad()
    loss2.backward()


def change_b(model, optimizer, loss1, loss2):
    (loss1 + loss2).backward(retain_graph=True)


def change_c(model, optimizer, loss1, loss2):
    loss1.backward()
    loss2.backward(retain_graph=True)


def change_d(model, optimizer, loss1, loss2):
    params = list(model.parameters())
    grads = torch.autograd.grad(loss1 + loss2, params)
    for p, g in zip(params, grads):
        p.grad = g


def change_e(model, optimizer, loss1, loss2):
    for loss in (loss2, loss1):
        loss.backward(retain_graph=True)


def the_broken_loop(model, optimizer, loss1, loss2):
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
            backward(model, optimizer, loss1, loss2)
            optimizer.step()

    with backward_passes(model.trunk) as passes:
        error = error_raised_by(loop)
    parameters = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    return error, parameters, passes.count


# What can go wrong with a change: the kinds of mistake the one hint names.
RAISES, NO_UPDATE, WRONG_UPDATE, TWO_PASSES = "raises", "no_update", "wrong_update", "two_passes"


def _outcome(model_class, backward, intended, start):
    """None if `backward` does what the loop intends, else the kind of mistake."""
    error, parameters, passes = _train(model_class, backward)
    if error != NO_ERROR:
        return RAISES
    if torch.allclose(parameters, start):
        return NO_UPDATE
    if not torch.allclose(parameters, intended, atol=1e-6):
        return WRONG_UPDATE
    if passes != STEPS:
        return TWO_PASSES
    return None


def changes_hint():
    """The one hint for any wrong, non-empty answer to exercise 2: the kinds of mistake,
    not which change makes them, so that choosing changes one at a time learns nothing."""
    return say(
        "a change can go wrong in three ways: the loop still raises an error; it runs, but "
        "when optimizer.step() runs, .grad does not hold the gradient of loss1 + loss2; or it "
        "trains right but walks the trunk backward twice a step. Follow each change call by "
        "call and ask all three",
        "수정안이 틀리는 경우는 세 가지입니다. 루프에서 여전히 오류가 나거나, 실행은 되지만 "
        "optimizer.step()이 실행될 때 .grad에 loss1 + loss2의 변화도가 들어 있지 않거나, 학습은 "
        "제대로 되지만 스텝마다 공유 계층을 역전파로 두 번 지나가는 경우입니다. 수정안마다 호출을 하나씩 "
        "따라가며 세 가지를 모두 확인하세요")


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


def _outcomes(model_class):
    """{label: None if the change does what the loop intends, else what goes wrong}"""
    intended = _intended(model_class)
    start = torch.nn.utils.parameters_to_vector(_fresh(model_class)[0].parameters()).detach()
    return {label: _outcome(model_class, change, intended, start)
            for label, change in CHANGES.items()}


def exercise_2(answer, model_class=None):
    """answer: the set of letters of the changes (A to E) that make the broken loop train
    on loss1 + loss2, one update per step, with one backward pass through the trunk."""
    last = list(CHANGES)[-1]
    if answer is None:
        return unanswered(say(f"set `answer` to the set of letters (A to {last}) of the "
                              'changes that work, such as {"A", "B"}',
                              f'`answer`에 제대로 동작하는 수정안의 레이블(A부터 {last}까지) 집합을 '
                              f'넣고 이 셀을 다시 실행하세요. 예: {{"A", "B"}}'))
    problem = _model_class_problem(model_class, "exercise_2")
    if problem:
        return not_yet(problem)
    given, hint = read_labels(answer, CHANGES)
    if hint:
        return not_yet(hint)
    if not given:
        return not_yet(say("at least one of the changes works: try each one call by call",
                           "수정안 가운데 적어도 하나는 동작합니다. 수정안마다 호출을 하나씩 "
                           "따라가 보세요"))
    outcomes = _outcomes(_LessonModel)
    if outcomes != _outcomes(model_class):
        return not_yet(_not_the_lessons_model())
    right = {label for label, outcome in outcomes.items() if outcome is None}
    if given != right:
        hint = changes_hint()
        return not_yet(say(f"not this set. A hint: {hint}", f"이 조합은 아닙니다. 힌트: {hint}"))
    return correct(say("one backward pass from both losses, with its gradients in .grad when "
                       "optimizer.step() runs, whether backward puts them there or you do; "
                       "retain_graph=True on that one pass keeps the saved tensors until the "
                       "next forward pass's losses replace them, but costs no pass. A "
                       "zero_grad() between two backward calls drops the first one's "
                       "gradients, retain_graph on the second call comes too late, and "
                       "retaining on both pays for a second pass through the trunk",
                       "필요한 것은 두 손실에서 시작하는 역전파 단계 한 번이고, "
                       "optimizer.step()이 실행될 때 그 변화도가 .grad에 들어 있으면 됩니다. "
                       "역전파가 넣든 직접 넣든 "
                       "상관없습니다. 그 한 번의 호출에 준 retain_graph=True는 다음 순전파 단계의 손실이 "
                       "그 자리를 대신할 때까지 저장된 텐서를 붙잡아 두지만 역전파 단계를 "
                       "늘리지는 않습니다. 두 역전파 호출 사이의 zero_grad()는 첫 호출의 변화도를 "
                       "버리고, 두 번째 호출의 retain_graph는 너무 늦으며, 두 호출 모두에 "
                       "retain_graph를 주면 공유 계층을 한 번 더 지나가는 비용을 치릅니다"))
