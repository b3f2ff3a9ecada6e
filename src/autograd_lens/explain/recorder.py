"""What `explain` records while the program runs: where each graph node was created (the
line, and the line that called the model when that line is inside a module's forward),
each backward call (where, which one, with or without retain_graph, which nodes it
freed), the optimizer steps, and each change made in place, by the memory it changed.

It watches through a TorchFunctionMode, which sees every torch function and tensor method
called from Python, including `Tensor.backward` and `torch.autograd.grad`. It only calls
what the program called, with the same arguments, so the numbers are the same; what it
keeps, it keeps in each node's `metadata` dict, as plain numbers and lines, and in weak
references, so it keeps no tensor or graph alive that the program let go. Under
`torch.compile` it stays out of the traced code (a compiled region is one node to it).
"""
import os
import sys
import weakref
from dataclasses import dataclass, field

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
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
    function: str = ""  # the function the line is in


def _is_ours_or_torchs(filename):
    return (filename.startswith(_TORCH_DIR) or filename.startswith(_OUR_DIR)
            or filename.startswith("<frozen") or os.path.basename(filename) == "runpy.py")


def _site(frame) -> Site:
    return Site(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def _in_a_module_method(frame) -> bool:
    """In a method of an nn.Module (forward, __call__, a helper): its first argument."""
    code = frame.f_code
    return (code.co_argcount > 0 and code.co_varnames[0] == "self"
            and isinstance(frame.f_locals.get("self"), torch.nn.Module))


MAX_CALLERS = 3  # how many of the program's calling lines a node keeps


def program_sites():
    """(the innermost line of the program itself, not torch's or ours; the program's lines
    that called it, innermost first, while that line is inside a module's method, up to the
    first line outside any: the line that called the model)."""
    frame = sys._getframe(1)
    while frame is not None and _is_ours_or_torchs(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None, ()
    inner, callers = _site(frame), []
    while frame is not None and _in_a_module_method(frame):
        frame = frame.f_back
        while frame is not None and _is_ours_or_torchs(frame.f_code.co_filename):
            frame = frame.f_back
        if frame is not None:
            callers.append(_site(frame))
    if len(callers) > MAX_CALLERS:  # the nearest callers and the model's caller
        callers = callers[:MAX_CALLERS - 1] + callers[-1:]
    return inner, tuple(callers)


def program_site():
    return program_sites()[0]


def program_chain(depth=3):
    """The innermost line of the program and the program's lines that called it, up to
    `depth` lines in all."""
    frame, chain = sys._getframe(1), []
    while frame is not None and len(chain) < depth:
        if not _is_ours_or_torchs(frame.f_code.co_filename):
            chain.append(_site(frame))
        frame = frame.f_back
    return tuple(chain)


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
    create_graph: bool = False
    in_optimizer_step: bool = False  # called from inside optimizer.step(closure)
    roots: tuple = ()    # what it started from: the roots' grad_fn nodes' ids
    chain: tuple = ()    # its line and the program's lines that called it: a call from the
    #                      same chain again is the same line of a loop, not a helper reused

    def same_line(self, other) -> bool:
        return self.chain == other.chain


@dataclass
class NodeRecord:
    """What we know of one graph node, kept in its metadata."""
    created_at: Site | None          # None: created before `explain` started
    calls_before: int                # backward calls made before it was created
    storages: tuple = ()             # ((storage key, version), ...) of the op's tensors
    called_from: tuple = ()          # the program's lines that called the model (Sites)
    steps_before: int = 0            # optimizer steps taken before it was created
    freed_by: BackwardCall | None = None
    root_of: list = field(default_factory=list)  # numbers of the calls started from it


@dataclass
class InPlaceChange:
    site: Site
    called_from: tuple  # the program's lines that called the model, as NodeRecord's
    op: str             # the in-place function: "__iadd__", "relu_", "__setitem__", ...
    by_optimizer: bool
    version: int   # the memory's version just after the change
    shape: tuple   # the shape of the tensor changed (a view, maybe)
    step: int | None = None  # which optimizer step made it (an index into Recorder.stepped)
    on_a_view: bool = False  # made through a view (x[i] /= n): rebinding x[i] is no fix


def record_of(node):
    return node.metadata.get(KEY) if node is not None else None


def _tensors_in(values):
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors_in(value)


def storage_key(tensor):
    """Which memory a tensor's data lives in (a view shares its base's), or None for a
    tensor whose memory PyTorch does not show (sparse, meta, inside torch.func)."""
    try:
        storage = tensor.untyped_storage()
        return (storage.data_ptr(), str(tensor.device)) if storage.data_ptr() else None
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def _roots(func, args, kwargs):
    first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
    return list(_tensors_in([first]))


def _flags(func, args, kwargs):
    """(retain_graph, create_graph) as autograd will take them."""
    names = ("retain_graph", "create_graph")
    if func is torch.Tensor.backward:  # backward(self, gradient, retain_graph, create_graph)
        positional = dict(zip(names, args[2:4]))
    elif func is torch.autograd.backward:  # backward(tensors, grad_tensors, retain, create)
        positional = dict(zip(names, args[2:4]))
    else:  # grad(outputs, inputs, grad_outputs, retain_graph, create_graph)
        positional = dict(zip(names, args[3:5]))
    retain = kwargs.get("retain_graph", positional.get("retain_graph"))
    create = bool(kwargs.get("create_graph", positional.get("create_graph", False)))
    return bool(create if retain is None else retain), create  # autograd's own default


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
        self.stepping = 0   # optimizer steps running now (a closure runs inside one)
        self.stepped = []   # for each optimizer step, the ids of the parameters it updates
        self.step_sites = []  # for each optimizer step, the program's line that called it
        self.last_made = {}  # line -> backward calls made before it last made a node
        self.changes = {}   # storage key -> [InPlaceChange, ...], while that memory lives
        self._hooks = ()
        self._step_sites = (None, ())

    # The program's optimizer steps, counted (a GAN step has one between its two losses).
    def __enter__(self):
        self._hooks = (register_optimizer_step_pre_hook(self._step_starts),
                       register_optimizer_step_post_hook(self._step_ends))
        return super().__enter__()

    def __exit__(self, *exc):
        for hook in self._hooks:
            hook.remove()
        return super().__exit__(*exc)

    def _step_starts(self, optimizer, args, kwargs):
        self.stepping += 1
        self.stepped.append({id(p) for group in optimizer.param_groups for p in group["params"]})
        self._step_sites = program_sites()  # the program's optimizer.step() line
        self.step_sites.append(self._step_sites[0])

    def _step_ends(self, optimizer, args, kwargs):
        self.stepping -= 1
        self.steps += 1

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if torch.compiler.is_compiling():  # torch.compile is tracing: stay out of its way
            return func(*args, **kwargs)
        if func in BACKWARD_CALLS:
            return self._backward(func, args, kwargs)
        tensors = list(_tensors_in(list(args) + list(kwargs.values())))
        versions = [t._version for t in tensors]
        if not torch.is_grad_enabled():  # no node can be made (an optimizer's step, say)
            result = func(*args, **kwargs)
            for tensor, version in zip(tensors, versions):
                if tensor._version != version:
                    self._changed(tensor, func)
            return result
        older = {t.grad_fn for t in tensors if t.grad_fn is not None}  # made before this call
        result = func(*args, **kwargs)
        changed = [t for t, version in zip(tensors, versions) if t._version != version]
        for tensor in changed:
            self._changed(tensor, func)
        # What it made: its outputs' nodes, and those of what it changed in place (a slice
        # assignment returns nothing, and gives the tensor written into a new node).
        outputs = list(_tensors_in([result])) + changed
        new = [t.grad_fn for t in outputs if t.grad_fn is not None
               and t.grad_fn not in older and record_of(t.grad_fn) is None]
        if new:
            self._created(new, older, tensors + outputs)
        return result

    def _changed(self, tensor, func):
        """Note the change by the memory it changed: the tensor itself may be a local that
        is gone by the time backward fails (an activation inside a module's forward)."""
        key = storage_key(tensor)
        if key is None:
            return
        by_optimizer = self.stepping > 0 or _inside_optimizer_step()
        inner, caller = self._step_sites if self.stepping else program_sites()
        change = InPlaceChange(inner, caller, getattr(func, "__name__", str(func)), by_optimizer,
                               tensor._version, tuple(tensor.shape),
                               len(self.stepped) - 1 if self.stepping else None,
                               on_a_view=tensor._is_view())
        if key not in self.changes:
            self.changes[key] = []
            weakref.finalize(tensor.untyped_storage(), self.changes.pop, key, None)
        self.changes[key].append(change)

    def _created(self, new_nodes, older, tensors):
        """Tag the nodes this call made (a composite such as cross_entropy makes several):
        those between its outputs and its inputs' own nodes, which are `older`. A leaf's
        AccumulateGrad node saves nothing and is left alone."""
        (site, caller), calls = program_sites(), len(self.calls)
        storages = tuple((key, t._version) for t in tensors
                         if (key := storage_key(t)) is not None)
        for line in (site, *caller):
            self.last_made[line] = calls

        def made_here(node):
            return (node not in older and record_of(node) is None
                    and not node.name().endswith("AccumulateGrad"))

        for node in nodes_from(new_nodes, stop=lambda n: not made_here(n)):
            if made_here(node):
                node.metadata[KEY] = NodeRecord(site, calls, storages, caller, self.steps)

    def _backward(self, func, args, kwargs):
        roots = [t.grad_fn for t in _roots(func, args, kwargs)]
        retain, create = _flags(func, args, kwargs)
        chain = program_chain()
        call = BackwardCall(len(self.calls) + 1, chain[0] if chain else None,
                            "torch.autograd.grad()" if func is torch.autograd.grad
                            else "backward()", retain, self.steps, create,
                            self.stepping > 0, tuple(id(node) for node in roots), chain)
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
