"""`backward_replay`: run a backward pass once and show it node by node: which node ran,
which saved tensors it let go, and the bytes the allocator held after it.

This is the one function of autograd_lens that runs something: the backward pass you
would run anyway (`torch.autograd.backward(outputs)`), once, under `memory_timeline`, with
a post-hook on each node that only notes the order the nodes ran in. The hooks are removed
when it returns, even on error, and change no gradient: `.grad` ends as after your own
`backward()`.

The profiler does not see the CPU memory of the saved tensors go (it was allocated before
the backward pass: see memory.py), so each saved tensor's memory is followed here: a weak
finalizer on its storage notes the step at which the storage is really freed, when no
tensor, view or node holds it any more. Nothing here holds a saved tensor while the
backward pass runs: the drawing is made before, and only names and shapes are kept.
"""
import weakref
from dataclasses import dataclass

import graphviz
import torch

from . import internals, replay_html
from .draw import INSTALL_NOTE, _dot
from .graph import Names, _shape, walk
from .memory import format_bytes, memory_timeline


@dataclass(frozen=True)
class ReplayFrame:
    """The state after `step` nodes had run (step 0: before the backward pass)."""
    step: int
    node: str | None        # the node that ran at this step, as the drawing names it
    node_index: int | None  # its index in the drawing (draw's n<index>)
    freed: tuple            # the saved tensors it let go: ("self (64, 100)", ...)
    level: int              # bytes held above the level before the backward pass
    inside: int = 0         # the most held while the node ran (its temporary buffers too)
    leaf: bool = False      # the node is a leaf's AccumulateGrad, drawn with the leaf's name

    @property
    def caption(self) -> str:
        if self.step == 0:
            return "Before the backward pass: no node has run."
        node = f"{self.node}'s AccumulateGrad" if self.leaf else self.node
        let_go = f"; it let go of its saved {', '.join(self.freed)}" if self.freed else ""
        return f"Step {self.step}: {node} ran{let_go}."


class BackwardReplay:
    """A backward pass, frame by frame: `frames`, `timeline` (the profiler's record of the
    pass), and a step-through picture in a notebook (text elsewhere; `html()` gives the
    picture as an HTML fragment for a page of your own)."""

    def __init__(self, frames, timeline, svg, saved_boxes, retain_graph):
        self.frames = frames
        self.timeline = timeline
        self.retain_graph = retain_graph
        self._svg = svg                  # the graph as it was before, drawn; None without dot
        self._saved_boxes = saved_boxes  # node index -> how many saved tensors it drew

    @property
    def peak(self) -> int:
        """The most bytes held above the level before the backward pass, after a step
        (inside a step, a node's temporary buffers can take more: frame.inside)."""
        return max(frame.level for frame in self.frames)

    def __repr__(self) -> str:
        steps = len(self.frames) - 1
        freed = sum(len(frame.freed) for frame in self.frames)
        busiest = max(self.frames, key=lambda frame: frame.inside)
        during = (f"; during a step: at most {format_bytes(busiest.inside)} "
                  f"({busiest.node})" if busiest.inside > self.peak else "")
        lines = [f"backward_replay ran backward() once: {steps} nodes ran, {freed} saved tensors "
                 f"let go; held after a step: at most {format_bytes(self.peak)} above the start"
                 f"{during}",
                 f"  {'step':>4}  {'node':24} {'held after':>12}  let go of"]
        for frame in self.frames[1:]:
            lines.append(f"  {frame.step:4}  {frame.node:24} {replay_html.held(frame.level):>12}  "
                         + (", ".join(frame.freed) or "-"))
        return "\n".join(lines)

    def html(self) -> str:
        """The step-through picture as an HTML fragment: the graph and the memory line,
        one frame at a time, with buttons; no script, nothing fetched (CSS only). Printed,
        it shows a few frames side by side instead."""
        if self._svg is None:
            raise RuntimeError(f"no picture: {INSTALL_NOTE}")
        return replay_html.page(self, self._svg)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        if self._svg is None:
            return {"text/plain": f"{self!r}\n\n{INSTALL_NOTE}"}
        return {"text/html": self.html(), "text/plain": repr(self)}


def _one_element(outputs):
    for position, output in enumerate(outputs):
        if output.numel() != 1:
            raise ValueError(
                f"output {position} has shape {tuple(output.shape)}: backward_replay runs "
                "backward() with no gradient argument, which needs one element per output. "
                "Replay a loss (out.sum() or out.mean()), as backward() itself would need")


def _refuse_lost(graph):
    for node in graph.nodes:
        for saved in node.saved:
            if saved.freed or saved.modified:
                raise ValueError(
                    f"{node.name}'s saved {saved.attribute} was {saved.state} before the replay: "
                    "a backward pass through this graph would fail. Replay a fresh forward pass")


def _saved_words(saved) -> str:
    return f"{saved.attribute} {_shape(saved.tensor)}" if saved.tensor is not None else saved.attribute


def _follow_saved_storages(graph, ran, released):
    """A finalizer on the storage of each live saved tensor (each storage once): when the
    storage is freed, note the step (nodes run so far) and its bytes."""
    finalizers, seen = [], set()
    for node in graph.nodes:
        for saved in node.saved:
            if saved.tensor is None or saved.tensor.device.type == "meta":
                continue
            try:
                storages = internals.storage_objects(saved.tensor)
            except internals.UnreadableStorage:
                continue
            for storage in storages:
                if storage.data_ptr() in seen or storage.nbytes() == 0:
                    continue
                seen.add(storage.data_ptr())
                finalizers.append(weakref.finalize(
                    storage, lambda nbytes=storage.nbytes(): released.append((len(ran), nbytes))))
    return finalizers


def backward_replay(*outputs: torch.Tensor, params: Names | None = None,
                    retain_graph: bool = False) -> BackwardReplay:
    r"""Run `torch.autograd.backward(outputs)` once, and record it node by node.

    Each frame says which node ran, which of its saved tensors it let go (all of them,
    unless retain_graph=True), and the bytes PyTorch's allocator held after it, above the
    level before the backward pass: gradients made and passed on, saved tensors' memory
    freed once nothing else holds it. In a notebook it is a picture to step through: the
    graph drawn as `draw` draws it, the nodes run so far filled green, the node of this
    step outlined, the saved tensors let go so far dashed white, beside the memory line
    with this step marked.

    This runs the backward pass (and fills `.grad`, as yours would): call it where you
    would call backward(). params: names for the drawing, as draw's.

    Example::

        >>> import torch
        >>> from autograd_lens import backward_replay
        >>> a = torch.ones(1, 4, requires_grad=True)
        >>> replay = backward_replay((a.exp() * 2).sum(), params={"a": a})
        >>> [(f.node, f.freed) for f in replay.frames[1:]]
        [('SumBackward0', ()), ('MulBackward0', ('other ()',)), ('ExpBackward0', ('result (1, 4)',)), ('a', ())]
        >>> a.grad.equal(2 * a.exp())
        True
    """
    graph = walk(outputs, params)
    _one_element(outputs)
    _refuse_lost(graph)
    try:
        svg = _dot(graph, show_saved=True).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        svg = None
    saved_boxes = {node.index: len(node.saved) for node in graph.nodes}
    # What each node lets go of when it runs: its saved tensors (not a custom Function's
    # ctx attributes, which backward does not free).
    plan = [(node.fn, node.index, node.name,
             tuple(_saved_words(s) for s in node.saved if not s.kept_on_ctx))
            for node in graph.nodes]
    leaves = {node.index for node in graph.nodes if type(node.fn).__name__ == "AccumulateGrad"}
    ran = []       # the drawing's node indices, in the order the engine ran them
    released = []  # (step, bytes) of each saved tensor's storage when it was freed
    finalizers = _follow_saved_storages(graph, ran, released)
    del graph  # it holds the saved tensors: the backward pass must be free to let them go
    handles = []
    try:
        for fn, index, _, _ in plan:
            handles.append(fn.register_hook(
                lambda grad_inputs, grad_outputs, index=index: ran.append(index)))
        with memory_timeline(device=str(outputs[0].device)) as timeline:
            torch.autograd.backward(list(outputs), retain_graph=retain_graph)
    finally:
        for handle in handles:
            handle.remove()
        for finalizer in finalizers:
            finalizer.detach()  # what lives on is no longer followed
    names = {index: (name, words) for _, index, name, words in plan}
    frames = _frames(names, ran, released, timeline, retain_graph, leaves)
    return BackwardReplay(frames, timeline, svg, saved_boxes, retain_graph)


def _frames(names, ran, released, timeline, retain_graph, leaves=frozenset()):
    """Frame k: the k-th node that ran; the level just before the next one began: what the
    profiler saw allocated and freed, less the saved tensors' memory freed so far."""
    # The engine starts a pass from several outputs at a root node of its own, GraphRoot:
    # not a node of the graph, so no hook and no frame.
    runs = [run for run in timeline.node_runs if run.node != "GraphRoot"]
    if len(runs) != len(ran):  # the hooks and the profiler saw different runs
        raise RuntimeError(f"backward_replay saw {len(ran)} nodes run but the profiler "
                           f"{len(runs)}; please report this with your torch version")
    ends = [run.start_us for run in runs[1:]] + [float("inf")]
    events = iter(timeline.events)
    level, frames = 0, [ReplayFrame(0, None, None, (), 0)]
    pending = next(events, None)
    for step, (index, until) in enumerate(zip(ran, ends), start=1):
        gone_before = sum(nbytes for at, nbytes in released if at < step)
        inside = frames[-1].level
        while pending is not None and pending.time_us < until:
            level, pending = pending.level, next(events, None)
            inside = max(inside, level - gone_before)
        gone = sum(nbytes for at, nbytes in released if at <= step)
        name, words = names[index]
        freed = () if retain_graph else words
        frames.append(ReplayFrame(step, name, index, freed, level - gone,
                                  max(inside, level - gone), leaf=index in leaves))
    return frames
