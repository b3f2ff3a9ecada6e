"""Walk an autograd graph in a fixed order and read what each node saved.

Everything else in the package is built on `walk()`. It names nodes by the order
in which it meets them (never by `id()`), so the same code gives the same graph
description in every run and every process. It reads PyTorch's internals only
through `internals.py`, which never calls a saved tensor's unpack hook.

Example::

    >>> import torch
    >>> from autograd_lens.graph import walk
    >>> a = torch.ones(1, 4, requires_grad=True)
    >>> graph = walk([(a ** 2).sum()], {"a": a})
    >>> [(node.name, [(s.attribute, s.state) for s in node.saved]) for node in graph.nodes]
    [('SumBackward0', []), ('PowBackward0', [('self', 'live')]), ('a', [])]
"""
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import torch
from torch.autograd.graph import Node

from . import internals
from .internals import (FREED, HIDDEN, KEPT_ON_CTX, LIVE, MODIFIED, PACKED,  # noqa: F401
                        RAW_SAVED_PREFIX, SAVED_PREFIX, UNKNOWN, UnreadableStorage)

# What `params=` accepts: a dict of names to tensors, model.named_parameters(), or the
# model itself (an nn.Module: its named parameters).
Names = Mapping[str, torch.Tensor] | Iterable[tuple[str, torch.Tensor]] | torch.nn.Module


def _shape(tensor) -> str:
    return "(" + ", ".join(str(n) for n in tensor.shape) + ")"


# A text form (repr) of more than LONGEST_TEXT rows shows its first SHOWN_ROWS and says how
# many it left out: a GPT-2-sized graph would otherwise print hundreds of lines in a cell.
LONGEST_TEXT = 40
SHOWN_ROWS = 30


def shorten(rows: list[str], what: str, see_all: str) -> list[str]:
    """`rows` as a repr shows them: all when there are LONGEST_TEXT or fewer, else the first
    SHOWN_ROWS and a line like "  ... 450 more nodes left out: print(draw(...).summary)
    shows all 480"."""
    if len(rows) <= LONGEST_TEXT:
        return rows
    left_out = len(rows) - SHOWN_ROWS
    return rows[:SHOWN_ROWS] + [
        f"  ... {left_out} more {what} left out: {see_all} shows all {len(rows)}"]


@dataclass
class SavedTensor:
    """One tensor that a backward node saved for its gradient formula.

    Its `state` is "live" (readable), "freed" (by a backward without retain_graph),
    "modified in place" (after it was saved: a backward through its node fails),
    "packed by a hook" (a saved_tensors_hooks pack hook, checkpoint or save_on_cpu holds
    it; autograd_lens never unpacks it, so only what the pack hook returned is known),
    "unknown" (this torch does not expose it; `why` says what was missing), or "kept on
    ctx": not saved with ctx.save_for_backward but kept by a custom Function as a plain
    attribute (`ctx.w = w`, attribute "ctx.w"). Such a tensor is readable, like a live
    one, and backward does not free it: the node keeps it as long as the node lives.

    A row keeps no reference to a packed object or to its hook (keeping checkpoint's
    holders alive would change what checkpoint does), only what was learnt from them.
    """

    node: str  # the unique name of the node that holds it, e.g. "MulBackward0"
    attribute: str  # what the node calls it: "self", "other", "result", "indices[0]"
    tensor: torch.Tensor | None  # the saved tensor, only when live
    is_leaf: bool  # shares storage with a leaf of the graph (a parameter, say)
    name: str | None = None  # the reader's name for it, when `names` gave one
    lost: str | None = None  # why `tensor` is None: FREED, MODIFIED, PACKED or UNKNOWN
    packed_as: str | None = None  # PACKED: the type of what the pack hook returned,
    #   e.g. "_Holder" (checkpoint) or "tuple" (save_on_cpu); None if torch hides it
    packed_tensors: list[torch.Tensor] = field(default_factory=list)  # PACKED: the tensors
    #   seen in it without unpacking (itself if a tensor, or a tuple's or list's items)
    hook_origin: str = ""  # PACKED: where the unpack hook was defined (never called)
    why: str = ""  # UNKNOWN: what could not be read
    kept_on_ctx: bool = False  # a custom Function's ctx attribute, not a saved tensor

    @property
    def state(self) -> str:
        if self.kept_on_ctx:
            return KEPT_ON_CTX
        return LIVE if self.lost is None else self.lost

    @property
    def freed(self) -> bool:
        return self.lost == FREED

    @property
    def modified(self) -> bool:
        return self.lost == MODIFIED

    @property
    def packed_by_hook(self) -> bool:
        return self.lost == PACKED

    @property
    def unknown(self) -> bool:
        return self.lost == UNKNOWN

    @property
    def shape(self) -> tuple | None:
        return None if self.tensor is None else tuple(self.tensor.shape)

    @property
    def dtype(self) -> torch.dtype | None:
        return None if self.tensor is None else self.tensor.dtype

    @property
    def nbytes(self) -> int:
        """Bytes of the tensor's elements (live or kept on ctx); 0 when it is not readable."""
        return 0 if self.tensor is None else internals.tensor_nbytes(self.tensor)

    @property
    def packed_nbytes(self) -> int | None:
        """Bytes of `packed_tensors`; None when the packed object shows no tensor."""
        if not self.packed_tensors:
            return None
        return sum(internals.tensor_nbytes(t) for t in self.packed_tensors)

    def packed_summary(self, short: bool = False) -> str:
        """What is known of a packed tensor: the packed object, its tensors and size,
        and where its hook comes from. `short`: just the object, for drawings."""
        if self.packed_as is None:
            return ("an object torch hides" if short
                    else "not shown by torch (a hook not written in Python)")
        tensors = self.packed_tensors
        if self.packed_as == "Tensor" and len(tensors) == 1:
            what = f"{_shape(tensors[0])} tensor"
        elif len(tensors) == 1:
            what = f"{self.packed_as} holding a {_shape(tensors[0])} tensor"
        elif tensors:
            what = f"{self.packed_as} holding {len(tensors)} tensors"
        else:
            what = self.packed_as
        if short:
            return what
        if tensors:
            dtypes = sorted({str(t.dtype).replace("torch.", "") for t in tensors})
            what = what.replace(" tensor", f" {'/'.join(dtypes)} tensor", 1)
            what += f", {self.packed_nbytes} bytes"
        else:
            what += ", size unknown"
        return f"{what} ({self.hook_origin})" if self.hook_origin else what


@dataclass
class GraphNode:
    """A backward node (`grad_fn`), or a leaf tensor that backward fills `.grad` of."""

    index: int  # order of discovery: stable across runs
    fn: Node  # the torch.autograd.graph.Node
    name: str  # unique and readable: "MulBackward0", "AddmmBackward0 #2", or a leaf's name
    is_leaf: bool
    leaf_tensor: torch.Tensor | None = None
    inputs: list[int] = field(default_factory=list)  # indices of the nodes feeding this one
    saved: list[SavedTensor] = field(default_factory=list)
    grad_fn_of: list[str] = field(default_factory=list)  # tensors whose grad_fn this is
    reached_by: list[str] = field(default_factory=list)  # outputs whose backward runs it
    unknown: list[str] = field(default_factory=list)  # what torch did not show: "inputs"

    @property
    def holds_saved_tensors(self) -> bool:
        return bool(self.saved)

    @property
    def freed(self) -> bool:
        return any(s.freed for s in self.saved)

    @property
    def packed_by_hook(self) -> bool:
        return any(s.packed_by_hook for s in self.saved)


@dataclass
class Graph:
    nodes: list[GraphNode]  # in discovery order
    outputs: list[tuple[str, torch.Tensor, int]]  # (name, tensor, index of its grad_fn node)


def check_outputs(outputs) -> list[torch.Tensor]:
    """Refuse anything that is not a tensor produced by autograd, saying what to do."""
    if not outputs:
        raise ValueError(
            "no outputs given: pass the tensor(s) whose graph you want, e.g. draw(loss)"
        )
    checked = []
    for position, output in enumerate(outputs):
        if not isinstance(output, torch.Tensor):
            raise TypeError(
                f"output {position} is a {type(output).__name__}, not a tensor: pass the "
                "tensors that your computation produced, e.g. draw(loss)"
            )
        transform = internals.functorch_transform(output)
        if transform:
            raise ValueError(
                f"output {position} is a tensor inside a torch.func transform ({transform}): "
                "autograd_lens does not support those, since functorch wraps them and keeps "
                "their graph and memory to itself. Look outside the transform instead: pass "
                "what the transformed function returns, computed from inputs that require grad."
            )
        if output.grad_fn is None:
            if output.requires_grad:
                why = ("it is a leaf tensor you created, not the result of an operation: "
                       "pass what you computed from it (a loss, say), and give the leaf "
                       "a name with params={'name': tensor}")
            else:
                why = ("it does not require grad: did you set requires_grad=True on an "
                       "input, or compute it under torch.no_grad() or after .detach()?")
            raise ValueError(f"output {position} has no grad_fn, so it has no graph: {why}")
        checked.append(output)
    return checked


UNNAMED_TENSORS = ("params got tensors without names (model.parameters(), say): pass the "
                   "model itself, params=model, or dict(model.named_parameters())")


def check_names(names: Names | None) -> dict[str, torch.Tensor]:
    """`names` maps a name to a tensor, like dict(model.named_parameters()); a model (an
    nn.Module) stands for its named parameters."""
    if names is None:
        return {}
    if isinstance(names, torch.nn.Module):
        return dict(names.named_parameters())
    if not isinstance(names, Mapping):
        try:
            names = list(names)  # once: a generator cannot be read twice
        except TypeError:
            names = None
        if names is not None and any(isinstance(item, torch.Tensor) for item in names):
            raise TypeError(UNNAMED_TENSORS)
    try:
        names = dict(names)
    except (TypeError, ValueError):
        raise TypeError(
            "params must map names to tensors, e.g. {'a': a}, dict(model.named_parameters()) "
            "or the model itself"
        ) from None
    for key, value in names.items():
        if not isinstance(key, str) or not isinstance(value, torch.Tensor):
            raise TypeError(
                f"params must map str names to tensors; got a {type(key).__name__} key "
                f"mapped to a {type(value).__name__}: for a model's parameters, pass "
                "the model itself or dict(model.named_parameters()), not model.parameters()"
            )
    return names


def storage_keys(tensors) -> set:
    """The keys of the storages under `tensors` (those PyTorch shows): what a saved view of
    one of them shares with it."""
    return {key for tensor in tensors for key in _storage_keys(tensor)}


def _read_saved(fn: Node) -> Iterator[tuple[str, torch.Tensor | None, str | None]]:
    """Yield (attribute, tensor, lost) for every tensor `fn` saved; never runs a hook.

    `tensor` is None when it is not live, and `lost` says why: FREED, MODIFIED, PACKED
    (a hook packed it; it is not unpacked) or UNKNOWN.
    """
    for slot in internals.saved_slots(fn):
        yield slot.attribute, slot.tensor, None if slot.state == LIVE else slot.state


def _storage_keys(tensor) -> set:
    try:
        return {key for key, _ in internals.storages(tensor)}
    except UnreadableStorage:
        return set()


def _saved_record(node_name, slot, leaf_storages, name_of) -> SavedTensor:
    readable = slot.state in (LIVE, KEPT_ON_CTX)
    record = SavedTensor(node=node_name, attribute=slot.attribute, tensor=slot.tensor,
                         is_leaf=False, lost=None if readable else slot.state, why=slot.why,
                         kept_on_ctx=slot.state == KEPT_ON_CTX)
    if slot.state == PACKED and slot.packed is not HIDDEN:
        record.packed_as = type(slot.packed).__name__
        record.packed_tensors = internals.tensors_in(slot.packed)
        record.hook_origin = internals.defined_in(slot.hook)
    # What we can see of it: the live tensor, or the tensors its pack hook returned.
    visible = [record.tensor] if record.tensor is not None else record.packed_tensors
    record.is_leaf = any(_storage_keys(t) & leaf_storages for t in visible)
    names = [name_of[id(t)] for t in visible if id(t) in name_of]
    record.name = names[0] if len(names) == 1 else None
    return record


_ALL_VISITED = object()  # what next() gives once a node's inputs are all visited


def walk(outputs, names: Names | None = None, read_saved: bool = True) -> Graph:
    """Visit every node that reaches `outputs`, depth first, in `next_functions` order.

    read_saved: read what each node saved (False: only the nodes and their edges).
    """
    outputs = check_outputs(outputs)
    names = check_names(names)
    name_of = {id(t): name for name, t in names.items()}  # lookup only, never shown

    order = {}  # fn -> GraphNode; a dict keeps insertion order
    type_counts = {}

    def add(fn):
        leaf = internals.leaf_tensor(fn)
        node = GraphNode(index=len(order), fn=fn, name="", is_leaf=leaf is not None,
                         leaf_tensor=leaf)
        kind = internals.node_kind(fn)
        type_counts[kind] = type_counts.get(kind, 0) + 1
        order[fn] = node
        return node

    def inputs_of(fn):
        found = internals.next_functions(fn)
        if found is None:
            order[fn].unknown.append("inputs")
            return iter(())
        return iter(found)

    for output in outputs:
        if output.grad_fn in order:
            continue
        add(output.grad_fn)
        stack = [(output.grad_fn, inputs_of(output.grad_fn))]
        while stack:
            parent, inputs = stack[-1]
            fn = next(inputs, _ALL_VISITED)
            if fn is _ALL_VISITED:
                stack.pop()
                continue
            if fn is None:  # an input that needs no gradient
                continue
            if fn not in order:
                add(fn)
                stack.append((fn, inputs_of(fn)))
            order[parent].inputs.append(order[fn].index)

    nodes = list(order.values())
    leaf_storages = set()
    if read_saved:
        for node in nodes:
            if node.is_leaf:
                leaf_storages |= _storage_keys(node.leaf_tensor)

    # Readable unique names: a leaf's given name, else its type with #k when repeated.
    seen_of_type = {}
    for node in nodes:
        kind = internals.node_kind(node.fn)
        seen_of_type[kind] = seen_of_type.get(kind, 0) + 1
        if node.is_leaf:
            given = name_of.get(id(node.leaf_tensor))
            node.name = given or ("leaf" if type_counts[kind] == 1 else f"leaf #{seen_of_type[kind]}")
        elif type_counts[kind] > 1:
            node.name = f"{kind} #{seen_of_type[kind]}"
        else:
            node.name = kind
        if read_saved and not node.is_leaf:
            slots = [*internals.saved_slots(node.fn), *internals.ctx_slots(node.fn)]
            node.saved = [_saved_record(node.name, slot, leaf_storages, name_of)
                          for slot in slots]

    for name, tensor in names.items():
        if tensor.grad_fn in order and not any(tensor is o for o in outputs):
            order[tensor.grad_fn].grad_fn_of.append(name)

    outs = []
    for position, output in enumerate(outputs):
        name = name_of.get(id(output)) or f"output {position}"
        outs.append((name, output, order[output.grad_fn].index))
        _mark_reached(nodes, order[output.grad_fn].index, name)
    return Graph(nodes=nodes, outputs=outs)


def _mark_reached(nodes, root, output_name):
    """Record on every node below `root` that backward from this output runs it."""
    stack = [root]
    while stack:
        node = nodes[stack.pop()]
        if output_name in node.reached_by:
            continue
        node.reached_by.append(output_name)
        stack.extend(node.inputs)
