"""Lesson 04's claims that its cells show only in part, recomputed with torch: what the
seed's way still holds after a training step and why its peak is the higher one (the
printed numbers themselves are compared by nbval); what the failed `loss2.backward()` left
behind; and why a step between the two calls is caught at trunk.2.weight."""
import sys

import torch

from project import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import memory_figure  # noqa: E402  (lesson 04's model, run from the lesson's own cells)
from autograd_lens import memory_timeline, retained_bytes  # noqa: E402

HIDDEN = memory_figure.HIDDEN
N_SAMPLES = 256


def step(way):
    """(timeline of one forward and backward taken `way`, its loss1 and loss2); no optimizer
    step, so that retained_bytes can still read the saved tensors afterwards"""
    lesson = memory_figure.lesson_04()
    torch.manual_seed(1)
    model = lesson["TwoHeadNet"](hidden=HIDDEN)
    with memory_timeline(device="cpu") as mem:
        loss1, loss2 = lesson["task_losses"](model)
        way(loss1, loss2)
    return mem, loss1, loss2


def test_what_the_seed_s_way_holds_more_at_the_end_is_head_1_s_saved_tensors():
    """"At the end the seed's way holds 0.79 MB more: head 1's saved tensors": the trunk's
    256 x 768 output and head 1's prediction (its target was allocated before the block)."""
    seed, loss1, loss2 = step(memory_figure.two_backward_calls)
    summed, *_ = step(memory_figure.summed_loss)
    trunk_output, prediction, target = 4 * N_SAMPLES * HIDDEN, 4 * N_SAMPLES, 4 * N_SAMPLES
    assert seed.end - summed.end == trunk_output + prediction
    assert retained_bytes(loss1, loss2) == trunk_output + prediction + target


def highest(mem):
    """{phase name: the most bytes held during that phase}"""
    return {phase.name: max(e.level for e in mem.events[phase.first:phase.last + 1])
            for phase in mem.phases}


def held_at_end(mem):
    return {phase.name: mem.events[phase.last].level for phase in mem.phases}


def test_retaining_the_graph_does_not_raise_the_first_backward_s_peak():
    """The first backward's peak is the same with or without retain_graph=True (the trunk's
    output stays either way: head 2's node saved it too), so retaining is not why the seed's
    way peaks higher."""
    retained, *_ = step(lambda loss1, loss2: loss1.backward(retain_graph=True))
    plain, *_ = step(lambda loss1, loss2: loss1.backward())
    assert abs(retained.peak.bytes - plain.peak.bytes) <= 4 * N_SAMPLES  # head 1's prediction


def test_the_seed_s_peak_is_the_single_pass_plus_grad_plus_the_trunk_s_output():
    """"4.74 + 2.39 + 0.79 = 7.91": the single pass's peak, the .grad the first call left
    (3.97 - 1.58 MB: the trunk's and head 1's parameters), and the trunk's output, which head
    1's retained node still holds; to within the heads' few kB."""
    seed, *_ = step(memory_figure.two_backward_calls)
    summed, *_ = step(memory_figure.summed_loss)
    lesson = memory_figure.lesson_04()
    torch.manual_seed(1)
    model = lesson["TwoHeadNet"](hidden=HIDDEN)
    first_grad = 4 * sum(p.numel() for module in (model.trunk, model.regression_head)
                         for p in module.parameters())
    ends = held_at_end(seed)
    assert ends["backward #1"] - ends["forward"] == first_grad
    trunk_output = 4 * N_SAMPLES * HIDDEN
    assert abs(seed.peak.bytes - (summed.peak.bytes + first_grad + trunk_output)) < 4_000
    assert highest(seed)["backward #2"] == seed.peak.bytes > highest(seed)["backward #1"]
    assert [round(b / 1e6, 2) for b in (seed.peak.bytes, summed.peak.bytes, first_grad,
                                         trunk_output)] == [7.91, 4.74, 2.39, 0.79]


def test_the_weights_and_data_are_outside_the_block():
    """"the weights and data came before": 600,580 float32 parameters, 2.40 MB, the size of
    the .grad both ways end holding."""
    lesson = memory_figure.lesson_04()
    model = lesson["TwoHeadNet"](hidden=HIDDEN)
    count = sum(p.numel() for p in model.parameters())
    assert count == 600_580 and round(4 * count / 1e6, 2) == 2.40


def test_what_the_rows_of_the_two_timelines_say():
    """The lesson's sentence on the rest of the two timelines ("Going further", Peak memory):
    the optimizer step allocates nothing (no row), summed_loss's "other" row is the 4-byte
    summed loss released, each peak is a 3 kB bias gradient made while the 2.36 MB weight
    gradient is alive, and both end holding .grad."""
    for mem in memory_figure.timelines().values():
        assert not [e for e in mem.events if e.phase == "optimizer step"]
        peak = mem.events[mem.peak.event.index]
        before = mem.events[peak.index - 1]
        assert (peak.op, peak.bytes) == ("aten::sum", 4 * HIDDEN)
        assert (before.op, before.bytes) == ("aten::mm", 4 * HIDDEN * HIDDEN)
    seed, summed = memory_figure.timelines().values()
    others = [e for e in summed.events if e.phase == "other"]
    assert [e.bytes for e in others] == [-4]
    assert [e for e in seed.events if e.phase == "other"] == []
    grad = 4 * 600_580
    assert abs(summed.end - grad) < 2_000 and seed.end > grad


def test_with_grad_zero_filled_before_the_block_the_gap_is_the_trunk_s_output_alone():
    """"The 2.39 MB counts because .grad starts empty, as zero_grad() leaves it by default;
    with zero_grad(set_to_none=False) both ways add into a .grad allocated before the block,
    and the gap is the trunk's output alone": after a first training step and
    zero_grad(set_to_none=False), the seed's way peaks 0.79 MB above the summed loss (the
    trunk's 256 x 768 output, to within a few kB), where with .grad empty the gap is
    2.39 + 0.79 MB; the summed loss's own peak barely moves."""
    lesson = memory_figure.lesson_04()

    def peak(way, set_to_none):
        torch.manual_seed(1)
        model = lesson["TwoHeadNet"](hidden=HIDDEN)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        way(*lesson["task_losses"](model))  # a first step, so that .grad exists
        optimizer.step()
        optimizer.zero_grad(set_to_none=set_to_none)
        assert all((p.grad is None) == set_to_none for p in model.parameters())
        with memory_timeline(device="cpu") as mem:
            loss1, loss2 = lesson["task_losses"](model)
            way(loss1, loss2)
            optimizer.step()
        return mem.peak.bytes

    trunk_output = 4 * N_SAMPLES * HIDDEN
    seed = {flag: peak(memory_figure.two_backward_calls, flag) for flag in (True, False)}
    summed = {flag: peak(memory_figure.summed_loss, flag) for flag in (True, False)}
    assert abs((seed[False] - summed[False]) - trunk_output) < 8_000
    assert round((seed[False] - summed[False]) / 1e6, 2) == 0.79
    assert abs(summed[False] - summed[True]) < 40_000
    assert seed[True] - summed[True] > 3_000_000  # 2.39 + 0.79 MB with .grad empty


def _fails_with_the_freed_buffer_error(loss):
    try:
        loss.backward()
    except RuntimeError as error:
        assert "backward through the graph a second time" in str(error)
    else:
        raise AssertionError("the second backward should fail")


def test_head_2_s_part_ran_before_the_freed_buffer_error():
    """The lesson ("Going further"): "Section 4's loss2.backward() failed in the trunk, after
    head 2's nodes had run. Their gradients are already in head 2's .grad"."""
    lesson = memory_figure.lesson_04()
    model = lesson["fresh_model"]()
    loss1, loss2 = lesson["task_losses"](model)
    loss1.backward()
    head_2 = list(model.classification_head.parameters())
    assert all(p.grad is None for p in head_2)
    _fails_with_the_freed_buffer_error(loss2)
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in head_2)


def test_the_step_skips_head_2_so_the_error_names_trunk_2_weight():
    """"The step skips a parameter without a .grad: head 2's weight, which loss2 reaches
    first, has none yet. The first changed tensor loss2 meets is the [32, 32] one,
    trunk.2.weight": after loss1's backward and the step, head 2's parameters
    keep their version and values, the trunk's and head 1's are at version 2; and with a
    .grad given to head 2 too, the error names head 2's [32, 3] saved weight instead."""
    lesson = memory_figure.lesson_04()

    def step_between(give_head_2_a_grad):
        model = lesson["fresh_model"]()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loss1, loss2 = lesson["task_losses"](model)
        loss1.backward(retain_graph=True)
        if give_head_2_a_grad:
            for p in model.classification_head.parameters():
                p.grad = torch.ones_like(p)
        before = model.classification_head.weight.detach().clone()
        optimizer.step()
        versions = {name: p._version for name, p in model.named_parameters()}
        try:
            loss2.backward()
        except RuntimeError as error:
            return versions, before, model, str(error)
        raise AssertionError("loss2.backward() should fail the version check")

    versions, before, model, message = step_between(give_head_2_a_grad=False)
    assert versions == {name: 1 if name.startswith("classification_head") else 2
                        for name in versions}
    assert torch.equal(model.classification_head.weight, before)
    assert "[torch.FloatTensor [32, 32]]" in message
    *_, message = step_between(give_head_2_a_grad=True)
    assert "[torch.FloatTensor [32, 3]]" in message


def _graph_of_the_lesson_s_losses():
    """(model, loss1, loss2, {node name: GraphNode}) for a fresh model, as §3 draws it."""
    from autograd_lens.graph import walk

    lesson = memory_figure.lesson_04()
    model = lesson["fresh_model"]()
    loss1, loss2 = lesson["task_losses"](model)
    graph = walk([loss1, loss2], {**dict(model.named_parameters()), "loss1": loss1, "loss2": loss2})
    return model, loss1, loss2, {node.name: node for node in graph.nodes}


def test_same_name_nodes_are_numbered_depth_first_from_loss1_then_loss2():
    """§3: "Same-name nodes are numbered in the order a depth-first walk back from loss1, then
    loss2, first meets them: ReluBackward0 #1 is the trunk's last ReLU." Not by height: the first TBackward0 is the first Linear's, far from loss1, and
    head 1's own comes third, after the walk has finished the trunk."""
    _, loss1, loss2, nodes = _graph_of_the_lesson_s_losses()
    by_index = {node.index: node for node in nodes.values()}

    def input_names(name):
        return {by_index[i].name for i in nodes[name].inputs}

    # the last ReLU feeds both heads' Linear; the first feeds trunk.2's
    assert "ReluBackward0 #1" in input_names("AddmmBackward0 #1") & input_names("AddmmBackward0 #4")
    assert "ReluBackward0 #2" in input_names("AddmmBackward0 #2")
    assert [input_names(f"TBackward0 #{k}") for k in (1, 2, 3, 4)] == [
        {"trunk.0.weight"}, {"trunk.2.weight"}, {"regression_head.weight"},
        {"classification_head.weight"}]

    # the numbering is a depth-first preorder from loss1, then loss2
    order, seen = [], set()

    def visit(fn):
        if fn is None or fn in seen:
            return
        seen.add(fn)
        order.append(fn)
        for next_fn, _ in fn.next_functions:
            visit(next_fn)

    visit(loss1.grad_fn)
    visit(loss2.grad_fn)
    assert [node.fn for node in sorted(nodes.values(), key=lambda n: n.index)] == order


def test_loss2_s_backward_fails_at_the_first_trunk_node_it_reaches():
    """§4: "It fails at ReluBackward0 #1, the first trunk node it reaches": after
    loss1.backward(), loss2's backward runs head 2's nodes, then ReluBackward0 #1 (head 2's
    AddmmBackward0 reads the trunk's output from it), and raises there; no other trunk node runs."""
    model, loss1, loss2, nodes = _graph_of_the_lesson_s_losses()
    loss1.backward()
    name_of = {node.fn: name for name, node in nodes.items()}
    ran = []
    for node in nodes.values():
        node.fn.register_prehook(lambda grad_outputs, fn=node.fn: ran.append(name_of[fn]))
    _fails_with_the_freed_buffer_error(loss2)
    trunk = {name for name, node in nodes.items() if "loss1" in node.reached_by
             and "loss2" in node.reached_by}
    assert ran[-1] == "ReluBackward0 #1"
    assert [name for name in ran if name in trunk] == ["ReluBackward0 #1"]
    assert {"NllLossBackward0", "LogSoftmaxBackward0", "AddmmBackward0 #4"} <= set(ran)
