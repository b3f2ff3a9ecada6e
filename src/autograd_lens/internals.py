"""Every read of PyTorch's autograd internals, in one place, each one guarded.

Backward nodes expose what they saved as `_saved_<name>` attributes and, for tensors, as
`_raw_saved_<name>` twins: `torch._C._autograd.SavedTensor` objects. None of this is a
public API, so a future torch may rename or drop any of it; here a missing attribute
becomes a record marked UNKNOWN, never an exception.

None of these reads ever calls a saved tensor's unpack hook
(`torch.autograd.graph.saved_tensors_hooks`, `torch.utils.checkpoint`, `save_on_cpu`):
reading `_saved_<name>` unpacks, so it is read only once its `SavedTensor` has said that
no hook packed it (`SavedTensor.unpack_hook is None`). A hooked one is reported from what
`SavedTensor.data` gives without unpacking: the object its pack hook returned.

Two kinds of node keep tensors outside `_raw_saved_*`. A custom torch.autograd.Function's
node is its ctx, so the tensors forward kept as plain attributes (`ctx.w = w`) are in its
own `__dict__`: `ctx_slots` reads them. An in-place op on a view gets a CopySlices node
wrapping the op's node, which torch does not expose to Python: `saved_slots` gives it a
row marked UNKNOWN, so that nothing counts it as zero.
"""
from typing import Iterator, NamedTuple

import torch

SAVED_PREFIX = "_saved_"
RAW_SAVED_PREFIX = "_raw_saved_"

# What became of a saved tensor (a Slot's `state`):
LIVE = "live"  # readable: no hook packed it, backward has not freed it
FREED = "freed"  # backward() without retain_graph released it
MODIFIED = "modified in place"  # changed in place after it was saved (optimizer.step())
PACKED = "packed by a hook"  # a saved_tensors_hooks pack hook holds it; never unpacked here
UNKNOWN = "unknown"  # this torch does not let us read it without running anything
KEPT_ON_CTX = "kept on ctx"  # a custom Function's plain ctx attribute (ctx.w = w): readable,
#   and backward does not free it: it lives as long as the node does

# Autograd's own error messages say why a saved tensor can no longer be read.
LOST_BECAUSE = {
    "after they have already been freed": FREED,
    "modified by an inplace operation": MODIFIED,
}

# Returned by `_unpack_hook` and `_packed_object` when torch hides what they ask for.
HIDDEN = object()

# Custom torch.autograd.Function nodes keep ctx.save_for_backward's tensors elsewhere.
_CUSTOM_FUNCTION_NODE = getattr(torch.autograd.function, "BackwardCFunction", ())

# An in-place op on a view (y[:2].mul_(m)) gets a CopySlices node that wraps the op's own
# node. This torch gives Python no way to that wrapped node, so what it saved is unseen.
_COPY_SLICES_NODE = getattr(getattr(torch._C, "_functions", None), "CopySlices", ())
WRAPPED_OP = "wrapped in-place op"  # the attribute name of the row that stands for it
WRAPPED_OP_HIDDEN = ("CopySlices wraps the node of an in-place op on a view, such as "
                     "y[:2].mul_(m), and this torch does not expose that node: what it saved "
                     "cannot be read, nor whether backward freed it")


class Slot(NamedTuple):
    """One saved tensor of one node, read without unpacking anything a hook packed."""

    attribute: str  # the node's name for it: "self", "result", "indices[0]", "saved_tensors[1]",
    #   "ctx.w" for a tensor a custom Function keeps on ctx
    state: str  # LIVE, FREED, MODIFIED, PACKED, UNKNOWN or KEPT_ON_CTX
    tensor: torch.Tensor | None = None  # the saved tensor itself, only when LIVE or KEPT_ON_CTX
    packed: object = None  # PACKED: what the pack hook returned (HIDDEN if torch hides it)
    hook: object = None  # PACKED: the unpack hook, never called (HIDDEN if not Python)
    why: str = ""  # UNKNOWN: what could not be read


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"


def why_unreadable(error: BaseException) -> str:
    """FREED or MODIFIED, from autograd's message; UNKNOWN for any other error."""
    for text, state in LOST_BECAUSE.items():
        if text in str(error):
            return state
    return UNKNOWN


def _unpack_hook(saved):
    """The unpack hook of a SavedTensor, None when no hook packed it, HIDDEN when the hook
    is not a Python one (torch raises), or raise AttributeError when this torch has no way
    to tell."""
    try:
        return saved.unpack_hook
    except AttributeError:
        raise
    except Exception:  # torch 2.13: a C++ hook raises "only supports python saved tensor hooks"
        return HIDDEN


def _packed_object(saved):
    """What the pack hook returned, read without unpacking (SavedTensor.data)."""
    try:
        return saved.data
    except Exception:
        return HIDDEN


CANNOT_TELL_IF_PACKED = ("this torch's SavedTensor has no `unpack_hook`, so whether a hook "
                     "packed it cannot be told without running one")


def _read_value(fn, attribute):
    """getattr(fn, "_saved_<attribute>") as (value, state, why); state LIVE if it was read."""
    try:
        return getattr(fn, SAVED_PREFIX + attribute), LIVE, ""
    except AttributeError as error:
        return None, UNKNOWN, f"no {SAVED_PREFIX}{attribute} ({_first_line(error)})"
    except Exception as error:  # freed, modified in place, or an error we do not know
        state = why_unreadable(error)
        return None, state, _first_line(error) if state == UNKNOWN else ""


def _named_tensors(name, value, dicts=False):
    """(name, tensor) for a tensor, or for each tensor item of a tuple or list (and of a
    dict's values, if `dicts`): one level deep."""
    if isinstance(value, torch.Tensor):
        yield name, value
    elif isinstance(value, (tuple, list)):
        items = enumerate(value)
    elif dicts and isinstance(value, dict):
        items = ((repr(key), item) for key, item in value.items())
    else:
        return
    if not isinstance(value, torch.Tensor):
        for key, item in items:
            if isinstance(item, torch.Tensor):
                yield f"{name}[{key}]", item


def _slots_of_values(attribute, values):
    """Slots for what `_saved_<attribute>` (or ctx.saved_tensors) handed out, all LIVE.
    (None: an optional tensor the formula did not need, e.g. `self` of x * 2.)"""
    for name, tensor in _named_tensors(attribute, values):
        yield Slot(name, LIVE, tensor=tensor)


def _slots_of_raw(attribute, raw, hooks, indexed):
    """Slots for SavedTensors some of which a hook packed: nothing is unpacked."""
    for i, (item, hook) in enumerate(zip(raw, hooks)):
        name = f"{attribute}[{i}]" if indexed else attribute
        if hook is None:  # not packed: its data is the tensor itself (or None, nothing saved)
            value = _packed_object(item)
            if isinstance(value, torch.Tensor):
                yield Slot(name, LIVE, tensor=value)
            elif value is HIDDEN:
                yield Slot(name, UNKNOWN, why="SavedTensor.data could not be read")
        else:
            yield Slot(name, PACKED, packed=HIDDEN if hook is HIDDEN else _packed_object(item),
                       hook=hook)


def _saved_of_custom_function(fn) -> Iterator[Slot]:
    """A custom torch.autograd.Function keeps what ctx.save_for_backward got."""
    attribute = "saved_tensors"
    try:
        raw = tuple(fn._raw_saved_tensors)
    except AttributeError as error:
        yield Slot(attribute, UNKNOWN, why=f"no _raw_saved_tensors ({_first_line(error)})")
        return
    except Exception as error:  # torch raises here once backward has freed them
        state = why_unreadable(error)
        yield Slot(attribute, state, why="" if state != UNKNOWN else _first_line(error))
        return
    try:
        hooks = [_unpack_hook(item) for item in raw]
    except AttributeError:
        yield Slot(attribute, UNKNOWN, why=CANNOT_TELL_IF_PACKED)
        return
    if any(hook is not None for hook in hooks):
        yield from _slots_of_raw(attribute, raw, hooks, indexed=True)
        return
    try:
        values = fn.saved_tensors  # no hook: reading them runs nothing of the user's
    except Exception as error:
        state = why_unreadable(error)
        yield Slot(attribute, state, why="" if state != UNKNOWN else _first_line(error))
        return
    yield from _slots_of_values(attribute, values)


_RAW_SAVED_NAMES_OF_TYPE = {}  # node class -> its _raw_saved_* names, in sorted order


def _raw_saved_names(fn) -> list:
    """The node's `_raw_saved_*` attribute names, sorted. Autograd's C++ nodes define them
    on the class (they have no instance __dict__), so each class is read once: dir() of
    every node was most of the time it took to read a big graph."""
    kind = type(fn)
    names = _RAW_SAVED_NAMES_OF_TYPE.get(kind)
    if names is None:
        names = [attr for attr in sorted(dir(kind)) if attr.startswith(RAW_SAVED_PREFIX)]
        _RAW_SAVED_NAMES_OF_TYPE[kind] = names
    instance_names = getattr(fn, "__dict__", None)  # a Python-made node may have its own
    if instance_names:
        extra = [attr for attr in instance_names if attr.startswith(RAW_SAVED_PREFIX)]
        if extra:
            return sorted(set(names) | set(extra))
    return names


def saved_slots(fn) -> Iterator[Slot]:
    """Yield a Slot for every tensor the backward node `fn` saved, in a fixed order.

    Never calls an unpack hook, and never raises for what torch does not expose: such a
    tensor gets a Slot marked UNKNOWN, with `why`. (A custom Function's plain ctx
    attributes are not saved tensors: `ctx_slots` reads them.)
    """
    if isinstance(fn, _CUSTOM_FUNCTION_NODE):
        yield from _saved_of_custom_function(fn)
        return
    if isinstance(fn, _COPY_SLICES_NODE):  # a row of its own, so that nothing undercounts
        yield Slot(WRAPPED_OP, UNKNOWN, why=WRAPPED_OP_HIDDEN)
    try:
        names = _raw_saved_names(fn)
    except Exception as error:
        yield Slot("?", UNKNOWN, why=f"dir() of the node failed ({_first_line(error)})")
        return
    for raw_name in names:
        attribute = raw_name[len(RAW_SAVED_PREFIX):]
        try:
            raw = getattr(fn, raw_name)
        except Exception as error:
            yield Slot(attribute, UNKNOWN, why=f"{raw_name} ({_first_line(error)})")
            continue
        indexed = isinstance(raw, (tuple, list))
        items = list(raw) if indexed else [raw]
        try:
            hooks = [_unpack_hook(item) for item in items]
        except AttributeError:
            yield Slot(attribute, UNKNOWN, why=CANNOT_TELL_IF_PACKED)
            continue
        if any(hook is not None for hook in hooks):
            yield from _slots_of_raw(attribute, items, hooks, indexed)
            continue
        value, state, why = _read_value(fn, attribute)  # no hook: unpacking runs nothing
        if state == LIVE:
            yield from _slots_of_values(attribute, value)
        else:
            yield Slot(attribute, state, why=why)


def _slots_on_ctx(name, value) -> Iterator[Slot]:
    """A ctx attribute's tensors: itself, or the tensors among a tuple's or list's items or
    a dict's values (one level, as `tensors_in` looks into a packed object)."""
    for label, tensor in _named_tensors(name, value, dicts=True):
        yield Slot(label, KEPT_ON_CTX, tensor=tensor)


def ctx_slots(fn) -> Iterator[Slot]:
    """Yield a Slot, KEPT_ON_CTX, for every tensor a custom Function keeps as a plain ctx
    attribute (`ctx.w = w` in forward, not ctx.save_for_backward), in the order forward
    set them; nothing for other nodes.

    The node is the ctx itself, so these are its instance attributes: reading them runs
    nothing. Backward does not free them: they live as long as the node. Tensors held
    deeper (inside a module, a function's closure, any other object) are not looked for.
    """
    if not isinstance(fn, _CUSTOM_FUNCTION_NODE):
        return
    try:
        attributes = dict(object.__getattribute__(fn, "__dict__"))  # no __getattr__ of theirs
    except Exception as error:
        yield Slot("ctx", UNKNOWN, why=f"its attributes could not be read ({_first_line(error)})")
        return
    for name, value in attributes.items():
        yield from _slots_on_ctx(f"ctx.{name}", value)


def tensors_in(packed) -> list:
    """The tensors seen in what a pack hook returned, without unpacking: the object itself
    if it is a tensor, or the tensors among a tuple's or list's items (one level)."""
    if isinstance(packed, torch.Tensor):
        return [packed]
    if isinstance(packed, (tuple, list)):
        return [item for item in packed if isinstance(item, torch.Tensor)]
    return []


def defined_in(hook) -> str:
    """Where an unpack hook was defined, e.g. "torch.utils.checkpoint._checkpoint_hook":
    its module and the outermost name of its qualified name."""
    if hook is None or hook is HIDDEN:
        return ""
    module = getattr(hook, "__module__", None) or type(hook).__module__
    qualname = getattr(hook, "__qualname__", None) or type(hook).__qualname__
    return f"{module}.{qualname.split('.')[0]}"


def next_functions(fn) -> list | None:
    """The nodes feeding `fn` (None where no gradient flows), or None if torch hides them."""
    try:
        return [step[0] for step in fn.next_functions]
    except Exception:
        return None


def leaf_tensor(fn) -> torch.Tensor | None:
    """The tensor an AccumulateGrad node fills `.grad` of; None for other nodes."""
    try:
        variable = getattr(fn, "variable", None)
    except Exception:
        return None
    return variable if isinstance(variable, torch.Tensor) else None


def node_kind(fn) -> str:
    """The node's class name, e.g. "MulBackward0": what draw and the tables call it."""
    return type(fn).__name__


# Storages: where a tensor's bytes are, so that each is counted once.

class UnreadableStorage(Exception):
    """Raised by `storages()` for a tensor whose memory PyTorch does not expose."""


_SPARSE_PARTS = {
    torch.sparse_coo: ("_indices", "_values"),
    torch.sparse_csr: ("crow_indices", "col_indices", "values"),
    torch.sparse_bsr: ("crow_indices", "col_indices", "values"),
    torch.sparse_csc: ("ccol_indices", "row_indices", "values"),
    torch.sparse_bsc: ("ccol_indices", "row_indices", "values"),
}


def _parts(tensor):
    """The strided tensors holding `tensor`'s data: itself, or a sparse tensor's pieces."""
    if tensor.layout == torch.strided:
        return [tensor]
    if tensor.layout in _SPARSE_PARTS:
        return [getattr(tensor, part)() for part in _SPARSE_PARTS[tensor.layout]]
    raise UnreadableStorage(f"its layout, {tensor.layout}, keeps its memory out of sight")


def _storage_key(storage):
    # The address says which memory it is. Meta tensors (and empty ones) have none, so
    # the storage object's own identity, stable while it lives, tells them apart.
    return storage.data_ptr() or ("no data", getattr(storage, "_cdata", id(storage)))


def storage_objects(tensor: torch.Tensor) -> list:
    """The storages holding `tensor`'s data: one, or a sparse tensor's two or three. Each
    lives as long as its memory does (weakref.finalize on one says when the memory goes).
    Raises UnreadableStorage as storages() does."""
    return [part.untyped_storage() for part in _parts(tensor)]


def storages(tensor: torch.Tensor) -> list:
    """[(key, bytes)] of the storages holding `tensor`'s data; one for an ordinary tensor,
    two or three for a sparse one. Raises UnreadableStorage for one whose memory PyTorch
    keeps out of sight (a tensor inside a torch.func transform, say)."""
    try:
        if tensor.layout == torch.strided:  # the usual case, kept short: it is most calls
            storage = tensor.untyped_storage()
            return [(_storage_key(storage), storage.nbytes())]
        found = []
        for part in _parts(tensor):
            storage = part.untyped_storage()
            found.append((_storage_key(storage), storage.nbytes()))
        return found
    except UnreadableStorage:
        raise
    except Exception as error:
        raise UnreadableStorage(_first_line(error)) from None


def tensor_nbytes(tensor: torch.Tensor) -> int:
    """The bytes of the tensor's own elements (for a sparse one: its indices and values)."""
    try:
        parts = _parts(tensor)
    except Exception:
        parts = [tensor]
    return sum(part.nelement() * part.element_size() for part in parts)


def functorch_transform(tensor: torch.Tensor) -> str | None:
    """Which torch.func transform wraps `tensor`, if any: such tensors are functorch's."""
    functorch = getattr(torch._C, "_functorch", None)
    checks = [("is_batchedtensor", "vmap"), ("is_gradtrackingtensor", "grad, vjp or jacrev"),
              ("is_functionaltensor", "functionalize")]
    for check, transform in checks:
        try:
            if getattr(functorch, check)(tensor):
                return transform
        except Exception:
            continue
    return None
