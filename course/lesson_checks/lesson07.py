"""Check cells for lesson 07, "Debugging a second-backward error".

Both exercises hand the reader a broken training loop, as a function
`train(encoder, head, opt, x, y, steps)` that returns the loss of every step; the reader
fixes it. The check cell passes the lesson's own `make_net`, `x` and `y`; nothing here
defines the lesson's net. Each exercise first asks for a prediction, made by reading the
loop, and checks it before the fix: the step that fails first, and (exercise 1) the name
that hands it an earlier step's graph or (exercise 2) the operation whose node fails first,
from named choices. A wrong pick gets a hint about that pick, which does not point at the
right one. Each checker:

- builds a fresh net with `make_net()` (its seeding is kept from the reader's random
  numbers) and runs the reader's function for STEPS steps, watching every backward call
  (`spying.watch_backward_calls`);
- refuses a function of this module (the references are private, but importable), and
  a wrapper around one: a reference refuses to run while the reader's function does;
- turns an error into a hint (the freed-buffer and in-place errors by name);
- refuses `retain_graph=True`, and a graph that grows from step to step: the bytes the
  saved tensors of each backward's graph keep alive (`retained_bytes`, read by the spy
  just before each call) must be the same from the second step on (when a call's bytes
  cannot be read, as through a CopySlices node, the weight comparison alone decides);
- compares the trained weights, and the losses returned, with those of the intended fix
  run on a fresh net the same way, so the model learns as the fix makes it learn; a
  wrong fix that runs gets a hint that fits it (weights that never moved: a gradient cut
  on the way, as by the lesson's wrong `detach`).
"""
import contextlib
import math

import torch
import torch.nn.functional as F
from torch import nn

from . import errors
from .answers import kind
from .language import say
from .seeding import seeded
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered

STEPS = 8  # more steps than the lesson's loops: a leak or a stale graph shows up


class _BadSetup(Exception):
    """The check cell was given something else than the lesson's make_net, x and y."""


class _CheckersOwnFunction(Exception):
    """The reader's function called one of this module's references."""


_answer_running = False


@contextlib.contextmanager
def _running_the_answer():
    global _answer_running
    _answer_running = True
    try:
        yield
    finally:
        _answer_running = False


def _refuse_while_the_answer_runs(name):
    """Called first thing in each of the checker's own functions: they refuse to run while
    the reader's answer runs (a wrapper around one, `lambda *args:
    lesson07._unit_rows_out_of_place(*args)`, is no answer). The guard is in the function's
    own body, so no unguarded copy of it exists (no `__wrapped__`, no closure) to call."""
    if _answer_running:
        raise _CheckersOwnFunction(name)


def _fresh_net(make_net):
    """A fresh (encoder, head, optimizer) from the lesson's make_net, which seeds the
    global RNG: run it on a forked RNG, so the reader's random numbers stay as they were."""
    with seeded(0):
        made = make_net()
    if (not isinstance(made, tuple) or len(made) != 3
            or not all(isinstance(m, nn.Module) for m in made[:2])
            or not isinstance(made[2], torch.optim.Optimizer)):
        raise _BadSetup
    return made


def _weights(encoder, head):
    return [p.detach().clone() for module in (encoder, head) for p in module.parameters()]


def _train(train, make_net, x, y):
    """Run `train` on a fresh net: (losses it returned, trained weights)."""
    encoder, head, opt = _fresh_net(make_net)
    with seeded(1):  # a fix that draws random numbers draws the same ones every check
        losses = train(encoder, head, opt, x, y, STEPS)
    return losses, _weights(encoder, head)


def _same(a, b):
    return len(a) == len(b) and all(torch.allclose(s, t, rtol=1e-4, atol=1e-6)
                                    for s, t in zip(a, b))


def _as_losses(returned):
    """The reader's list of STEPS loss values as floats, or None."""
    if not isinstance(returned, (list, tuple)) or len(returned) != STEPS:
        return None
    values = []
    for value in returned:
        if isinstance(value, torch.Tensor) and value.numel() == 1:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        values.append(float(value))
    return values if all(math.isfinite(v) for v in values) else None


def _error_hint(error, name):
    which = errors.which_error(error)
    if which == errors.FREED_BUFFER:
        return say("a backward still reaches into an earlier step's graph, whose saved tensors that "
                   "step's backward freed: "
                   f"run {name} under explain() and look at what one step hands to the next",
                   "이번 역전파가 아직도 앞선 스텝의 그래프에 닿습니다. 그 그래프의 저장된 텐서는 그 스텝의 "
                   f"역전파가 이미 해제했습니다. {name} 함수를 explain() 안에서 실행하고, 한 스텝이 다음 스텝에 "
                   "넘기는 것을 살펴보세요")
    if which == errors.VERSION_COUNTER:
        return say("a backward needs a tensor that was changed in place after autograd saved "
                   f"it: run {name} under explain(), it names the line",
                   "역전파에 필요한 텐서가, autograd가 저장한 뒤에 제자리에서 바뀌었습니다. "
                   f"{name} 함수를 explain() 안에서 실행해 보세요. explain()이 그 줄을 "
                   "알려 줍니다")
    return say(f"your function raised {errors.describe(error)} (it is called as "
               f"answer(encoder, head, opt, x, y, steps={STEPS}))",
               f"함수에서 난 오류: {errors.describe(error)} (함수는 "
               f"answer(encoder, head, opt, x, y, steps={STEPS}) 형태로 호출됩니다)")


def _check(answer, make_net, x, y, *, name, reference, wrong_fixes,
           right_start_hint=None, version_hint=None):
    """The common part of both exercises. `wrong_fixes` maps a function that trains as
    a known wrong fix does to the hint for it; `right_start_hint` is for an answer whose
    first loss is the intended fix's but whose training then goes another way;
    `version_hint` replaces the usual hint for the in-place (version counter) error."""
    if answer is None:
        return unanswered(say(f"fix {name}, then set `answer = {name}` and run this cell again",
                              f"`answer`에 고친 {name} 함수를 넣고(`answer = {name}`) "
                              "이 셀을 다시 실행하세요"))
    if not callable(answer):
        return not_yet(say(f"expected your function, e.g. `answer = {name}`; got {kind(answer)}",
                           f"직접 고친 함수가 와야 하는데(예: `answer = {name}`) "
                           f"{kind(answer)}가 왔습니다"))
    own = not_yet(say(f"that is the checker's own function: fix {name} in the notebook "
                      "and answer with it",
                      f"채점기 자신의 함수를 넘겼습니다. 노트북의 {name} 함수를 고쳐서 "
                      "그 함수로 답하세요"))
    if getattr(answer, "__module__", None) == __name__:
        return own
    try:
        expected_losses, expected = _train(reference, make_net, x, y)
    except _BadSetup:
        return not_yet(say("the check cell passes the lesson's make_net, x and y: run the "
                           "set-up cells again and leave the check cell as it is",
                           "확인 셀은 강의의 make_net, x, y를 넘겨줍니다. 준비 셀들을 다시 "
                           "실행하고, 확인 셀은 그대로 두세요"))
    except Exception:  # make_net, x or y is not the lesson's (redefined?)
        return not_yet(say("the check cell passes the lesson's make_net, x and y, and these do "
                           "not train the lesson's net: run the set-up cells again",
                           "확인 셀은 강의의 make_net, x, y를 넘겨주는데, 지금 이 값들로는 "
                           "강의의 신경망을 학습시킬 수 없습니다. 준비 셀들을 다시 실행하세요"))
    with watch_backward_calls() as calls:
        try:
            with _running_the_answer():
                returned, trained = _train(answer, make_net, x, y)
        except _CheckersOwnFunction:
            return own
        except Exception as error:  # the reader's code: report it, don't crash the cell
            if version_hint and errors.which_error(error) == errors.VERSION_COUNTER:
                return not_yet(version_hint)
            return not_yet(_error_hint(error, name))
    if not calls:
        return not_yet(say("backward() was never called: each step needs one backward",
                           "backward()가 한 번도 호출되지 않았습니다. 스텝마다 역전파가 "
                           "한 번 필요합니다"))
    if any(call.retain_graph for call in calls):
        return not_yet(say("it runs, but a backward keeps its graph (retain_graph=True): "
                           "find what reaches back into an earlier step and cut that instead",
                           "실행은 되지만, 그래프를 유지하는 역전파가 있습니다(retain_graph=True). "
                           "그 대신 앞선 스텝까지 거슬러 닿는 것을 찾아 그 연결을 끊으세요"))
    if len(calls) != STEPS:
        return not_yet(say(f"{len(calls)} backward calls for {STEPS} steps: one backward "
                           "and one optimizer step per step",
                           f"{STEPS}스텝에 역전파 호출이 {len(calls)}번입니다. 스텝마다 "
                           "역전파 한 번, `optimizer.step()` 호출 한 번이어야 합니다"))
    sizes = [call.retained_bytes for call in calls]
    # A size that cannot be read (a graph through CopySlices, as a row-by-row write into a
    # new tensor makes) is no sign of growth: then the weights alone decide, below.
    if None not in sizes and len(set(sizes[1:])) != 1:
        return not_yet(say("the graph each backward runs over grows from step to step: "
                           "does something carry one step's graph into the next?",
                           "역전파가 지나가는 그래프가 스텝마다 커집니다. 무언가가 한 스텝의 "
                           "그래프를 다음 스텝으로 넘기고 있지 않나요?"))
    losses = _as_losses(returned)
    if not _same(trained, expected):
        start = _weights(*_fresh_net(make_net)[:2])
        if any(torch.equal(t, s) and not torch.equal(e, s)
               for t, e, s in zip(trained, expected, start)):
            return not_yet(say("it runs, but some weights never change: no gradient reaches "
                               "them (a detach or no_grad on the way?), and the intended fix "
                               "trains every parameter",
                               "실행은 되지만, 전혀 바뀌지 않는 가중치가 있습니다. 그 가중치에는 "
                               "변화도가 닿지 않습니다(도중에 detach나 no_grad가 있나요?). 의도한 "
                               "해결책은 모든 매개변수를 학습시킵니다"))
        for wrong_fix, hint in wrong_fixes.items():
            if _same(trained, _train(wrong_fix, make_net, x, y)[1]):
                return not_yet(hint)
        if right_start_hint and losses and math.isclose(losses[0], expected_losses[0],
                                                        rel_tol=1e-4, abs_tol=1e-6):
            return not_yet(right_start_hint)
        return not_yet(say("it runs, but the trained weights differ from the intended fix's: "
                           "keep the loss the same computation, with one backward and one "
                           "optimizer step per step",
                           "실행은 되지만, 학습된 가중치가 의도한 해결책의 가중치와 다릅니다. "
                           "손실은 같은 계산으로 두고, 스텝마다 역전파 한 번과 "
                           "`optimizer.step()` 호출 한 번을 하세요"))
    if losses is None or not _same([torch.tensor(losses)], [torch.tensor(expected_losses)]):
        return not_yet(say(f"the weights are right, but return the list of the {STEPS} "
                           "losses, loss.item() of each step, as the given function does",
                           "가중치는 맞습니다. 다만 주어진 함수처럼 각 스텝의 loss.item()을 모은 "
                           f"리스트, 즉 손실 {STEPS}개를 반환하세요"))
    return correct(say(f"{STEPS} steps, one backward each and none reaching into an earlier "
                       f"step; the loss went from {losses[0]:.3f} to {losses[-1]:.3f}.",
                       f"{STEPS}스텝 동안 스텝마다 역전파를 한 번씩 했고, 앞선 스텝에 닿은 "
                       "역전파는 없습니다. "
                       f"손실은 {losses[0]:.3f}에서 {losses[-1]:.3f}까지 줄었습니다."))


# Exercise 1: an anchor for the features, cached on first use.

def _anchored(encoder, head, opt, x, y, steps, anchor_of):
    """The exercise's loop, with the anchor made by `anchor_of(features, anchor)`."""
    _refuse_while_the_answer_runs("_anchored")
    anchor, losses = None, []
    for _ in range(steps):
        features = encoder(x)
        anchor = anchor_of(features, anchor)
        loss = F.mse_loss(head(features), y) + F.mse_loss(features, anchor)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _anchor_kept_from_before_training(encoder, head, opt, x, y, steps):
    """The intended fix: the first step's features, as values with no graph behind them.
    Private, like the other references here: a check refuses this module's functions."""
    return _anchored(encoder, head, opt, x, y, steps,
                     lambda features, anchor: features.detach() if anchor is None else anchor)


def _anchor_made_every_step(encoder, head, opt, x, y, steps):
    """A wrong fix: an anchor made again in every step, equal to the features."""
    return _anchored(encoder, head, opt, x, y, steps,
                     lambda features, anchor: features.detach())


LOOP_NAMES = ("anchor", "losses", "features", "loss", "encoder", "head", "opt", "x", "y",
              "steps")  # the names exercise 1's loop sets or reads


def _not_the_carrier(name):
    """Why `name`, a name of exercise 1's loop that is not the carrier, hands no step an
    earlier step's graph; the hint says nothing of which name does."""
    if name == "features":
        return say("features is made afresh, by encoder(x), in every step: its graph is that "
                   "step's own",
                   "features는 매 스텝 encoder(x)로 새로 만들어지므로, 그 그래프는 그 스텝에만 "
                   "속합니다")
    if name == "loss":
        return say("loss is made afresh in every step, and its backward runs in that same step",
                   "loss는 매 스텝 새로 만들어지고, 그 역전파도 같은 스텝 안에서 실행됩니다")
    if name == "losses":
        return say("losses holds loss.item() values: plain numbers, with no graph",
                   "losses에는 loss.item() 값, 즉 그래프가 없는 보통의 숫자가 들어 있습니다")
    if name in ("encoder", "head", "opt"):
        return say(f"{name} holds parameters, and a parameter is a leaf: no graph behind it",
                   f"{name}에는 매개변수가 들어 있고, 매개변수는 잎 텐서여서 거슬러 올라갈 "
                   "그래프가 없습니다")
    return say(f"{name} is data that the loop only reads: it has no grad_fn",
               f"{name}에는 루프가 읽기만 하는 데이터가 들어 있고, grad_fn이 없습니다")


def _given(value):
    """What the reader gave: a short int or string as written (-1, 'in-place'), anything
    else by its kind ('a float')."""
    if isinstance(value, (int, str)) and not isinstance(value, bool) and len(repr(value)) <= 30:
        return repr(value)
    return kind(value)


def _prediction_hint(failing_step, carrier):
    """None when exercise 1's prediction is right, else a verdict. A wrong step and a wrong
    name get hints of their own, each about the reader's pick: the step's hint names no
    name, and the name's hint no step."""
    # The right prediction (kept out of the docstrings, which Jupyter shows): step 1, and
    # `anchor`, set in step 0 from features that have a graph, hands step 0's graph to step 1.
    if failing_step is None or carrier is None:
        return unanswered(say(
            "first, before running the loop, answer in the cell: failing_step, the first "
            "step that fails (0, 1, 2, ...), and carrier, the name (a string) that hands "
            "that step an earlier step's graph",
            "먼저 루프를 실행하기 전에 셀에 답하세요. failing_step에는 처음 실패하는 "
            "스텝(0, 1, 2, ...)을, carrier에는 그 스텝에 앞선 스텝의 그래프를 넘겨주는 "
            "이름(문자열)을 적습니다"))
    if isinstance(failing_step, bool) or not isinstance(failing_step, int) or failing_step < 0:
        return not_yet(say(f"failing_step is a step number, 0, 1, 2, ...; got {_given(failing_step)}",
                           "failing_step은 스텝 번호(0, 1, 2, ...)인데 받은 값은 "
                           f"{_given(failing_step)}입니다"))
    if not isinstance(carrier, str):
        return not_yet(say(f"carrier is a name from the loop, as a string; got {kind(carrier)}",
                           "carrier는 루프에 나오는 이름을 문자열로 적은 것인데 받은 값은 "
                           f"{kind(carrier)}입니다"))
    if failing_step == 0:
        return not_yet(say(
            "trace step 0 by hand: when its backward runs, has any earlier backward freed "
            "what it needs, or has anything it needs been changed in place?",
            "스텝 0을 손으로 따라가 보세요. 그 역전파가 실행될 때, 그 역전파에 필요한 텐서를 "
            "앞선 역전파가 해제했나요? 아니면 필요한 텐서가 제자리에서 바뀌었나요?"))
    if failing_step != 1:
        return not_yet(say(
            f"for step {failing_step} to be the first to fail, every step before it must run "
            "through: trace the steps in order from step 0. At each backward, what does the "
            "loss lead back to, and has an earlier backward freed what that graph saved?",
            f"스텝 {failing_step}에서 처음 실패하려면 그 앞의 스텝은 모두 무사히 지나가야 합니다. "
            "스텝 0부터 차례로 따라가 보세요. 역전파할 때마다 손실은 어디까지 거슬러 올라가고, "
            "그 그래프가 저장한 텐서를 앞선 역전파가 이미 해제했나요?"))
    name = carrier.strip()
    if name == "anchor":
        return None
    if name not in LOOP_NAMES:
        return not_yet(say(
            f"carrier is one name of the loop, as it is written there; {carrier!r} is not one",
            f"carrier는 루프에 적힌 그대로의 이름 하나입니다. 루프에 {carrier!r} 같은 이름은 "
            "없습니다"))
    return not_yet(say(
        f"{_not_the_carrier(name)}. For each name a step reads, ask in which step its "
        "tensor was made",
        f"{_not_the_carrier(name)}. 스텝이 읽는 이름마다, 그 텐서가 어느 스텝에서 "
        "만들어졌는지 따져 보세요"))


def exercise_1(answer, make_net=None, x=None, y=None, failing_step=None,
               carrier=None) -> Verdict:
    """Exercise 1: first the prediction, made by reading the loop (failing_step, the first
    step that fails; carrier, the name, as a string, that hands that step an earlier
    step's graph), then the fixed function: its penalty still pulls the features towards
    those the encoder gave before training, and no step's backward reaches an earlier
    step."""
    # The answer is in _prediction_hint's comment, not here: Shift+Tab shows this docstring.
    prediction = _prediction_hint(failing_step, carrier)
    if prediction is not None:
        return prediction
    return _check(answer, make_net, x, y, name="train_with_anchor",
                  reference=_anchor_kept_from_before_training,
                  wrong_fixes={_anchor_made_every_step: say(
                      "it runs, but the penalty never pulls the features back (is the anchor "
                      "made again in every step, equal to the features it is compared "
                      "with?). The anchor is the features from before training, made once, "
                      "and the penalty stays in the loss",
                      "실행은 되지만, 페널티가 특징을 전혀 끌어당기지 못합니다(기준점을 매 "
                      "스텝 다시 만들어서, 비교하는 특징과 같아진 것은 아닌가요?). 기준점은 "
                      "학습 전의 특징으로 한 번만 만들고, 페널티는 손실에 그대로 둡니다")})


# Exercise 2: rows scaled to unit length, one row at a time, in place, inside a helper.

def _unit_rows_out_of_place(encoder, head, opt, x, y, steps):
    """The intended fix: every row divided by its length at once, into a new tensor."""
    _refuse_while_the_answer_runs("_unit_rows_out_of_place")
    losses = []
    for _ in range(steps):
        features = encoder(x)
        features = features / features.norm(dim=1, keepdim=True)
        loss = F.mse_loss(head(features), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _rows_not_scaled(encoder, head, opt, x, y, steps):
    """A wrong fix: the normalisation dropped (what rebinding a row's name in the loop
    does: `row = row / row.norm()` leaves the features as they were)."""
    _refuse_while_the_answer_runs("_rows_not_scaled")
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(head(encoder(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


OPS = ("tanh", "norm", "division", "head")  # exercise 2's choices for failing_op
OP_WORDS = {"tanh": "tanh", "norm": "norm", "division": "division", "division(thewrite)": "division",
            "head": "head", "노름": "norm", "나눗셈": "division", "헤드": "head"}  # spaces removed


def _op(failing_op):
    """The choice `failing_op` names (one of OPS), read loosely (case, spaces), or None."""
    return OP_WORDS.get("".join(failing_op.lower().split()))


def _reason_hint(error_step, failing_op):
    """None when exercise 2's prediction is right, else a verdict: a hint about the
    reader's pick, the step's first; no hint names the right choice."""
    # The right prediction (kept out of the docstrings, which Jupyter shows): step 0, and
    # the norm, whose node is LinalgVectorNormBackward0. Each row's norm saved that row, and
    # the helper's write into the row then changes it; step 0's backward meets those nodes
    # before TanhBackward0 (made earlier, whose saved output the writes change too).
    choices = ", ".join(f'"{op}"' for op in OPS)
    if error_step is None or failing_op is None:
        return unanswered(say(
            "first, before running anything, answer in the cell: error_step, the first step "
            "that fails (0, 1, 2, ...), and failing_op, the operation whose node fails "
            f"first (one of {choices})",
            "먼저 아무것도 실행하기 전에 셀에 답하세요. error_step에는 처음 실패하는 스텝(0, 1, "
            "2, ...)을, failing_op에는 노드가 가장 먼저 실패하는 연산을 적습니다"
            f"({choices} 중 하나)"))
    if isinstance(error_step, bool) or not isinstance(error_step, int) or error_step < 0:
        return not_yet(say(f"error_step is a step number, 0, 1, 2, ...; got {_given(error_step)}",
                           "error_step은 스텝 번호(0, 1, 2, ...)인데 받은 값은 "
                           f"{_given(error_step)}입니다"))
    if not isinstance(failing_op, str):
        return not_yet(say(f"failing_op is one of {choices}, as a string; got {kind(failing_op)}",
                           f"failing_op은 {choices} 중 하나를 문자열로 적은 것인데 받은 값은 "
                           f"{kind(failing_op)}입니다"))
    if error_step != 0:
        return not_yet(say(
            f"for step {error_step} to be the first to fail, every step before it must run "
            "through: trace the steps in order from step 0. What does autograd save in each "
            "forward pass, and what happens to each of those tensors before that step's backward?",
            f"스텝 {error_step}에서 처음 실패하려면 그 앞의 스텝은 모두 무사히 지나가야 합니다. "
            "스텝 0부터 차례로 따라가 보세요. 순전파 단계마다 autograd는 무엇을 저장하고, 그 "
            "스텝의 역전파 전에 그 텐서들에 무슨 일이 일어나나요?"))
    op = _op(failing_op)
    if op == "norm":
        return None
    if op == "tanh":
        return not_yet(say(
            "tanh's node saved its output, and the writes change that too, but backward meets "
            "the nodes nearer the loss first: of the nodes whose saved tensors the writes "
            "change, which is nearest the loss?",
            "tanh의 노드가 저장한 출력도 행에 쓰는 연산으로 바뀌지만, 역전파는 손실에 가까운 "
            "노드부터 만납니다. 저장한 텐서가 이 쓰기로 바뀌는 노드 가운데 손실에 가장 가까운 "
            "노드는 무엇인가요?"))
    if op == "division":
        return not_yet(say(
            "the division is the write: it changes the rows, and the node that fails is one "
            "whose saved tensor a write changed afterwards. Which operations save a tensor, "
            "and which of those tensors does the loop in `unit_rows` change after they are saved?",
            "나눗셈은 행에 쓰는 연산, 즉 행을 바꾸는 쪽입니다. 실패하는 노드는 저장한 텐서가 "
            "나중에 이런 쓰기로 바뀐 노드입니다. 어떤 연산이 텐서를 저장하고, `unit_rows`의 "
            "루프는 그중 어떤 텐서를 저장된 뒤에 바꾸나요?"))
    if op == "head":
        return not_yet(say(
            "the head runs after unit_rows has written every row: nothing it saved changes "
            "afterwards. Which operations save a tensor, and which of those tensors does the "
            "loop in `unit_rows` change after they are saved?",
            "헤드는 unit_rows가 모든 행에 쓴 뒤에 실행됩니다. 헤드가 저장한 텐서는 그 뒤로 "
            "바뀌지 않습니다. 어떤 연산이 텐서를 저장하고, `unit_rows`의 루프는 그중 어떤 "
            "텐서를 저장된 뒤에 바꾸나요?"))
    if "backward" in failing_op.lower() or "copyslices" in failing_op.lower():
        return not_yet(say(
            f"failing_op is one of {choices}, chosen by reading the loop; got "
            f"{_given(failing_op)}. A node's name is what explain() prints: run it afterwards, "
            "to confirm your choice",
            f"failing_op은 루프를 읽고 고르는 {choices} 중 하나인데 받은 값은 "
            f"{_given(failing_op)}입니다. 노드 이름은 explain()이 출력하는 것입니다. 고른 "
            "다음에 explain()을 실행해 확인하세요"))
    return not_yet(say(
        f"failing_op is one of {choices}; got {_given(failing_op)}",
        f"failing_op은 {choices} 중 하나인데 받은 값은 {_given(failing_op)}입니다"))


def exercise_2(answer, make_net=None, x=None, y=None, error_step=None,
               failing_op=None) -> Verdict:
    """Exercise 2: first the prediction, made by reading the loop (error_step, the first
    step that fails; failing_op, the operation whose node fails first, one of the named
    choices), then the fixed function: the head still sees rows of length 1, and it trains
    as the intended fix does."""
    # The answer is in _reason_hint's comment, not here: Shift+Tab shows this docstring.
    prediction = _reason_hint(error_step, failing_op)
    if prediction is not None:
        return prediction
    in_place = say("a backward still needs a tensor that was changed in place after "
                   "autograd saved it: which tensors did autograd save from the features, "
                   "and does your helper still write into one of them?",
                   "autograd가 저장한 뒤 제자리에서 바뀐 텐서를 아직 필요로 하는 역전파가 "
                   "있습니다. autograd가 특징에서 저장한 텐서는 무엇이고, 여러분의 도우미 "
                   "함수가 아직 그중 하나에 쓰고 있지 않나요?")
    hidden = say("the first loss is right, but training then differs: part of the "
                 "normalisation is hidden from autograd (a .detach(), .data or "
                 "torch.no_grad()), and backward must see both the division and the norm",
                 "첫 손실은 맞지만, 그다음 학습이 다릅니다. 정규화의 일부가 autograd에 "
                 "가려져 있습니다(.detach(), .data 또는 torch.no_grad()). 역전파는 "
                 "나눗셈과 노름을 모두 보아야 합니다")
    return _check(answer, make_net, x, y, name="train_on_directions",
                  reference=_unit_rows_out_of_place,
                  wrong_fixes={_rows_not_scaled: say(
                      "it runs, but the rows are no longer scaled to length 1: keep the "
                      "division, without changing in place a tensor that autograd saved",
                      "실행은 되지만, 행의 길이가 더 이상 1로 맞춰지지 않습니다. 나눗셈은 "
                      "그대로 두되, autograd가 저장한 텐서를 제자리에서 바꾸지 마세요")},
                  right_start_hint=hidden, version_hint=in_place)
