"""Lesson 02's claims that its cells state in words but do not display: each recomputed
here with torch, so that the sentence stays true on the pinned version."""
import gc
import weakref

import torch

from autograd_lens import saved_tensors


def test_a_sum_and_a_plus_one_save_no_tensor():
    # §4: "a.sum() saves no tensor ... Nor does (a + 1).sum()"
    a = torch.rand(1, 4, requires_grad=True)
    assert len(saved_tensors(a.sum())) == 0
    assert len(saved_tensors((a + 1).sum())) == 0


def test_why_sum_and_plus_one_save_nothing_and_times_two_saves_the_2():
    # §4: sum's backward "only spreads the incoming gradient over a's shape, which it keeps as
    # plain sizes"; "a + 1 passes the gradient on unchanged"; "b * 2 ... saves it"
    a = torch.rand(1, 4, requires_grad=True)
    total = a.sum()
    assert total.grad_fn._saved_self_sym_sizes == (1, 4)  # a tuple of ints, not a tensor
    assert torch.equal(total.grad_fn(torch.tensor(3.0)), torch.full((1, 4), 3.0))
    incoming = torch.rand(1, 4)
    assert torch.equal((a + 1).grad_fn(incoming)[0], incoming)
    doubled = (a ** 2) * 2
    assert [row.attribute for row in saved_tensors(doubled)
            if row.node == "MulBackward0"] == ["other"]
    assert doubled.grad_fn._saved_other.item() == 2


def test_a_saved_leaf_lives_while_the_graph_holds_it():
    # §2: "`a` lives: you hold it, and so does its AccumulateGrad node, part of the graph":
    # dropping your name is not enough while the graph lives.
    a = torch.rand(1, 4, requires_grad=True)
    c = (a ** 2) * 2
    d = c.mean()
    d.backward()
    held = weakref.ref(a)
    del a
    gc.collect()
    assert held() is not None
    assert c.grad_fn.next_functions[0][0].next_functions[0][0].variable is held()
    del c, d
    gc.collect()
    assert held() is None


def test_a_node_hook_is_called_each_time_backward_runs_the_node():
    # §5: "a hook on a node is called each time backward runs that node"
    a = torch.rand(1, 4, requires_grad=True)
    c = (a ** 2) * 2
    d, e = c.mean(), c.sum()
    calls = []
    c.grad_fn.next_functions[0][0].register_hook(lambda grad_inputs, grad_outputs: calls.append(1))
    d.backward(retain_graph=True)
    e.backward()
    assert len(calls) == 2


def test_the_replay_lets_the_2_go_from_memory_and_keeps_a():
    # §2: step 2 (MulBackward0) lets the 2 go and the bytes held drop by its 8; step 3
    # (PowBackward0) lets a go and they do not drop (a stays).
    from autograd_lens import backward_replay
    a = torch.rand(1, 4, requires_grad=True)
    a.grad = torch.zeros_like(a)
    c = (a ** 2) * 2
    frames = backward_replay(c.mean()).frames
    levels = {f.node: f.level for f in frames[1:]}
    assert levels["MeanBackward0"] - levels["MulBackward0"] == 8
    assert levels["MulBackward0"] == levels["PowBackward0"]
    assert frames[-1].level == -8


def _replay_of_section_1():
    a = torch.rand(1, 4, requires_grad=True)
    c = (a ** 2) * 2
    c.mean().backward()  # section 1: a.grad exists before the replay
    c = (a ** 2) * 2
    from autograd_lens import backward_replay
    return backward_replay(c.mean())


def test_the_20_bytes_after_mean_are_the_gradient_for_c_and_the_1():
    # Going further, "Every byte of section 2's replay": "After MeanBackward0: 20 B, the gradient for c (4 float32, 16 B) and the 1
    # the pass starts from, d's gradient (4 B)": the profiler's events up to the end of MeanBackward0
    # are the 1 (allocated before any node runs, freed last) and a 16-byte result.
    replay = _replay_of_section_1()
    events = replay.timeline.events
    first = events[0]
    assert first.bytes == 4 and first.node == ""
    assert events[-1].bytes == -4 and events[-1].node == ""  # the 1 goes at the very end
    mean = [e for e in events if e.node == "MeanBackward0"]
    assert sum(e.bytes for e in mean) == 16 and mean[-1].level == 20
    assert replay.frames[1].level == 20


def test_temporary_buffers_go_above_the_level_and_are_gone_before_the_next_node():
    # Going further, "Every byte…": "The captions also give "While it ran: up to … above": the most held while the
    # node ran, its temporary buffers included, 60 B in PowBackward0. They are gone before
    # the next node starts": each node's events are contiguous, and the level at its last
    # event is the level after the step (the 2's 8 bytes aside: the profiler does not see a
    # CPU tensor allocated before the pass go, the replay follows it).
    replay = _replay_of_section_1()
    events = [e for e in replay.timeline.events if e.node]
    order = [e.node for e in events]
    nodes = list(dict.fromkeys(order))
    assert order == sorted(order, key=nodes.index)  # no node's events interleave another's
    after = {f.node: f.level for f in replay.frames[1:]}
    let_go_8 = {"MeanBackward0": 0, "MulBackward0": 8, "PowBackward0": 8}
    for node, let_go in let_go_8.items():
        mine = [e for e in events if e.node == node]
        assert mine[-1].level - let_go == after[node]
        assert max(e.level for e in mine) - let_go >= after[node]
    inside = {f.node: f.inside for f in replay.frames[1:]}
    assert max(inside.values()) == inside["PowBackward0"] == 60
    assert all(f.inside > f.level for f in replay.frames[1:])  # every step's caption says it


def test_each_node_output_gradient_replaces_the_one_it_received():
    # Going further, "Every byte…": "After MulBackward0 ... its output, the gradient for b (16 B), replaces the one for
    # c ... After PowBackward0 ... the gradient for a replaces the one for b": each node's
    # events net to zero (the 2's 8 bytes, which the profiler does not see go, aside), the
    # last of them the 16-byte gradient it received going.
    replay = _replay_of_section_1()
    for node in ("MulBackward0", "PowBackward0"):
        mine = [e for e in replay.timeline.events if e.node == node]
        assert sum(e.bytes for e in mine) == 0
        assert mine[-1].bytes == -16 and any(e.bytes == 16 for e in mine)


def test_step_4_adds_into_the_existing_grad_and_frees_the_new_one():
    # Going further, "Every byte…": "a.grad exists since section 1, so the new 16 B gradient is added into it and
    # leaves memory"
    replay = _replay_of_section_1()
    accumulate = [e for e in replay.timeline.events if e.node == "AccumulateGrad"]
    assert [e.bytes for e in accumulate] == [-16]


def test_the_memory_goes_only_when_no_view_of_the_storage_holds_it():
    # §2 and the Summary: "the memory goes only when no reference is left (a name, a
    # container such as Out, a node) and no other tensor shares its storage (a view)": a
    # detached view keeps the storage of a saved tensor whose node freed it and whose
    # tensor object is gone.
    a = torch.rand(1, 4, requires_grad=True)
    s = (a * 2).sin()
    saved = weakref.ref(s.grad_fn._saved_self)
    view = s.grad_fn._saved_self.detach()[0]  # a view of the saved a * 2's storage
    s.sum().backward()
    gc.collect()
    assert saved() is None  # the saved tensor itself is gone
    assert torch.equal(view, (a.detach() * 2)[0])  # its storage is not: the view holds it


def test_reading_a_freed_saved_tensor_raises_the_backward_twice_error():
    # §1: "reading a saved tensor after it was freed raises the same error"
    import pytest
    a = torch.rand(1, 4, requires_grad=True)
    b = a ** 2
    (b * 2).mean().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        b.grad_fn._saved_self


def test_a_failed_backward_had_already_freed_what_it_ran_through():
    # §2: "Before failing, the call had run ExpBackward0, which freed its result too":
    # f.backward() fails at MulBackward0, after running ExpBackward0 (a failed backward
    # does not leave the graph as it was).
    import pytest
    a = torch.rand(1, 4, requires_grad=True)
    c = (a ** 2) * 2
    d, f = c.mean(), c.exp().sum()
    d.backward()
    assert [row.state for row in saved_tensors(f) if row.node == "ExpBackward0"] == ["live"]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        f.backward()
    assert [row.state for row in saved_tensors(f) if row.node == "ExpBackward0"] == ["freed"]
