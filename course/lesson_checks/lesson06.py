"""Check cells for lesson 06, "Where second backward calls come from".

The lesson defines its own models; the checkers build small set-ups of their own, the
ones the exercise text describes (the lesson's layers and data shapes, seeded here
without touching the reader's random numbers):

- exercise 1 runs the reader's chunk-by-chunk training function on an `nn.LSTM` and
  the lesson's two sine waves, watching every backward call, optimizer step and forward
  pass (a chunk's forward run twice, to build its graph again, is no answer), and
  compares the trained weights with those of truncated BPTT over two chunks (the state's
  graph carried from chunk 0 into chunk 1, cut before chunk 2; one step per two chunks);
- exercise 2 runs each of three sequences of calls on real PyTorch and reads which
  error, if any, it raises (`errors.error_raised_by`): the key is computed, not stored.
  A wrong answer gets the reasoning to follow, the same whichever sequences are wrong,
  so that trying labels one at a time tells the reader nothing.

The reference functions and the sequences are private and kept out of `__all__`. Each
refuses to run unless the checker itself called it: it walks the calling frames up to the
checker's `_trained_weights`, and a frame outside lesson_checks on the way (the reader's
function, whatever module globals it resets) or a `_trained_weights` running the reader's
answer (the reference handed in as it is, or through `functools.partial`) means a refusal.
Nothing the reader's code can set decides it. The refusal is in the reference's own body,
not in a decorator, so there is no unguarded function behind it (`__wrapped__`, a closure)
to call.
"""
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

from . import errors
from .answers import kind
from .language import say
from .seeding import seeded
from .spying import watch_backward_calls
from .verdict import Verdict, correct, not_yet, unanswered


def _parameters(*modules):
    return [p for module in modules for p in module.parameters()]


# Exercise 1: truncated backpropagation through time over two chunks, with an LSTM.

LEARNING_RATE = 0.1
CHUNKS_PER_STEP = 2
_STEP = "step"  # what the optimizer's step hook writes among the backward calls


class _CheckersOwnFunction(Exception):
    """Raised by a reference function called while the reader's answer runs."""


_CHECKERS_FOLDER = os.path.dirname(os.path.abspath(__file__))


def _is_the_checkers(frame):
    return os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _CHECKERS_FOLDER


def _refuse_unless_the_checker_calls(name):
    """The first line of each of the checker's own functions: a wrapper around one,
    `lambda *args: lesson06._truncated_bptt(*args)`, is no answer. The calling frames
    decide, not a flag: from the function's caller up, every frame must be the checker's
    own until a `_trained_weights`, and no `_trained_weights` on the whole stack may be
    running the reader's answer."""
    frame, called_by_the_checker = sys._getframe(2), False  # from the function's caller
    while frame is not None:
        trains = _is_the_checkers(frame) and frame.f_code.co_name == "_trained_weights"
        if trains and frame.f_locals.get("is_the_answer", True):
            raise _CheckersOwnFunction(name)
        if not (called_by_the_checker or _is_the_checkers(frame)):
            raise _CheckersOwnFunction(name)
        called_by_the_checker = called_by_the_checker or trains
        frame = frame.f_back
    if not called_by_the_checker:
        raise _CheckersOwnFunction(name)


def waves_in_chunks():
    """The lesson's data: two sine waves of 41 points, as 4 chunks of (inputs, targets),
    each of shape (2 waves, 10 steps, 1 feature); the targets are the next values."""
    t = torch.linspace(0, 6, 41)
    waves = torch.stack([t.sin(), (t + 1).sin()]).unsqueeze(-1)
    return list(zip(waves[:, :-1].split(10, dim=1), waves[:, 1:].split(10, dim=1)))


def lstm_task(seed=1):
    """(lstm, head, chunks): nn.LSTM(1, 6, batch_first=True), nn.Linear(6, 1), the waves."""
    with seeded(seed):
        return nn.LSTM(1, 6, batch_first=True), nn.Linear(6, 1), waves_in_chunks()


def _truncated_bptt(lstm, head, chunks, optimizer):
    """The reference: chunks 0-1, 2-3, ... are pairs; the state carries its graph
    within a pair and only its value into the next; one step per pair, on the
    gradient of the pair's two losses added. Private, so that
    `answer = lesson06._truncated_bptt` is not what tab completion offers."""
    _refuse_unless_the_checker_calls("_truncated_bptt")
    _train_in_pairs(lstm, head, chunks, optimizer, carry=lambda state: tuple(s.detach() for s in state))


def _train_in_pairs(lstm, head, chunks, optimizer, carry):
    """One step per pair of chunks, on the pair's two losses added; `carry` gives, from the
    state the previous pair ended with, the state the next pair starts from."""
    _refuse_unless_the_checker_calls("_train_in_pairs")
    state = None
    for start in range(0, len(chunks), CHUNKS_PER_STEP):
        if state is not None:
            state = carry(state)
        loss = 0
        for inputs, targets in chunks[start:start + CHUNKS_PER_STEP]:
            outputs, state = lstm(inputs, state)
            loss = loss + F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _cut_every_chunk(step_every_chunk):
    """Wrong answers worth their own hint: the state's graph cut before every chunk (as in
    section 2), so the second chunk's loss never reaches the first chunk's steps."""
    def train(lstm, head, chunks, optimizer):
        _refuse_unless_the_checker_calls("_cut_every_chunk")
        state = None
        optimizer.zero_grad()
        for k, (inputs, targets) in enumerate(chunks):
            if state is not None:
                state = tuple(s.detach() for s in state)
            if step_every_chunk:
                optimizer.zero_grad()
            outputs, state = lstm(inputs, state)
            F.mse_loss(head(outputs), targets).backward()
            if step_every_chunk or k % CHUNKS_PER_STEP == CHUNKS_PER_STEP - 1:
                optimizer.step()
                optimizer.zero_grad()
    return train


def _state_from_zeros_each_chunk(lstm, head, chunks, optimizer):
    """A wrong answer worth its own hint: no error, but no state carried across either."""
    _refuse_unless_the_checker_calls("_state_from_zeros_each_chunk")
    optimizer.zero_grad()
    for k, (inputs, targets) in enumerate(chunks):
        outputs, _ = lstm(inputs)
        F.mse_loss(head(outputs), targets).backward()
        if k % CHUNKS_PER_STEP == CHUNKS_PER_STEP - 1:
            optimizer.step()
            optimizer.zero_grad()


def _state_from_zeros_each_pair(lstm, head, chunks, optimizer):
    """A wrong answer worth its own hint: the state's graph carried within a pair, but
    each pair started from a zero state instead of the state the previous pair ended with."""
    _refuse_unless_the_checker_calls("_state_from_zeros_each_pair")
    _train_in_pairs(lstm, head, chunks, optimizer, carry=lambda state: None)


def _time_steps(inputs):
    """How many time steps a forward pass of the (batch_first) LSTM ran over."""
    if not isinstance(inputs, torch.Tensor):
        return 0
    return inputs.shape[1] if inputs.dim() == 3 else inputs.shape[0] if inputs.dim() == 2 else 0


def _trained_weights(train, events=None, is_the_answer=False, forwards=None, blank_steps=None):
    """A fresh LSTM task and SGD optimizer, `train` run on them: the trained weights.
    events: a list to which each optimizer step adds _STEP. is_the_answer: `train` is
    the reader's function (the checker's own functions refuse to run under it).
    forwards: a list to which each forward pass of the LSTM adds its time steps.
    blank_steps: a list to which each optimizer step that finds a parameter's .grad
    None or all zeros adds _STEP."""
    lstm, head, chunks = lstm_task()
    optimizer = torch.optim.SGD(_parameters(lstm, head), lr=LEARNING_RATE)
    if events is not None:
        optimizer.register_step_post_hook(lambda *args: events.append(_STEP))
    if blank_steps is not None:
        optimizer.register_step_pre_hook(lambda *args: blank_steps.extend(
            [_STEP] if any(p.grad is None or not p.grad.any() for p in _parameters(lstm, head))
            else []))
    if forwards is not None:
        lstm.register_forward_hook(lambda module, inputs, output: forwards.append(
            _time_steps(inputs[0] if inputs else None)))
    train(lstm, head, chunks, optimizer)
    return [p.detach().clone() for p in _parameters(lstm, head)]


def _same(weights, others):
    return all(torch.allclose(a, b, atol=1e-6) for a, b in zip(weights, others))


def _kept_for_nothing(events):
    """True if a backward kept its graph (retain_graph=True) and no backward came after it
    before the next step or the end: nothing went back through what it kept."""
    return any(event != _STEP and event.retain_graph
               and (k + 1 == len(events) or events[k + 1] == _STEP)
               for k, event in enumerate(events))


def _own_function():
    return say("that is the checker's own function: fix train_lstm_on_chunks in the "
               "notebook and answer with it",
               "채점기 자신의 함수를 넘겼습니다. 노트북의 train_lstm_on_chunks 함수를 고쳐서 그 "
               "함수로 답하세요")


def _hint_for_error(error):
    """The hint for an error that the reader's training function raised: the reasoning
    to follow for its kind, not the line to write."""
    if isinstance(error, _CheckersOwnFunction):
        return _own_function()
    which = errors.which_error(error)
    if which == errors.FREED_BUFFER:
        return say("a backward went back through saved tensors that an earlier backward had "
                   "freed. Which chunks should each backward reach? If it should not reach "
                   "them, what carries it there? If it should, what must the earlier backward "
                   "do, or must there be two backward calls at all?",
                   "앞선 역전파가 이미 해제한 저장된 텐서를 어떤 역전파가 다시 지나가려 "
                   "했습니다. 각 역전파는 어느 청크까지 닿아야 할까요? 닿지 말아야 한다면 무엇이 "
                   "역전파를 그곳까지 이어 주고 있나요? 닿아야 한다면 앞선 역전파는 무엇을 해야 "
                   "할까요? 아니면 역전파가 꼭 두 번이어야 할까요?")
    if which == errors.VERSION_COUNTER:
        return say("a backward reached a chunk whose weights the optimizer had changed in "
                   "place since that chunk's forward pass: which backward calls must come "
                   "before a step, and which graphs may a backward after it reach?",
                   "어떤 역전파가 한 청크까지 닿았는데, 그 청크의 순전파가 끝난 뒤 옵티마이저가 "
                   "가중치를 제자리 연산으로 바꾸어 놓았습니다. 어떤 역전파가 스텝보다 먼저 와야 하고, "
                   "스텝 다음의 역전파는 어느 그래프까지 닿아도 될까요?")
    if isinstance(error, AttributeError) and "tuple" in str(error):
        return say("the LSTM's state is a tuple (h, c), and a tuple has no tensor methods",
                   "LSTM의 상태는 튜플 (h, c)이고, 튜플에는 텐서의 메소드가 없습니다")
    if isinstance(error, (TypeError, AttributeError)) and "NoneType" in str(error):
        return say("the state is None before the first chunk: only a real state can be cut",
                   "첫 번째 청크 전에는 상태가 None입니다. 실제 상태가 있어야 끊을 수 있습니다")
    return say(f"your function raised {errors.describe(error)} (it is called as "
               "answer(lstm, head, chunks, optimizer))",
               f"함수에서 난 오류: {errors.describe(error)} (함수는 answer(lstm, head, chunks, "
               "optimizer) 형태로 호출됩니다)")


def _hint_for_weights(trained):
    """The hint for a function that runs but trains other weights than the reference."""
    if any(_same(trained, _trained_weights(_cut_every_chunk(every)))
           for every in (False, True)):
        return say("it runs, but each chunk's loss reaches only its own chunk's steps: the "
                   "second chunk of a pair should send gradients back through the first",
                   "실행은 되지만, 각 청크의 손실이 자기 청크의 시점에만 닿습니다. 한 쌍의 두 "
                   "번째 청크는 첫 번째 청크까지 변화도를 돌려보내야 합니다")
    if _same(trained, _trained_weights(_state_from_zeros_each_chunk)):
        return say("it runs, but every chunk starts from a zero state, as if the chunks "
                   "were separate sequences: the state a chunk ends with should start the "
                   "next one",
                   "실행은 되지만, 청크들이 서로 다른 시퀀스인 것처럼 모든 청크가 0인 상태에서 "
                   "시작합니다. 한 청크가 끝날 때의 상태로 다음 청크를 시작해야 합니다")
    if _same(trained, _trained_weights(_state_from_zeros_each_pair)):
        return say("it runs, but each pair starts from a zero state: the state the previous "
                   "pair ended with should start the next one, only without its graph",
                   "실행은 되지만, 각 청크 쌍이 0인 상태에서 시작합니다. 앞 쌍이 끝날 때의 상태로 "
                   "다음 쌍을 시작하되, 그 그래프는 빼고 값만 가져가야 합니다")
    return say("it runs, but the trained weights differ from truncated BPTT's over two "
               "chunks: which gradients are in .grad when the optimizer steps, and how "
               "many steps are there?",
               "실행은 되지만, 학습된 가중치가 두 청크에 걸친 truncated BPTT의 가중치와 다릅니다. "
               "`optimizer.step()`을 호출할 때 .grad에는 어떤 변화도가 들어 있고, 스텝은 몇 "
               "번인가요?")


def exercise_1(answer) -> Verdict:
    """A function (lstm, head, chunks, optimizer) that trains with truncated BPTT over
    two chunks: one step per pair of chunks, on the gradient of both chunks'
    losses, the second reaching back through the first; no graph kept for nothing."""
    if answer is None:
        return unanswered(say("fix train_lstm_on_chunks, then set "
                              "`answer = train_lstm_on_chunks` and run this cell again",
                              "`answer`에 고친 train_lstm_on_chunks 함수를 "
                              "넣고(`answer = train_lstm_on_chunks`) 이 셀을 다시 실행하세요"))
    if not callable(answer):
        return not_yet(say(f"expected your function, e.g. `answer = train_lstm_on_chunks`; "
                           f"got {kind(answer)}",
                           f"직접 고친 함수가 와야 하는데(예: `answer = train_lstm_on_chunks`) "
                           f"{kind(answer)}가 왔습니다"))
    if getattr(answer, "__module__", None) == __name__:
        return not_yet(_own_function())
    forwards, blank_steps = [], []
    with watch_backward_calls() as events:
        try:
            trained = _trained_weights(answer, events, is_the_answer=True, forwards=forwards,
                                       blank_steps=blank_steps)
        except Exception as error:  # the reader's code: report it, don't crash the cell
            return not_yet(_hint_for_error(error))
    if not any(event != _STEP for event in events):
        return not_yet(say("backward() was never called: the chunks' losses need a backward",
                           "backward()가 한 번도 호출되지 않았습니다. 청크의 손실로 역전파해야 "
                           "합니다"))
    if not _same(trained, _trained_weights(_truncated_bptt)):
        return not_yet(_hint_for_weights(trained))
    if _kept_for_nothing(events):
        return not_yet(say("right weights, but a backward keeps its graph (retain_graph=True) "
                           "and no backward goes back through it before the step: what does it "
                           "keep, and for whom?",
                           "가중치는 맞지만, 그래프를 유지하는 역전파(retain_graph=True)가 있는데 "
                           "스텝 전에 그 그래프를 다시 지나가는 역전파가 없습니다. 누구를 위해 "
                           "무엇을 붙잡아 두는 걸까요?"))
    time_steps = sum(_time_steps(inputs) for inputs, _ in waves_in_chunks())
    if sum(forwards) > time_steps:
        return not_yet(say(f"right weights, but the LSTM ran forward over {sum(forwards)} time "
                           f"steps for the chunks' {time_steps}: each chunk's forward should run "
                           "once; keep its graph for the backward that needs it instead of "
                           "building it again",
                           f"가중치는 맞지만, 청크의 시점은 모두 {time_steps}개인데 LSTM은 시점 "
                           f"{sum(forwards)}개에 걸쳐 순전파했습니다. 각 청크의 순전파는 한 번만 "
                           "해야 합니다. 그래프를 다시 만들지 말고, 처음 만든 그래프를 그 "
                           "그래프가 필요한 역전파까지 남겨 두세요"))
    if blank_steps:
        return not_yet(say(f"right weights, but {len(blank_steps)} of the optimizer's steps found "
                           "a parameter's .grad empty or zero: the weights should change by "
                           "those steps, on the pairs' gradients, not by hand",
                           f"가중치는 맞지만, 옵티마이저의 스텝 가운데 {len(blank_steps)}번은 "
                           "어떤 매개변수의 .grad가 비어 있거나 0일 때 진행되었습니다. 가중치는 "
                           "직접 바꾸지 말고, 각 쌍의 변화도로 진행하는 그 스텝으로 바꾸어야 합니다"))
    steps = sum(event == _STEP for event in events)
    pairs = len(waves_in_chunks()) // CHUNKS_PER_STEP
    if steps != pairs:
        return not_yet(say(f"right weights, but the optimizer you were given stepped {steps} "
                           f"times: the exercise asks for its step, once per pair of chunks",
                           f"가중치는 맞지만, 주어진 옵티마이저로 스텝을 {steps}번 진행했습니다. "
                           "연습 문제는 청크 쌍마다 그 옵티마이저의 스텝을 한 번씩 "
                           "요구합니다"))
    return correct(say(f"{len(waves_in_chunks())} chunks, {steps} steps, and the weights of "
                       "truncated BPTT over two chunks: the state's graph goes on within a "
                       "pair, only its value into the next.",
                       f"청크 {len(waves_in_chunks())}개, 스텝 {steps}번이고, 가중치는 두 청크에 "
                       "걸친 truncated BPTT와 같습니다. 상태의 그래프는 한 쌍 안에서만 "
                       "이어지고, 다음 쌍으로는 값만 넘어갑니다."))


# Exercise 2: which error does each sequence of calls raise?

bce = F.binary_cross_entropy_with_logits
is_real, is_fake = torch.ones(16, 1), torch.zeros(16, 1)


def _gan():
    """Section 1's GAN and data, and section 3's points, with fresh seeded weights."""
    with seeded(6):
        G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        D = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        real = torch.randn(16, 2) * 0.3 + torch.tensor([2.0, 1.0])
        z = torch.randn(16, 4)
        eps = torch.rand(16, 1)
        points = (eps * real + (1 - eps) * G(z).detach()).requires_grad_()
    g_opt = torch.optim.SGD(G.parameters(), lr=0.1)
    d_opt = torch.optim.SGD(D.parameters(), lr=0.1)
    return dict(G=G, D=D, g_opt=g_opt, d_opt=d_opt, real=real, z=z, points=points)


def _actor_critic():
    """Section 4's encoder, heads, optimizers and losses, with fresh seeded weights."""
    with seeded(6):
        encoder = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        actor, critic = nn.Linear(16, 3), nn.Linear(16, 1)
        states, returns = torch.randn(8, 4), torch.randn(8, 1)

    def losses(encoder, actor, critic, cut_features=False):
        features = encoder(states)
        values = critic(features.detach() if cut_features else features)
        return actor(features).mean(), F.mse_loss(values, returns)  # the actor's: a stand-in

    actor_opt = torch.optim.SGD([*encoder.parameters(), *actor.parameters()], lr=0.1)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=0.5)
    return dict(encoder=encoder, actor=actor, critic=critic, losses=losses,
                actor_opt=actor_opt, critic_opt=critic_opt)


# The three sequences, line for line as the exercise shows them.

def _sequence_1(G, D, g_opt, d_opt, real, z, points):
    fake = G(z)
    g_loss = bce(D(fake), is_real)
    g_opt.zero_grad()
    g_loss.backward(retain_graph=True)
    g_opt.step()
    d_loss = bce(D(real), is_real) + bce(D(fake), is_fake)
    d_loss.backward()


def _sequence_2(encoder, actor, critic, losses, actor_opt, critic_opt):
    actor_loss, critic_loss = losses(encoder, actor, critic)
    critic_opt.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_opt.step()
    actor_opt.zero_grad()
    actor_loss.backward()


def _sequence_3(G, D, g_opt, d_opt, real, z, points):
    scores = D(points)
    (grad,) = torch.autograd.grad(scores.sum(), points, create_graph=True)
    penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
    scores.mean().backward()
    penalty.backward()


_SEQUENCES = {1: (_sequence_1, _gan), 2: (_sequence_2, _actor_critic), 3: (_sequence_3, _gan)}


def _error_of_sequence(number) -> str:
    """Run sequence `number` on fresh models: which error it raises, by PyTorch's word."""
    sequence, build = _SEQUENCES[number]
    return errors.error_raised_by(lambda: sequence(**build()))


def _reasoning():
    """What to follow in every sequence: the same words whichever answers are wrong, so
    that a wrong verdict never says which label to change. Made when asked for, in the
    language chosen by then."""
    return say(
        "not all three are what PyTorch raises. For each sequence, follow every backward "
        "(and every autograd.grad) through each graph it reaches, G's, D's, the encoder's, "
        "and ask two questions. Did an earlier backward or autograd.grad already go through "
        "those saved tensors without keeping them (retain_graph=True, or create_graph=True, "
        "which implies it)? Then they are freed. Did anything change one of them in place "
        "(an optimizer step) after it was saved? Then its version moved on.",
        "세 답 가운데 PyTorch가 실제로 내는 오류와 다른 것이 있습니다. 각 코드에서 backward와 "
        "autograd.grad가 닿는 그래프(G의 그래프, D의 "
        "그래프, 인코더의 그래프)를 호출마다 따라가며 두 가지를 물어보세요. 앞선 backward나 "
        "autograd.grad가 retain_graph=True 없이(create_graph=True도 이를 함께 뜻합니다) 그 저장된 "
        "텐서를 이미 지나갔나요? 그렇다면 그 텐서는 해제되었습니다. 텐서가 저장된 뒤에 옵티마이저의 "
        "스텝 같은 무언가가 그중 하나를 제자리 연산으로 바꾸었나요? 그렇다면 그 버전이 "
        "달라졌습니다.")


def _why(number, error):
    """A clause saying why sequence `number` raises `error`, when that is what torch 2.13
    raises (checked by running it); otherwise nothing."""
    why = {
        (1, errors.VERSION_COUNTER): say(
            "g_opt.step() changed in place a weight that G's retained graph saved",
            "g_opt.step()이 가중치를 제자리 연산으로 바꾸었는데, 유지된 G의 그래프가 그 가중치를 "
            "저장해 두었습니다"),
        (2, errors.NO_ERROR): say(
            "critic_opt.step() changed only the critic, which actor_loss's backward never reaches",
            "critic_opt.step()은 비평자만 바꾸었고, actor_loss의 역전파는 비평자에 닿지 않습니다"),
        (3, errors.FREED_BUFFER): say(
            "scores.mean().backward() freed what scores' nodes saved, and the penalty's backward "
            "goes back through those nodes",
            "scores.mean().backward()가 scores의 노드들이 저장한 텐서를 해제했는데, 페널티의 역전파는 "
            "그 노드들을 다시 지나갑니다"),
    }.get((number, error))
    return f" ({why})" if why else ""


def _label(error):
    """The name of `error` in the current language: the Korean one is among those
    errors.error_name accepts."""
    return {errors.FREED_BUFFER: say(errors.FREED_BUFFER, "해제된 버퍼 오류"),
            errors.VERSION_COUNTER: say(errors.VERSION_COUNTER, "버전 오류"),
            errors.NO_ERROR: say(errors.NO_ERROR, "오류 없음")}[error]


def _named(numbers):
    numbers = ", ".join(map(str, numbers))
    return say(f"sequence {numbers}", f"{numbers}번 코드")


def exercise_2(answer) -> Verdict:
    """{sequence number: 'freed buffer' | 'version counter' | 'none'} for _SEQUENCES."""
    if answer is None:
        return unanswered(say("set `answer` to a dict {sequence number: 'freed buffer', "
                              "'version counter' or 'none'} and run this cell again",
                              "`answer`에 딕셔너리 {코드 번호: 'freed buffer', "
                              "'version counter' 또는 'none'}를 넣고 이 셀을 다시 실행하세요"))
    names, problem = errors.read_error_names(
        answer, list(_SEQUENCES), _named,
        "{1: ..., 2: ..., 3: ...}")
    if problem:
        return not_yet(problem)
    right = {number: _error_of_sequence(number) for number in _SEQUENCES}
    if any(names[number] != right[number] for number in _SEQUENCES):
        return not_yet(_reasoning())
    return correct(say("all three, as PyTorch raises them: ",
                       "세 답 모두 PyTorch가 실제로 내는 오류와 같습니다. ") + "; ".join(
        f"{number}: {_label(right[number])}{_why(number, right[number])}"
        for number in _SEQUENCES) + ".")


__all__ = ["exercise_1", "exercise_2", "lstm_task", "waves_in_chunks"]
