"""What the PyTorch allocator holds over a block of code: `memory_timeline`.

    from autograd_lens import memory_timeline
    with memory_timeline() as mem:
        loss1, loss2 = task_losses(model)
        loss1.backward(retain_graph=True)
        loss2.backward()
    mem.peak      # the most bytes held above the level at entry, and where
    mem.plot();   # bytes over the block, phases shaded, the peak marked
    mem           # the same as text

It is PyTorch's own profiler (`torch.profiler.profile(profile_memory=True)`), which hears
from the allocator every time a tensor's memory is allocated or freed, how many bytes,
and while which op ran. A phase is a backward call (`backward()`, `torch.autograd.backward`
or `torch.autograd.grad`), an optimizer's `step()` or `zero_grad()`; what runs between
them is "forward" when it records a graph (an op that autograd will backpropagate
through ran) and "other" when it does not.

The bytes are those of tensors' memory, as the allocator hands them out: not Python's
objects, not the allocator's own bookkeeping (which is why the process's RSS differs).
Only memory allocated inside the block is followed: the profiler does not know the size of
memory allocated before it started (on the CPU it says nothing of its free, or a wrong
size when the address was used before), so such a free is left out. Start the block before
the forward pass whose memory you want to see go (backward_replay, which runs only a
backward pass, follows the saved tensors' memory itself).
"""
import os
import sys
import tempfile
from dataclasses import dataclass

import torch
from torch.autograd.profiler import record_function
from torch.overrides import TorchFunctionMode
from torch.profiler import ProfilerActivity, profile

BACKWARD_CALLS = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)
BACKWARD_MARK = "autograd_lens: backward #"
NODE_EVENT = "autograd::engine::evaluate_function: "
OPTIMIZER_PHASES = {"Optimizer.step#": "optimizer step", "Optimizer.zero_grad#": "zero_grad"}
# What PyTorch prints from C++, dated, that says nothing to the reader: the profiler's
# start and stop, and (for the first and every thousandth time in a process) that a free
# of memory allocated before profiling began is not reported, which the docstring above
# says instead.
NOISE = ("USDT:", "STAGE:")
UNKNOWN_SIZE = "Memory block of unknown size was allocated before the profiling started"


def format_bytes(count: int) -> str:
    """1234567 -> '1.23 MB' (decimal units, as the plots label them)."""
    sign, count = ("-" if count < 0 else ""), abs(count)
    if count < 1000:
        return f"{sign}{count} B"
    for unit, size in (("kB", 10**3), ("MB", 10**6), ("GB", 10**9)):
        shown = f"{count / size:.3g}"
        if float(shown) < 1000 or unit == "GB":  # 999,996 B is '1 MB', not '1e+03 kB'
            return f"{sign}{shown} {unit}"


@dataclass(frozen=True)
class MemoryEvent:
    """One allocation (bytes > 0) or free (bytes < 0) inside the block."""
    index: int      # its place among the block's events on its device, from 0
    time_us: float  # microseconds since the block began
    bytes: int
    level: int      # bytes held above the level at entry, just after it
    device: str     # "cpu", "cuda:0"
    op: str         # the innermost op running: "aten::mm"; "" when none was
    node: str       # the backward node running: "MmBackward0"; "" outside backward
    phase: str      # "forward", "backward #1", "optimizer step", "zero_grad", "other"

    @property
    def where(self) -> str:
        """'aten::mm in MmBackward0, during backward #2'."""
        what = " in ".join(part for part in (self.op, self.node) if part) or "outside any op"
        return f"{what}, during {self.phase}"


@dataclass(frozen=True)
class Peak:
    """The most bytes held above the level at entry, and the event that reached it
    (None when nothing was allocated)."""
    bytes: int
    event: MemoryEvent | None

    def __repr__(self) -> str:
        if self.event is None:
            return "0 bytes: nothing was allocated inside the block"
        return (f"{self.bytes:,} bytes ({format_bytes(self.bytes)}) above the level at entry, "
                f"at {self.event.where}")


@dataclass(frozen=True)
class Phase:
    name: str
    first: int  # index of its first event
    last: int   # index of its last event


@dataclass(frozen=True)
class NodeRun:
    """A backward node's run, as the profiler saw it (autograd's evaluate_function)."""
    node: str        # "MmBackward0", "AccumulateGrad"
    start_us: float  # microseconds since the block began
    end_us: float


class MemoryTimeline:
    """The allocator's bytes over a block, on one device: events, phases, peak, plot."""

    def __init__(self, device: str, events: list, recorded=None, recording: bool = False):
        self.device = device
        self.events = events
        self._recorded = recorded  # what the profiler gave, for the other devices (on())
        self._recording = recording

    def _ready(self):
        if self._recording:
            raise RuntimeError("memory_timeline is still recording: read it after the "
                               "`with` block has ended")

    @property
    def peak(self) -> Peak:
        self._ready()
        top = max(self.events, key=lambda e: e.level, default=None)
        if top is None or top.level <= 0:
            return Peak(0, None)
        return Peak(top.level, top)

    @property
    def end(self) -> int:
        """Bytes held above the level at entry when the block ended."""
        self._ready()
        return self.events[-1].level if self.events else 0

    @property
    def node_runs(self) -> list:
        """Each backward node's run inside the block, in order (NodeRun: node, start_us,
        end_us), on whichever device: where a backward pass's steps begin and end."""
        self._ready()
        return list(self._recorded[2]) if self._recorded else []

    @property
    def phases(self) -> list:
        """The block's phases in order, as runs of consecutive events."""
        self._ready()
        phases = []
        for event in self.events:
            if phases and phases[-1].name == event.phase:
                phases[-1] = Phase(event.phase, phases[-1].first, event.index)
            else:
                phases.append(Phase(event.phase, event.index, event.index))
        return phases

    def phase_peaks(self, prefix: str = "") -> list:
        """Each phase whose name starts with `prefix`, in order, and the most bytes held
        above the level at entry during it (the text form's "its highest" column), as
        (phase name, bytes) pairs. A name can repeat ("forward"), so this is a list.

        Example::

            >>> import torch
            >>> from autograd_lens import memory_timeline
            >>> w = torch.ones(1000, requires_grad=True)
            >>> with memory_timeline(device="cpu") as mem:
            ...     for _ in range(2):
            ...         w.exp().sum().backward()  # exp saves its 4,000-byte result
            >>> mem.phase_peaks("backward")  # the second also holds w.grad, 4,000 bytes
            [('backward #1', 8008), ('backward #2', 12008)]
        """
        self._ready()
        return [(phase.name, max(e.level for e in self.events[phase.first:phase.last + 1]))
                for phase in self.phases if phase.name.startswith(prefix)]

    def on(self, device: str) -> "MemoryTimeline":
        """The same block's timeline on another device ("cuda:0"); the default is the
        device given to memory_timeline (or the one the block allocated on)."""
        self._ready()
        return _timeline_on(self._recorded, str(torch.device(device)))

    def __repr__(self) -> str:
        self._ready()
        if not self.events:
            return f"memory_timeline on {self.device}: nothing was allocated or freed in the block"
        allocations = sum(e.bytes > 0 for e in self.events)
        phases = self.phases
        lines = [f"memory_timeline on {self.device}: {allocations} allocations and "
                 f"{len(self.events) - allocations} frees, in {len(phases)} "
                 + ("phase" if len(phases) == 1 else "phases"),
                 f"  peak: {format_bytes(self.peak.bytes)} above the level at entry"
                 + (f", at {self.peak.event.where}" if self.peak.event else ""),
                 f"  at the end: {format_bytes(self.end)} above the level at entry",
                 f"  {'phase':16} {'events':>6} {'held at its end':>16} {'its highest':>12}"]
        for phase, (_, highest) in zip(phases, self.phase_peaks()):
            run = self.events[phase.first:phase.last + 1]
            lines.append(f"  {phase.name:16} {len(run):6} {format_bytes(run[-1].level):>16} "
                         f"{format_bytes(highest):>12}")
        return "\n".join(lines)

    def plot(self, ax=None, title: str | None = None):
        """Bytes held above the level at entry, after each allocation or free in order;
        phases shaded and named, the peak marked. Returns the matplotlib Axes (end the
        line with `;` in a notebook to show the picture only)."""
        self._ready()
        if not self.events:
            raise ValueError("nothing to plot: no tensor memory was allocated or freed "
                             "inside the block")
        from . import memory_plot
        return memory_plot.plot(self, ax=ax, title=title)


class _MarkBackwardCalls(TorchFunctionMode):
    """Wraps each backward call in a profiler range named "autograd_lens: backward #k",
    so that its allocations are told apart; it changes nothing else."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in BACKWARD_CALLS:
            return func(*args, **kwargs)
        self.calls += 1
        with record_function(f"{BACKWARD_MARK}{self.calls}"):
            return func(*args, **kwargs)


class _HeldStderr:
    """Hold what is written to the process's standard error (file descriptor 2) from
    start() to release(), then write it out without PyTorch's NOISE. In a notebook what C++
    prints there shows in the cell's output; Python's own writes there (in a terminal)
    come out when the block ends, in their order."""

    def start(self):
        sys.stderr.flush()
        try:
            self._saved = os.dup(2)
        except OSError:  # no file descriptor 2 (an embedded interpreter): nothing to hold
            self._saved = None
            return self
        self._held = tempfile.TemporaryFile(mode="w+b")
        os.dup2(self._held.fileno(), 2)
        return self

    def release(self):
        if self._saved is None:
            return
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._saved = None
        with self._held:
            self._held.seek(0)
            for line in self._held.read().decode(errors="replace").splitlines(keepends=True):
                if not line.startswith(NOISE) and UNKNOWN_SIZE not in line:
                    sys.stderr.write(line)
        sys.stderr.flush()


def _node_name(event_name: str) -> str:
    return event_name[len(NODE_EVENT):].replace("torch::autograd::", "")


def _device_name(device) -> str:
    """"cpu" or "cuda:0", from the torch.device of an allocation."""
    return "cpu" if device.type in ("cpu", "mkldnn", "ideep") else f"{device.type}:{device.index or 0}"


def _phase_of(name: str) -> str | None:
    if name.startswith(BACKWARD_MARK):
        return "backward #" + name[len(BACKWARD_MARK):]
    return next((phase for prefix, phase in OPTIMIZER_PHASES.items()
                 if name.startswith(prefix)), None)


def _in_time_order(result):
    """Every event of the profile with the ops it ran inside (outermost first), in time
    order. The profiler's own tree of events, which torch.profiler's memory profiler reads
    too: unlike its flat events(), it gives an allocation's address."""
    tree = getattr(result, "experimental_event_tree", None)
    if tree is None:
        raise RuntimeError(f"memory_timeline cannot read this torch's profile (torch "
                           f"{torch.__version__} has no experimental_event_tree)")
    found = []
    stack = [(root, ()) for root in tree()]
    while stack:
        event, ancestors = stack.pop()
        found.append((event, ancestors))
        stack.extend((child, ancestors + (event.name,)) for child in event.children)
    found.sort(key=lambda pair: pair[0].start_time_ns)
    return found


def _read(result):
    """What the profile says: each allocation and free of memory allocated inside the
    block (by address: a free of older memory is left out, whatever size the profiler
    gives it), with the op, backward node and phase it happened in and the stretch
    between phases it fell in; whether each stretch recorded a graph (ran an op that
    autograd records: forward work); and each backward node's run."""
    raw, recorded_graph, node_runs = [], [], []
    allocated = set()  # addresses allocated inside the block, not yet freed
    phase_ends, stretch = [], 0  # the end times of the phases passed so far
    start = result.trace_start_ns()
    for event, names in _in_time_order(result):
        while phase_ends and phase_ends[0] <= event.start_time_ns:
            phase_ends.pop(0)
            stretch += 1
        fields = event.extra_fields
        if type(fields).__name__ != "_ExtraFields_Allocation":
            if _phase_of(event.name) and not any(map(_phase_of, names)):
                phase_ends.append(event.end_time_ns)
                phase_ends.sort()
            elif event.name.startswith(NODE_EVENT):
                node_runs.append(NodeRun(_node_name(event.name), (event.start_time_ns - start) / 1000,
                                         (event.end_time_ns - start) / 1000))
            elif getattr(fields, "sequence_number", -1) >= 0 and not any(map(_phase_of, names)):
                recorded_graph.extend([False] * (stretch + 1 - len(recorded_graph)))
                recorded_graph[stretch] = True
            continue
        key = (str(fields.device), fields.ptr)
        if fields.alloc_size > 0:
            allocated.add(key)
        elif key in allocated:
            allocated.discard(key)
        else:
            continue  # memory from before the block
        phase = next((_phase_of(n) for n in reversed(names) if _phase_of(n)), None)
        node = next((_node_name(n) for n in reversed(names) if n.startswith(NODE_EVENT)), "")
        op = next((n for n in reversed(names) if not _phase_of(n)
                   and not n.startswith((NODE_EVENT, "Optimizer.", "autograd_lens"))), "")
        raw.append(((event.start_time_ns - start) / 1000, fields.alloc_size,
                    _device_name(fields.device), op, node, phase, stretch))
    return raw, recorded_graph, node_runs


def _timeline_on(recorded, device: str) -> MemoryTimeline:
    raw, recorded_graph, _ = recorded
    events, level = [], 0
    for time_us, nbytes, on, op, node, phase, stretch in raw:
        if on != device:
            continue
        if phase is None:
            forward = stretch < len(recorded_graph) and recorded_graph[stretch]
            phase = "forward" if forward else "other"
        level += nbytes
        events.append(MemoryEvent(len(events), time_us, nbytes, level, device, op, node, phase))
    return MemoryTimeline(device, events, recorded)


def _device_used(recorded) -> str:
    """The device the block allocated on: a GPU if it allocated on one (the one with the
    most allocations), else the CPU."""
    raw, _, _ = recorded
    gpus = [on for _, nbytes, on, *_ in raw if on != "cpu" and nbytes > 0]
    return max(set(gpus), key=gpus.count) if gpus else "cpu"


class memory_timeline:
    """Record the bytes that PyTorch's allocator holds over the code inside the block.

    `with memory_timeline() as mem:` gives a MemoryTimeline, filled when the block ends:
    `mem.peak` (bytes above the level at entry, and the op, backward node and phase that
    reached them), `mem.events`, `mem.phases`, `mem.phase_peaks()`, `mem.end`, `mem.plot()`,
    and a text form.
    device: "cpu" or "cuda:0"; by default the device the block allocated on (a GPU if it
    allocated on one, else the CPU), so that a CPU model on a GPU machine is measured on
    the CPU (`mem.on("cpu")` gives another device's timeline of the same block).

    Memory allocated before the block and freed inside it is not counted: start the block
    before the forward pass. While the block runs, what is written to the process's
    standard error is held, and written when it ends, less the profiler's own messages
    (PyTorch's C++ prints them there, dated: in a notebook they would show in the cell). An error raised inside the block propagates
    unchanged; the timeline keeps what came before it. Only one profiler can run at a
    time, so a memory_timeline inside another one, or inside torch.profiler.profile,
    raises RuntimeError.

    Example::

        >>> import torch
        >>> from autograd_lens import memory_timeline
        >>> with memory_timeline(device="cpu") as mem:
        ...     a = torch.ones(1000)       # 4,000 bytes
        ...     b = torch.ones(500)        # 2,000 more
        ...     del a                      # 4,000 back
        >>> mem.peak.bytes, mem.end
        (6000, 2000)
    """

    def __init__(self, device: str | None = None):
        self.device = None if device is None else str(torch.device(device))
        if self.device == "cuda":
            self.device = f"cuda:{torch.cuda.current_device()}"
        if self.device not in (None, "cpu") and not self.device.startswith("cuda"):
            raise ValueError(f"memory_timeline records the CPU and CUDA GPUs, not {device!r}: "
                             "pass device='cpu' or device='cuda:0'")
        self._profile = None

    def __enter__(self) -> MemoryTimeline:
        if torch._C._autograd._profiler_enabled():
            raise RuntimeError(
                "memory_timeline: a profiler is already running (another memory_timeline, "
                "torch.profiler.profile or torch.autograd.profiler.profile), and PyTorch runs "
                "one at a time: end that block first, or measure inside it with its own tools")
        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        self._profile = profile(activities=activities, profile_memory=True)
        self._marks = _MarkBackwardCalls()
        self.timeline = MemoryTimeline(self.device or "cpu", [], recording=True)
        self._stderr = _HeldStderr().start()
        try:
            self._profile.__enter__()
        except BaseException:
            self._stderr.release()
            raise
        self._marks.__enter__()
        return self.timeline

    def __exit__(self, *exc_info):
        try:
            self._marks.__exit__(*exc_info)
            self._profile.__exit__(None, None, None)
        finally:
            self._stderr.release()
        recorded = _read(self._profile.profiler.kineto_results)
        self.timeline.device = self.device or _device_used(recorded)
        self.timeline.events = _timeline_on(recorded, self.timeline.device).events
        self.timeline._recorded, self.timeline._recording = recorded, False
        return False  # an error inside the block propagates unchanged
