"""Check cells for lesson 06, "Where second backward calls come from".

The lesson defines its own models; the checkers build small set-ups of their own, the
ones the exercise text describes (the lesson's layers and data shapes, seeded here
without touching the reader's random numbers):

- exercise 1 runs the reader's chunk-by-chunk training function on an `nn.LSTM` and
  the lesson's two sine waves, watching every backward call, and compares the trained
  weights with truncated BPTT's;
- exercise 2 runs each of four sequences of calls on real PyTorch and reads which
  error, if any, it raises (`errors.error_raised_by`): the key is computed, not stored.
"""
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


# Exercise 1: truncated backpropagation through time with an LSTM.

LEARNING_RATE = 0.1


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
    """The reference: carry the state's value across chunks, cut its graph. Private, so
    that `answer = lesson06._truncated_bptt` is not what tab completion offers."""
    state = None
    for inputs, targets in chunks:
        if state is not None:
            state = tuple(s.detach() for s in state)
        outputs, state = lstm(inputs, state)
        loss = F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _state_from_zeros_each_chunk(lstm, head, chunks, optimizer):
    """A wrong answer worth its own hint: no error, but no state carried across either."""
    for inputs, targets in chunks:
        outputs, _ = lstm(inputs)
        loss = F.mse_loss(head(outputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def _trained_weights(train):
    """A fresh LSTM task and SGD optimizer, `train` run on them: the trained weights."""
    lstm, head, chunks = lstm_task()
    optimizer = torch.optim.SGD(_parameters(lstm, head), lr=LEARNING_RATE)
    train(lstm, head, chunks, optimizer)
    return [p.detach().clone() for p in _parameters(lstm, head)], len(chunks)


def _same(weights, others):
    return all(torch.allclose(a, b, atol=1e-6) for a, b in zip(weights, others))


def _hint_for_error(error):
    """The hint for an error that the reader's training function raised."""
    which = errors.which_error(error)
    if which == errors.FREED_BUFFER:
        return say("the second chunk's backward still reaches the first chunk's graph: what "
                   "carries it across? (an LSTM's state is a pair, (h, c))",
                   "두 번째 청크의 역전파가 여전히 첫 번째 청크의 그래프까지 닿습니다: 무엇이 그 "
                   "그래프를 다음 청크로 넘겨 주나요? (LSTM의 상태는 (h, c) 쌍입니다)")
    if which == errors.VERSION_COUNTER:
        return say("a backward reached an earlier chunk whose weights the optimizer has since "
                   "changed in place: keeping old graphs alive is not the fix here",
                   "역전파가 이전 청크까지 갔는데, 그 청크의 가중치는 그사이 옵티마이저가 제자리 "
                   "연산으로 바꾼 뒤입니다: 여기서는 이전 그래프를 유지하는 것이 해결책이 아닙니다")
    if isinstance(error, AttributeError) and "tuple" in str(error):
        return say("the LSTM's state is a tuple (h, c), and a tuple has no tensor methods",
                   "LSTM의 상태는 튜플 (h, c)이고, 튜플에는 텐서의 메서드가 없습니다")
    if isinstance(error, TypeError) and "NoneType" in str(error):
        return say("the state is None before the first chunk: only a real state can be cut",
                   "첫 번째 청크 전에는 상태가 None입니다: 실제 상태가 있어야 끊을 수 있습니다")
    return say(f"your function raised {errors.describe(error)} (it is called as "
               "answer(lstm, head, chunks, optimizer))",
               f"함수에서 오류가 났습니다: {errors.describe(error)} (함수는 "
               "answer(lstm, head, chunks, optimizer) 형태로 호출됩니다)")


def exercise_1(answer) -> Verdict:
    """A function (lstm, head, chunks, optimizer) that trains chunk by chunk, one backward
    and one step per chunk, without failing and without keeping earlier chunks' graphs."""
    if answer is None:
        return unanswered(say("fix train_lstm_on_chunks, then set "
                              "`answer = train_lstm_on_chunks` and run this cell again",
                              "train_lstm_on_chunks 함수를 고친 다음 "
                              "`answer = train_lstm_on_chunks` 한 줄을 적고 이 셀을 다시 실행하세요"))
    if not callable(answer):
        return not_yet(say(f"expected your function, e.g. `answer = train_lstm_on_chunks`; "
                           f"got {kind(answer)}",
                           f"직접 고친 함수가 와야 하는데(예: `answer = train_lstm_on_chunks`) "
                           f"{kind(answer)}가 왔습니다"))
    if getattr(answer, "__module__", None) == __name__:
        return not_yet(say("that is the checker's own function: fix train_lstm_on_chunks in "
                           "the notebook and answer with it",
                           "그것은 채점기 자신의 함수입니다: 노트북의 train_lstm_on_chunks 함수를 "
                           "고쳐서 그 함수로 답하세요"))
    with watch_backward_calls() as calls:
        try:
            trained, n_chunks = _trained_weights(answer)
        except Exception as error:  # the reader's code: report it, don't crash the cell
            return not_yet(_hint_for_error(error))
    if not calls:
        return not_yet(say("backward() was never called: each chunk's loss needs its own backward",
                           "backward()가 한 번도 호출되지 않았습니다: 청크마다 그 청크의 손실로 "
                           "역전파를 해야 합니다"))
    if any(call.retain_graph for call in calls):
        return not_yet(say("it runs, but a backward keeps its graph (retain_graph=True), which "
                           "the exercise forbids: if no backward needs an earlier chunk's graph, "
                           "none needs to keep it",
                           "실행은 되지만, 그래프를 유지하는 역전파가 있습니다(retain_graph=True). 이 "
                           "연습 문제에서는 쓸 수 없는 방법입니다: 이전 청크의 그래프가 필요한 "
                           "역전파가 없다면, 그래프를 유지할 필요도 없습니다"))
    if len(calls) != n_chunks:
        return not_yet(say(f"backward was called {len(calls)} times for {n_chunks} chunks: one "
                           "backward and one optimizer step per chunk",
                           f"청크는 {n_chunks}개인데 backward가 {len(calls)}번 호출되었습니다: "
                           "청크마다 역전파 한 번, 옵티마이저 스텝 한 번이어야 합니다"))
    expected, _ = _trained_weights(_truncated_bptt)
    if not _same(trained, expected):
        if _same(trained, _trained_weights(_state_from_zeros_each_chunk)[0]):
            return not_yet(say(f"it runs, but every chunk starts from a zero state, as if the "
                               f"{n_chunks} chunks were separate sequences: the state a chunk "
                               "ends with should start the next one",
                               f"실행은 되지만, {n_chunks}개의 청크가 서로 다른 시퀀스인 것처럼 "
                               "모든 청크가 0인 상태에서 시작합니다: 한 청크가 끝날 때의 상태로 "
                               "다음 청크를 시작해야 합니다"))
        return not_yet(say("it runs without keeping old chunks, but the trained weights differ "
                           "from truncated BPTT's: per chunk, zero the gradients, backward the "
                           "MSE of head(outputs) against the targets, then step once",
                           "이전 청크를 붙잡아 두지 않고 실행되지만, 학습된 가중치가 truncated "
                           "BPTT의 가중치와 다릅니다: 청크마다 변화도를 0으로 만들고, targets에 "
                           "대한 head(outputs)의 MSE로 역전파한 다음, 옵티마이저 스텝을 한 번 "
                           "밟으세요"))
    return correct(say(f"{n_chunks} chunks, one backward each, and truncated BPTT's weights: the "
                       "state's value goes on, its graph does not.",
                       f"청크 {n_chunks}개에 역전파가 한 번씩이고, 가중치는 truncated BPTT와 "
                       "같습니다: 상태의 값은 다음 청크로 넘어가고, 그래프는 넘어가지 않습니다."))


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
        states, actions, returns = torch.randn(8, 4), torch.randint(0, 3, (8,)), torch.randn(8, 1)

    def losses(encoder, actor, critic):
        features = encoder(states)
        values = critic(features)
        advantages = (returns - values).detach()
        log_probs = F.log_softmax(actor(features), dim=1).gather(1, actions.unsqueeze(1))
        return -(log_probs * advantages).mean(), F.mse_loss(values, returns)

    actor_opt = torch.optim.SGD([*encoder.parameters(), *actor.parameters()], lr=0.1)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=0.5)
    return dict(encoder=encoder, actor=actor, critic=critic, losses=losses,
                actor_opt=actor_opt, critic_opt=critic_opt)


# The four sequences, line for line as the exercise shows them.

def sequence_1(G, D, g_opt, d_opt, real, z, points):
    fake = G(z)
    g_loss = bce(D(fake), is_real)
    g_opt.zero_grad()
    g_loss.backward(retain_graph=True)
    g_opt.step()
    d_loss = bce(D(real), is_real) + bce(D(fake), is_fake)
    d_loss.backward()


def sequence_2(G, D, g_opt, d_opt, real, z, points):
    scores = D(points)
    (grad,) = torch.autograd.grad(scores.sum(), points)
    penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
    (scores.mean() + 10 * penalty).backward()


def sequence_3(encoder, actor, critic, losses, actor_opt, critic_opt):
    actor_loss, critic_loss = losses(encoder, actor, critic)
    critic_opt.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_opt.step()
    actor_opt.zero_grad()
    actor_loss.backward()


def sequence_4(G, D, g_opt, d_opt, real, z, points):
    scores = D(points)
    (grad,) = torch.autograd.grad(scores.sum(), points, create_graph=True)
    penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
    scores.mean().backward()
    penalty.backward()


SEQUENCES = {1: (sequence_1, _gan), 2: (sequence_2, _gan), 3: (sequence_3, _actor_critic),
             4: (sequence_4, _gan)}


def error_of_sequence(number) -> str:
    """Run sequence `number` on fresh models: which error it raises, by PyTorch's word."""
    sequence, build = SEQUENCES[number]
    return errors.error_raised_by(lambda: sequence(**build()))


def _hints():
    """A hint for each wrong answer, by (sequence, the reader's answer): what to look at,
    never what the answer is. Made when asked for, in the language chosen by then."""
    nothing_in_place = say("nothing changes a tensor in place here (no optimizer step): ",
                           "여기서는 제자리 연산으로 바뀌는 텐서가 없습니다(옵티마이저 스텝이 "
                           "없습니다): ")
    return {
        (1, errors.FREED_BUFFER): say(
            "retain_graph=True kept everything G's backward ran through; "
            "look at what happens to those saved tensors before D's backward",
            "G의 역전파가 지나간 것은 retain_graph=True 덕분에 모두 유지되었습니다. D의 "
            "역전파 전에 그 저장된 텐서들에 무슨 일이 일어나는지 보세요"),
        (1, errors.NO_ERROR): say(
            "D's backward goes through `fake` into G's graph: is every tensor "
            "that graph saved still as it was when it was saved?",
            "D의 역전파는 `fake`를 지나 G의 그래프로 들어갑니다: 그 그래프가 저장한 텐서는 "
            "모두 저장될 때 그대로인가요?"),
        (2, errors.NO_ERROR): say(
            "`penalty` carries no graph, but `scores.mean()` does: what did "
            "autograd.grad leave of the graph behind `scores`?",
            "`penalty`에는 그래프가 없지만 `scores.mean()`에는 있습니다: autograd.grad는 "
            "`scores` 뒤의 그래프에서 무엇을 남겼나요?"),
        (2, errors.VERSION_COUNTER): nothing_in_place + say(
            "look at what autograd.grad does to the graph it runs through",
            "autograd.grad가 자신이 지나가는 그래프에 무엇을 하는지 보세요"),
        (3, errors.FREED_BUFFER): say(
            "the critic's backward kept the graph it ran through "
            "(retain_graph=True): what could have freed the encoder's part?",
            "비평자의 역전파는 자신이 지나간 그래프를 유지했습니다(retain_graph=True): "
            "무엇이 인코더 부분을 해제할 수 있었을까요?"),
        (3, errors.VERSION_COUNTER): say(
            "critic_opt.step() changes only the critic head: does the "
            "actor's loss graph hold anything of it? Look at how the "
            "advantages are computed.",
            "critic_opt.step()은 비평자 헤드만 바꿉니다: 행위자 손실의 그래프에 비평자 헤드의 "
            "것이 조금이라도 들어 있나요? advantages를 어떻게 계산하는지 보세요."),
        (4, errors.NO_ERROR): say(
            "create_graph=True kept the graph for the penalty, but another "
            "backward ran in between: which saved tensors does the penalty's "
            "backward need?",
            "create_graph=True가 페널티를 위해 그래프를 유지했지만, 그 사이에 다른 역전파가 "
            "실행되었습니다: 페널티의 역전파에는 어떤 저장된 텐서가 필요한가요?"),
        (4, errors.VERSION_COUNTER): nothing_in_place + say(
            "look at what the backward before the penalty's did",
            "페널티의 역전파 전에 실행된 역전파가 무엇을 했는지 보세요"),
    }


def _named(numbers):
    numbers = ", ".join(map(str, numbers))
    return say(f"sequence {numbers}", f"{numbers}번 코드")


def exercise_2(answer) -> Verdict:
    """{sequence number: 'freed buffer' | 'version counter' | 'none'} for SEQUENCES."""
    if answer is None:
        return unanswered(say("set `answer` to a dict {sequence number: 'freed buffer', "
                              "'version counter' or 'none'} and run this cell again",
                              "`answer`에 딕셔너리 {코드 번호: 'freed buffer', "
                              "'version counter' 또는 'none'}를 넣고 이 셀을 다시 실행하세요"))
    names, problem = errors.read_error_names(
        answer, list(SEQUENCES), _named,
        f"{{1: {errors.FREED_BUFFER!r}, 2: {errors.NO_ERROR!r}, ...}}")
    if problem:
        return not_yet(problem)
    right = {number: error_of_sequence(number) for number in SEQUENCES}
    wrong = [number for number in SEQUENCES if names[number] != right[number]]
    if wrong:
        first = wrong[0]
        hint = _hints().get((first, names[first])) or say(
            "follow which graph each backward runs through, and what it holds by then",
            "각 역전파가 어떤 그래프를 지나가는지, 그때 그 그래프에 무엇이 남아 있는지 "
            "따라가 보세요")
        return not_yet(say(f"{len(SEQUENCES) - len(wrong)} of {len(SEQUENCES)} right. "
                           f"Sequence {first}: {hint}",
                           f"{len(SEQUENCES)}개 중 {len(SEQUENCES) - len(wrong)}개 정답. "
                           f"{first}번 코드: {hint}"))
    return correct(say("all four, as PyTorch raises them: ",
                       "네 개 모두 PyTorch가 실제로 내는 오류와 같습니다: ") + ", ".join(
        f"{number}: {right[number]}" for number in SEQUENCES) + ".")


__all__ = ["exercise_1", "exercise_2", "lstm_task", "waves_in_chunks",
           "SEQUENCES", "error_of_sequence"]
