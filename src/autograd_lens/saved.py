"""What a graph's saved tensors are, and how many bytes they keep alive.

Neither function runs any of your code: a tensor that a saved-tensor hook packed
(`torch.autograd.graph.saved_tensors_hooks`, `torch.utils.checkpoint` with
use_reentrant=False, `torch.autograd.graph.save_on_cpu`) is never unpacked, so no
unpack hook runs and no checkpointed forward is run again.
"""
import html

import torch

from . import internals
from .graph import Names, SavedTensor, walk


def _dtype_cell(tensor) -> str:
    # The layout and device only when they are not the usual strided CPU tensor's.
    words = [str(tensor.dtype).replace("torch.", "")]
    if tensor.layout != torch.strided:
        words.append(str(tensor.layout).replace("torch.", ""))
    if tensor.device.type != "cpu":
        words.append(f"on {tensor.device}")
    return " ".join(words)


class SavedTensorTable(list):
    """A list of `SavedTensor` rows that displays as a table in a notebook."""

    columns = ("node", "attribute", "shape", "dtype", "bytes", "leaf", "state")

    def _cells(self, row: SavedTensor) -> tuple:
        attribute = row.attribute if row.name is None else f"{row.attribute} = {row.name}"
        leaf = "yes" if row.is_leaf else ""
        if row.packed_by_hook:  # never unpacked: what its pack hook returned is all we know
            return (row.node, attribute, "", "", "", leaf,
                    f"{row.lost}: {row.packed_summary()}")
        if row.unknown:
            return (row.node, attribute, "", "", "", "", f"{row.lost}: {row.why}")
        if row.tensor is None:  # freed, or modified in place: only the reason is known
            return (row.node, attribute, "", "", "", "", row.lost)
        return (row.node, attribute, str(row.shape), _dtype_cell(row.tensor), str(row.nbytes),
                leaf, "live")

    def __repr__(self) -> str:
        if not self:
            return "no saved tensors"
        rows = [self.columns] + [self._cells(r) for r in self]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.columns))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        if not self:
            return "<p>no saved tensors</p>"
        head = "".join(f"<th>{c}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in self._cells(r)) + "</tr>"
            for r in self
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def saved_tensors(*outputs: torch.Tensor, params: Names | None = None) -> SavedTensorTable:
    r"""List every tensor saved by the graph that reaches `outputs`.

    One row per (node, attribute): the node that holds it, the attribute name
    autograd gives it (`self`, `other`, `result`, ...), shape, dtype, bytes, whether
    it is (a view of) a leaf of the graph, and its state:

    - live;
    - freed by backward;
    - modified in place after it was saved (autograd then refuses to hand it out, and
      a backward through its node fails);
    - packed by a hook: a saved-tensor hook (checkpoint, save_on_cpu, your own
      saved_tensors_hooks) holds it. It is not unpacked, since that would run the
      hook (and, for checkpoint, the forward again); the row says what the pack hook
      returned (its type, the tensors in it and their bytes) and where the hook comes
      from;
    - unknown: this version of torch does not expose it (the row says what is missing).

    Only a live tensor's shape, dtype and bytes are known; the others show empty. The
    dtype column adds the layout (sparse_coo, ...) and device when they are not a
    strided CPU tensor's. `params` maps names to tensors, like `draw`'s, to name saved
    leaves.

    Example::

        >>> import torch
        >>> from autograd_lens import saved_tensors
        >>> a = torch.ones(1, 4, requires_grad=True)
        >>> saved_tensors((a.exp() * 2).sum(), params={"a": a})
        node          attribute  shape   dtype    bytes  leaf  state
        MulBackward0  other      ()      int64    8            live
        ExpBackward0  result     (1, 4)  float32  16           live
    """
    graph = walk(outputs, params)
    return SavedTensorTable(s for node in graph.nodes for s in node.saved)


def retained_bytes(*outputs: torch.Tensor, include_leaves: bool = False) -> int:
    r"""Bytes that the graph's live saved tensors keep alive, each storage counted once.

    What counts is whole storages: a saved view keeps its base's storage alive, and
    two saved tensors on one storage count once. Freed saved tensors count zero, so
    this drops to 0 after a backward() without retain_graph=True.

    Leaves of the graph (tensors with requires_grad=True that backward fills `.grad`
    of, such as parameters) and views of them are not counted by default: they stay
    alive as long as you hold them, graph or no graph. Pass include_leaves=True to
    count them too. Inputs that do not require grad (a batch of data) do count: the
    graph keeps them alive after you drop your own reference, and so do Python
    numbers autograd saved as 0-dim tensors (the 2 in `b * 2`), which
    torch.autograd.graph.saved_tensors_hooks never sees.

    Tensors a saved-tensor hook packed are never unpacked (that would run the hook).
    What counts for them is what the graph holds instead: the storages of the tensors
    in what the pack hook returned, when that is a tensor or a tuple or list with
    tensors among its items (`save_on_cpu`'s copy, say, on whichever device it lives).
    Any other packed object counts zero, since its size cannot be known without
    unpacking: `torch.utils.checkpoint` (use_reentrant=False) packs a small holder and
    keeps the segment's inputs inside its recompute function, which this does not
    count. With use_reentrant=True, checkpoint saves its inputs the ordinary way, and
    they count.

    A sparse tensor counts its indices and values. A tensor on the `meta` device has
    no data; it counts the bytes it would take on a real device, so you can size a
    graph before allocating it.

    Raises ValueError when a saved tensor was modified in place after it was saved, or
    when one cannot be read on this torch (unknown), rather than return a wrong count.

    Example::

        >>> import torch
        >>> from autograd_lens import retained_bytes
        >>> x = torch.ones(100, requires_grad=True)
        >>> loss = x.exp().sum()  # exp saves its result: 100 float32 numbers
        >>> retained_bytes(loss)
        400
        >>> loss.backward()
        >>> retained_bytes(loss)
        0
    """
    graph = walk(outputs)
    storages = {}
    for node in graph.nodes:
        for saved in node.saved:
            if saved.modified:
                raise ValueError(
                    f"cannot count the bytes: {saved.node}'s saved {saved.attribute} was "
                    "modified in place after it was saved (an optimizer.step() before "
                    "backward?), so autograd no longer hands it out and a backward through "
                    "this graph would fail. Count before the in-place change, or rebuild "
                    "the graph.")
            if saved.unknown:
                raise ValueError(
                    f"cannot count the bytes: {saved.node}'s saved {saved.attribute} cannot "
                    f"be read on torch {torch.__version__} without running anything "
                    f"({saved.why}). saved_tensors() lists what can be read.")
            if saved.freed or (saved.is_leaf and not include_leaves):
                continue
            for tensor in [saved.tensor] if saved.tensor is not None else saved.packed_tensors:
                try:
                    storages.update(internals.storages(tensor))
                except internals.UnreadableStorage as error:
                    raise ValueError(
                        f"cannot count the bytes of {saved.node}'s saved {saved.attribute}: "
                        f"PyTorch does not expose the memory of this {type(tensor).__name__} "
                        f"({error}).") from None
    return sum(storages.values())
