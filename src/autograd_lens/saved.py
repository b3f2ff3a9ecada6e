"""What a graph's saved tensors are, and how many bytes they keep alive.

Neither function runs any of your code: a tensor that a saved-tensor hook packed
(`torch.autograd.graph.saved_tensors_hooks`, `torch.utils.checkpoint` with
use_reentrant=False, `torch.autograd.graph.save_on_cpu`) is never unpacked, so no
unpack hook runs and no checkpointed forward is run again.
"""
import html

import torch

from . import internals
from .graph import Names, SavedTensor, check_names, shorten, storage_keys, walk

SEE_ALL_ROWS = "print(saved_tensors(...).summary)"


def _dtype_cell(tensor) -> str:
    # The layout and device only when they are not the usual strided CPU tensor's.
    words = [str(tensor.dtype).replace("torch.", "")]
    if tensor.layout != torch.strided:
        words.append(str(tensor.layout).replace("torch.", ""))
    if tensor.device.type != "cpu":
        words.append(f"on {tensor.device}")
    return " ".join(words)


class SavedTensorTable(list):
    """A list of `SavedTensor` rows that displays as a table in a notebook.

    Its text form (`repr`) and notebook table show the first rows of a long table and say
    how many they left out; `.summary` is the whole table as text.
    """

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
                leaf, row.state)  # live, or kept on ctx

    def _lines(self, rows) -> list:
        cells = [self.columns] + [self._cells(r) for r in rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.columns))]
        return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]

    @property
    def summary(self) -> str:
        """The whole table as text, however long."""
        return "\n".join(self._lines(self)) if self else "no saved tensors"

    def _shown(self) -> tuple[list, str | None]:
        """The rows a repr shows, and the line saying how many it left out (None: none)."""
        shown = shorten(list(self), "rows", SEE_ALL_ROWS)
        if len(shown) == len(self):
            return shown, None
        return shown[:-1], shown[-1]

    def __repr__(self) -> str:
        if not self:
            return "no saved tensors"
        rows, left_out = self._shown()
        return "\n".join(self._lines(rows) + ([left_out] if left_out else []))

    def _repr_html_(self) -> str:
        if not self:
            return "<p>no saved tensors</p>"
        head = "".join(f"<th>{c}</th>" for c in self.columns)
        rows, left_out = self._shown()
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in self._cells(r)) + "</tr>"
            for r in rows
        )
        if left_out:
            body += (f'<tr><td colspan="{len(self.columns)}">{html.escape(left_out.strip())}'
                     "</td></tr>")
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
      An in-place op on a view (`y[:2].mul_(m)`) gives one: autograd wraps the op's
      node in a CopySlices node, and torch does not show what the wrapped node saved;
    - kept on ctx: a tensor a custom torch.autograd.Function keeps as a plain ctx
      attribute (`ctx.w = w` rather than ctx.save_for_backward), as attribute "ctx.w";
      also those in a tuple, list or dict kept there ("ctx.pair[0]"). Read without
      running anything; backward does not free it, so it stays as long as the node.

    Only a live tensor's (or one kept on ctx) shape, dtype and bytes are known; the others
    show empty. The dtype column adds the layout (sparse_coo, ...) and device when they
    are not a strided CPU tensor's. `params` maps names to tensors, like `draw`'s (a
    dict, model.named_parameters(), or the model itself), to name saved leaves.

    A table of more than 40 rows shows its first 30 and says how many it left out;
    `print(table.summary)` shows them all.

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


def retained_bytes(*outputs: torch.Tensor, include_leaves: bool = False,
                   params: Names | None = None) -> int:
    r"""Bytes that the graph's saved tensors keep alive, each storage counted once.

    What counts is whole storages: a saved view keeps its base's storage alive, and
    two saved tensors on one storage count once. Counted:

    - every live saved tensor's storage, including the inputs that do not require grad
      (a batch of data: the graph keeps it alive after you drop your own reference) and
      Python numbers autograd saved as 0-dim tensors (the 2 in `b * 2`, which
      torch.autograd.graph.saved_tensors_hooks never sees);
    - tensors a custom torch.autograd.Function keeps as plain ctx attributes (`ctx.w =
      w`, or in a tuple, list or dict kept on ctx): backward does not free them;
    - for a tensor a saved-tensor hook packed (never unpacked: that would run the hook),
      what the graph holds instead: the storages of the tensors in what the pack hook
      returned, when that is a tensor or a tuple or list with tensors among its items
      (`save_on_cpu`'s copy, say, on whichever device it lives). Any other packed object
      counts zero, since its size cannot be known without unpacking:
      `torch.utils.checkpoint` (use_reentrant=False) packs a small holder and keeps the
      segment's inputs inside its recompute function, which this does not count. With
      use_reentrant=True, checkpoint saves its inputs the ordinary way, and they count,
      as does the RNG state it keeps on ctx.

    Not counted:

    - freed saved tensors, so this drops to 0 after a backward() without
      retain_graph=True (tensors kept on ctx stay, and still count);
    - leaves of the graph (tensors with requires_grad=True that backward fills `.grad`
      of, such as trainable parameters) and views of them: they stay alive as long as
      you hold them, graph or no graph. include_leaves=True counts them too;
    - every tensor in `params` (a dict of names to tensors, model.named_parameters(), or
      the model itself: its parameters), and views of them, whether they require grad
      or not, even with include_leaves=True. Pass the model to leave out its frozen
      weights (requires_grad=False, as in fine-tuning or LoRA), which are not leaves of
      the graph and otherwise count. A model's buffers (BatchNorm's running statistics)
      are not parameters: they count unless you add them, params={**dict(
      model.named_parameters()), **dict(model.named_buffers())}.

    A sparse tensor counts its indices and values. A tensor on the `meta` device has
    no data; it counts the bytes it would take on a real device, so you can size a
    graph before allocating it. Tensors held deeper inside other objects on ctx (a
    module, a function's closure) are not looked for.

    Raises ValueError rather than return a wrong count: when a saved tensor was modified
    in place after it was saved, or cannot be read on this torch (unknown), such as what
    the node of an in-place op on a view saved (autograd hides it inside CopySlices).

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
    params = check_names(params)
    graph = walk(outputs, params)
    storages = {}
    left_out = storage_keys(params.values())  # the parameters' storages, and their views'
    for node in graph.nodes:
        for saved in node.saved:
            _refuse_unreadable(saved)
            if saved.freed or (saved.is_leaf and not include_leaves):
                continue
            for tensor in [saved.tensor] if saved.tensor is not None else saved.packed_tensors:
                try:
                    found = internals.storages(tensor)
                except internals.UnreadableStorage as error:
                    raise ValueError(
                        f"cannot count the bytes of {saved.node}'s saved {saved.attribute}: "
                        f"PyTorch does not expose the memory of this {type(tensor).__name__} "
                        f"({error}).") from None
                storages.update((key, nbytes) for key, nbytes in found if key not in left_out)
    return sum(storages.values())


def _refuse_unreadable(saved: SavedTensor) -> None:
    """Raise, saying why and what to do, for a saved tensor whose bytes cannot be known."""
    if saved.modified:
        raise ValueError(
            f"cannot count the bytes: {saved.node}'s saved {saved.attribute} was "
            "modified in place after it was saved (an optimizer.step() before "
            "backward?), so autograd no longer hands it out and a backward through "
            "this graph would fail. Count before the in-place change, or rebuild "
            "the graph.")
    if saved.unknown:
        what_to_do = "saved_tensors() lists what can be read."
        if saved.attribute == internals.WRAPPED_OP:
            what_to_do = ("The same op out of place (y = torch.cat([y[:2] * m, y[2:]]), or "
                          "torch.where) makes a node whose saved tensors can be read.")
        raise ValueError(
            f"cannot count the bytes: {saved.node}'s saved {saved.attribute} cannot "
            f"be read on torch {torch.__version__} without running anything "
            f"({saved.why}). {what_to_do}")
