"""What `explain` records while the program runs: where each graph node was created, each
backward call (where, which one, with or without retain_graph, which nodes it freed), and
where each tensor was last changed in place.

It watches through a TorchFunctionMode, which sees every torch function and tensor method
called from Python, including `Tensor.backward` and `torch.autograd.grad`. It only calls
what the program called, with the same arguments, so the numbers are the same; what it
keeps, it keeps in each node's `metadata` dict and in weak references, so it keeps no
tensor or graph alive that the program let go.
"""
import os
import sys
import weakref
from dataclasses import dataclass, field

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.overrides import TorchFunctionMode

KEY = "autograd_lens.explain"  # our entry in a node's metadata dict

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_OUR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_OPTIM_DIR = os.path.join(_TORCH_DIR, "optim") + os.sep
BACKWARD_CALLS = {torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad}


@dataclass(frozen=True)
class Site:
    """A line of the program: where a call was made from."""
    filename: str
    lineno: int


def _is_ours_or_torchs(filename):
    return (filename.startswith(_TORCH_DIR) or filename.startswith(_OUR_DIR)
            or filename.startswith("<frozen") or os.path.basename(filename) == "runpy.py")


def program_site():
    """The innermost frame of the program itself: not torch's, not ours."""
    frame = sys._getframe(1)
    while frame is not None and _is_ours_or_torchs(frame.f_code.co_filename):
        frame = frame.f_back
    return Site(frame.f_code.co_filename, frame.f_lineno) if frame else None


def _inside_optimizer_step():
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.startswith(_OPTIM_DIR):
            return True
        frame = frame.f_back
    return False


@dataclass
class BackwardCall:
    number: int          # 1 for the run's first backward call, 2 for the second, ...
    site: Site
    function: str        # "backward()" or "torch.autograd.grad()"
    retain_graph: bool
    steps_before: int    # optimizer steps taken before this call


@dataclass
class NodeRecord:
    """What we know of one graph node, kept in its metadata."""
    created_at: Site | None          # None: created before `explain` started
    calls_before: int                # backward calls made before it was created
    tensors: list = field(default_factory=list)  # (weakref, version) of the op's tensors
    freed_by: BackwardCall | None = None
    root_of: list = field(default_factory=list)  # numbers of the calls started from it


@dataclass
class InPlaceChange:
    site: Site
    by_optimizer: bool


def record_of(node):
    return node.metadata.get(KEY) if node is not None else None


def _tensors_in(values):
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors_in(value)


def _roots(func, args, kwargs):
    first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
    return list(_tensors_in([first]))


def _retains(func, args, kwargs):
    names = ("retain_graph", "create_graph")
    if func is torch.Tensor.backward:  # backward(self, gradient, retain_graph, create_graph)
        positional = dict(zip(names, args[2:4]))
    elif func is torch.autograd.backward:  # backward(tensors, grad_tensors, retain, create)
        positional = dict(zip(names, args[2:4]))
    else:  # grad(outputs, inputs, grad_outputs, retain_graph, create_graph)
        positional = dict(zip(names, args[3:5]))
    retain = kwargs.get("retain_graph", positional.get("retain_graph"))
    create = kwargs.get("create_graph", positional.get("create_graph", False))
    return bool(create if retain is None else retain)  # autograd's own default


def nodes_from(root_nodes, stop=lambda node: False):
    """Every node reachable from `root_nodes`, each once, not going past `stop` nodes."""
    seen, stack = set(), [n for n in root_nodes if n is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        go_on = not stop(node)  # decided before the caller sees (and may tag) the node
        yield node
        if go_on:
            stack.extend(n for n, _ in node.next_functions if n is not None)


class Recorder(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.calls = []
        self.steps = 0
        self.changes = {}  # id(tensor) -> (weakref, InPlaceChange)
        self._step_hook = None

    # The program's optimizer steps, counted (a GAN step has one between its two losses).
    def __enter__(self):
        self._step_hook = register_optimizer_step_post_hook(self._count_step)
        return super().__enter__()

    def __exit__(self, *exc):
        self._step_hook.remove()
        return super().__exit__(*exc)

    def _count_step(self, optimizer, args, kwargs):
        self.steps += 1

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in BACKWARD_CALLS:
            return self._backward(func, args, kwargs)
        tensors = list(_tensors_in(list(args) + list(kwargs.values())))
        versions = [t._version for t in tensors]
        older = {t.grad_fn for t in tensors if t.grad_fn is not None}  # made before this call
        result = func(*args, **kwargs)
        for tensor, version in zip(tensors, versions):
            if tensor._version != version:
                self._changed(tensor)
        outputs = list(_tensors_in([result]))
        new = [t.grad_fn for t in outputs if t.grad_fn is not None
               and t.grad_fn not in older and record_of(t.grad_fn) is None]
        if new:
            self._created(new, older, tensors + outputs)
        return result

    def _changed(self, tensor):
        key = id(tensor)
        ref = weakref.ref(tensor, lambda _, key=key: self.changes.pop(key, None))
        self.changes[key] = (ref, InPlaceChange(program_site(), _inside_optimizer_step()))

    def _created(self, new_nodes, older, tensors):
        """Tag the nodes this call made (a composite such as cross_entropy makes several):
        those between its outputs and its inputs' own nodes, which are `older`. A leaf's
        AccumulateGrad node saves nothing and is left alone."""
        site, calls = program_site(), len(self.calls)
        versions = [(weakref.ref(t), t._version) for t in tensors]

        def made_here(node):
            return (node not in older and record_of(node) is None
                    and not node.name().endswith("AccumulateGrad"))

        for node in nodes_from(new_nodes, stop=lambda n: not made_here(n)):
            if made_here(node):
                node.metadata[KEY] = NodeRecord(site, calls, versions)

    def _backward(self, func, args, kwargs):
        roots = [t.grad_fn for t in _roots(func, args, kwargs)]
        call = BackwardCall(len(self.calls) + 1, program_site(),
                            "torch.autograd.grad()" if func is torch.autograd.grad
                            else "backward()", _retains(func, args, kwargs), self.steps)
        self.calls.append(call)
        for node in roots:
            if node is not None:
                self._ensure_record(node).root_of.append(call.number)
        try:
            result = func(*args, **kwargs)
        except RuntimeError as error:
            from .diagnosis import add_diagnosis  # here: it needs what was recorded so far
            add_diagnosis(error, self, call, roots)
            raise
        if not call.retain_graph:
            for node in nodes_from(roots):
                record = self._ensure_record(node)
                if record.freed_by is None:
                    record.freed_by = call
        return result

    def _ensure_record(self, node):
        record = record_of(node)
        if record is None:  # made before `explain` started
            record = node.metadata[KEY] = NodeRecord(None, 0)
        return record
