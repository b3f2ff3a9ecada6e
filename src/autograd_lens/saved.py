"""What a graph's saved tensors are, and how many bytes they keep alive."""
import html

from .graph import walk


class SavedTensorTable(list):
    """A list of `SavedTensor` rows that displays as a table in a notebook."""

    columns = ("node", "attribute", "shape", "dtype", "bytes", "leaf", "state")

    def _cells(self, row):
        attribute = row.attribute if row.name is None else f"{row.attribute} = {row.name}"
        if row.tensor is None:  # gone, or unreadable: only the reason is known
            return (row.node, attribute, "", "", "", "", row.lost)
        dtype = str(row.dtype).replace("torch.", "")
        return (row.node, attribute, str(row.shape), dtype, str(row.nbytes),
                "yes" if row.is_leaf else "", "live")

    def __repr__(self):
        if not self:
            return "no saved tensors"
        rows = [self.columns] + [self._cells(r) for r in self]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.columns))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join(lines)

    def _repr_html_(self):
        if not self:
            return "<p>no saved tensors</p>"
        head = "".join(f"<th>{c}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in self._cells(r)) + "</tr>"
            for r in self
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def saved_tensors(*outputs, params=None) -> SavedTensorTable:
    """List every tensor saved by the graph that reaches `outputs`.

    One row per (node, attribute): the node that holds it, the attribute name
    autograd gives it (`self`, `other`, `result`, ...), shape, dtype, bytes, whether
    it is (a view of) a leaf of the graph, and its state: live, freed by backward, or
    modified in place after it was saved (autograd then refuses to hand it out, and a
    backward through its node fails). Only a live tensor's shape, dtype and bytes
    are known; the others show empty.
    `params` maps names to tensors, like `draw`'s, to name saved leaves.
    """
    graph = walk(outputs, params)
    return SavedTensorTable(s for node in graph.nodes for s in node.saved)


def retained_bytes(*outputs, include_leaves=False) -> int:
    """Bytes that the graph's live saved tensors keep alive, each storage counted once.

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
            if saved.freed or (saved.is_leaf and not include_leaves):
                continue
            storage = saved.tensor.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())
