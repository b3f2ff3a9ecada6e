"""Walk an autograd graph in a fixed order and read what each node saved.

Everything else in the package is built on `walk()`. It names nodes by the order
in which it meets them (never by `id()`), so the same code gives the same graph
description in every run and every process.
"""
from dataclasses import dataclass, field

import torch

# Backward nodes expose what they saved for the backward pass as `_saved_<name>`
# attributes (the same prefix torchviz reads). Tensor-valued ones also have a
# `_raw_saved_<name>` twin, which is how we tell them apart from sizes and scalars.
SAVED_PREFIX = "_saved_"
RAW_SAVED_PREFIX = "_raw_saved_"

# Why a saved tensor can no longer be read, told apart by autograd's error messages:
FREED = "freed"  # backward() without retain_graph released it
MODIFIED = "modified in place"  # changed in place after it was saved (optimizer.step())
LOST_BECAUSE = {
    "after they have already been freed": FREED,
    "modified by an inplace operation": MODIFIED,
}


def _why_unreadable(error):
    for text, why in LOST_BECAUSE.items():
        if text in str(error):
            return why
    raise error


@dataclass
class SavedTensor:
    """One tensor that a backward node saved for its gradient formula."""

    node: str  # the unique name of the node that holds it, e.g. "MulBackward0"
    attribute: str  # what the node calls it: "self", "other", "result", "indices[0]"
    tensor: torch.Tensor | None  # None once it can no longer be read
    is_leaf: bool  # shares storage with a leaf of the graph (a parameter, say)
    name: str | None = None  # the reader's name for it, when `names` gave one
    lost: str | None = None  # why `tensor` is None: FREED or MODIFIED

    @property
    def freed(self) -> bool:
        return self.lost == FREED

    @property
    def modified(self) -> bool:
        return self.lost == MODIFIED

    @property
    def shape(self):
        return None if self.tensor is None else tuple(self.tensor.shape)

    @property
    def dtype(self):
        return None if self.tensor is None else self.tensor.dtype

    @property
    def nbytes(self) -> int:
        return 0 if self.tensor is None else self.tensor.nelement() * self.tensor.element_size()


@dataclass
class GraphNode:
    """A backward node (`grad_fn`), or a leaf tensor that backward fills `.grad` of."""

    index: int  # order of discovery: stable across runs
    fn: object  # the torch.autograd.graph.Node
    name: str  # unique and readable: "MulBackward0", "AddmmBackward0 #2", or a leaf's name
    is_leaf: bool
    leaf_tensor: torch.Tensor | None = None
    inputs: list = field(default_factory=list)  # indices of the nodes feeding this one
    saved: list = field(default_factory=list)  # SavedTensor records
    grad_fn_of: list = field(default_factory=list)  # names of tensors whose grad_fn this is
    reached_by: list = field(default_factory=list)  # names of the outputs whose backward runs it

    @property
    def holds_saved_tensors(self) -> bool:
        return bool(self.saved)

    @property
    def freed(self) -> bool:
        return any(s.freed for s in self.saved)


@dataclass
class Graph:
    nodes: list  # GraphNode, in discovery order
    outputs: list  # (name, tensor, index of its grad_fn node)


def check_outputs(outputs) -> list:
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
        if output.grad_fn is None:
            if output.requires_grad:
                why = "it is a leaf tensor you created, not the result of an operation"
            else:
                why = ("it does not require grad: did you set requires_grad=True on an "
                       "input, or compute it under torch.no_grad() or after .detach()?")
            raise ValueError(f"output {position} has no grad_fn, so it has no graph: {why}")
        checked.append(output)
    return checked


def check_names(names) -> dict:
    """`names` maps a name to a tensor, like dict(model.named_parameters())."""
    if names is None:
        return {}
    try:
        names = dict(names)
    except (TypeError, ValueError):
        raise TypeError(
            "params must map names to tensors, e.g. {'a': a} or "
            "dict(model.named_parameters())"
        ) from None
    for key, value in names.items():
        if not isinstance(key, str) or not isinstance(value, torch.Tensor):
            raise TypeError(
                f"params must map str names to tensors; got {key!r}: {type(value).__name__}"
            )
    return names


def _read_saved(fn):
    """Yield (attribute, tensor, lost) for every tensor `fn` saved.

    `tensor` is None when it can no longer be read, and `lost` says why.
    """
    if isinstance(fn, torch.autograd.function.BackwardCFunction):
        # A custom torch.autograd.Function keeps what ctx.save_for_backward got.
        try:
            values = fn.saved_tensors
        except RuntimeError as error:
            yield "saved_tensors", None, _why_unreadable(error)
            return
        for i, value in enumerate(values):
            if value is not None:
                yield f"saved_tensors[{i}]", value, None
        return
    for attr in sorted(dir(fn)):
        if not attr.startswith(RAW_SAVED_PREFIX):
            continue
        attribute = attr[len(RAW_SAVED_PREFIX):]
        try:
            value = getattr(fn, SAVED_PREFIX + attribute)
        except RuntimeError as error:
            yield attribute, None, _why_unreadable(error)
            continue
        if isinstance(value, torch.Tensor):
            yield attribute, value, None
        elif isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                if isinstance(item, torch.Tensor):
                    yield f"{attribute}[{i}]", item, None
        # None: an optional tensor the formula did not need (e.g. `self` of x * 2)


def _storage_key(tensor):
    return tensor.untyped_storage().data_ptr()


def walk(outputs, names=None) -> Graph:
    """Visit every node that reaches `outputs`, depth first, in `next_functions` order."""
    outputs = check_outputs(outputs)
    names = check_names(names)
    name_of = {id(t): name for name, t in names.items()}  # lookup only, never shown

    order = {}  # fn -> GraphNode; a dict keeps insertion order
    type_counts = {}

    def add(fn):
        node = GraphNode(index=len(order), fn=fn, name="", is_leaf=hasattr(fn, "variable"))
        if node.is_leaf:
            node.leaf_tensor = fn.variable
        type_counts[type(fn).__name__] = type_counts.get(type(fn).__name__, 0) + 1
        order[fn] = node
        return node

    for output in outputs:
        if output.grad_fn in order:
            continue
        add(output.grad_fn)
        stack = [(output.grad_fn, iter(output.grad_fn.next_functions))]
        while stack:
            parent, inputs = stack[-1]
            step = next(inputs, None)
            if step is None:  # all of parent's inputs visited
                stack.pop()
                continue
            fn = step[0]
            if fn is None:  # an input that needs no gradient
                continue
            if fn not in order:
                add(fn)
                stack.append((fn, iter(fn.next_functions)))
            order[parent].inputs.append(order[fn].index)

    nodes = list(order.values())
    leaf_storages = {_storage_key(n.leaf_tensor) for n in nodes if n.is_leaf}

    # Readable unique names: a leaf's given name, else its type with #k when repeated.
    seen_of_type = {}
    for node in nodes:
        kind = type(node.fn).__name__
        seen_of_type[kind] = seen_of_type.get(kind, 0) + 1
        if node.is_leaf:
            given = name_of.get(id(node.leaf_tensor))
            node.name = given or ("leaf" if type_counts[kind] == 1 else f"leaf #{seen_of_type[kind]}")
        elif type_counts[kind] > 1:
            node.name = f"{kind} #{seen_of_type[kind]}"
        else:
            node.name = kind
        if not node.is_leaf:
            for attribute, tensor, lost in _read_saved(node.fn):
                node.saved.append(SavedTensor(
                    node=node.name,
                    attribute=attribute,
                    tensor=tensor,
                    is_leaf=tensor is not None and _storage_key(tensor) in leaf_storages,
                    name=None if tensor is None else name_of.get(id(tensor)),
                    lost=lost,
                ))

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
