"""Draw an autograd graph with Graphviz, in torchviz's style, freed buffers marked.

Colours (torchviz's, plus ours for freed, modified and shared):
- light grey box: a backward node (`grad_fn`); red dashed border once backward
  has freed the tensors it saved;
- light blue: a leaf tensor that requires grad (backward fills its `.grad`);
- green: an output you passed in;
- orange: a tensor a backward node saved for its gradient formula; with a bold border,
  a tensor a custom autograd.Function keeps as a plain ctx attribute (backward does not
  free it);
- white dashed: a saved tensor that backward has freed;
- pink dashed: a saved tensor modified in place after it was saved (a backward
  through its node fails);
- khaki dashed: a saved tensor packed by a saved-tensor hook (checkpoint,
  save_on_cpu, saved_tensors_hooks): never unpacked, so only what the pack hook
  returned is shown;
- grey dotted: a saved tensor (or a node's inputs) that this torch does not expose;
- thistle (purple) box: with several outputs, a node that more than one of
  their backward passes runs through (the part of the graph they share).
"""
import os
from pathlib import Path

import graphviz
import torch
from torchviz.dot import resize_graph

from .describe import describe_graph, labelled_svg
from .graph import Graph, Names, _shape, shorten, walk

# torchviz's node style, so that our drawings look like make_dot's.
NODE_STYLE = dict(style="filled", shape="box", align="left", fontsize="10",
                  ranksep="0.1", height="0.2", fontname="monospace")
BACKWARD = dict(fillcolor="lightgrey")
BACKWARD_FREED = dict(fillcolor="lightgrey", color="red", style="filled,dashed", penwidth="2")
SHARED = dict(fillcolor="thistle")
LEAF = dict(fillcolor="lightblue")
OUTPUT = dict(fillcolor="darkolivegreen1")
SAVED = dict(fillcolor="orange")
SAVED_ON_CTX = dict(fillcolor="orange", style="filled,bold")
SAVED_FREED = dict(fillcolor="white", style="filled,dashed", fontcolor="grey40")
SAVED_MODIFIED = dict(fillcolor="mistyrose", style="filled,dashed", color="red")
SAVED_PACKED = dict(fillcolor="khaki", style="filled,dashed")
UNKNOWN = dict(fillcolor="white", style="filled,dotted", fontcolor="grey40")

LEGEND = [
    ("backward", "backward node (grad_fn)", BACKWARD),
    ("backward_freed", "backward node whose\nsaved tensors were freed", BACKWARD_FREED),
    ("shared", "node shared by\nseveral outputs", SHARED),
    ("leaf", "leaf: backward fills .grad", LEAF),
    ("output", "output", OUTPUT),
    ("saved", "saved tensor", SAVED),
    ("saved_ctx", "tensor kept on ctx:\nbackward does not free it", SAVED_ON_CTX),
    ("saved_freed", "saved tensor, freed", SAVED_FREED),
    ("saved_modified", "saved tensor, modified in place:\nbackward through it fails",
     SAVED_MODIFIED),
    ("saved_packed", "saved tensor packed by a hook:\nnot unpacked, shape unknown",
     SAVED_PACKED),
    ("unknown", "not shown by this torch", UNKNOWN),
]

INSTALL_NOTE = ("Graphviz's `dot` program was not found, so this is the graph's DOT source. "
                "To see the picture, install Graphviz: `sudo apt-get install graphviz`, "
                "`brew install graphviz` or `conda install -c conda-forge graphviz`.")


def _saved_words(saved):
    """How the summary names one saved tensor: "self = a (1, 4)", "result freed"."""
    words = saved.attribute + (f" = {saved.name}" if saved.name else "")
    if saved.packed_by_hook:
        return f"{words} {saved.lost} as {saved.packed_summary(short=True)}"
    return words + (f" {saved.lost}" if saved.lost else f" {_shape(saved.tensor)}")


SEE_ALL_NODES = "print(draw(...).summary)"


def _summary(graph: Graph) -> list[str]:
    """The summary's lines: a heading, then a row per node."""
    holding = [n for n in graph.nodes if n.holds_saved_tensors]
    freed = [n for n in holding if n.freed]
    packed = [n for n in holding if n.packed_by_hook]
    unknown = [n for n in graph.nodes if n.unknown or any(s.unknown for s in n.saved)]
    outputs = ", ".join(f"{name} {_shape(t)}" for name, t, _ in graph.outputs)
    # Nodes that saved tensors, and those that have freed them (a freed node holds none).
    head = (f"autograd graph of {outputs}: {len(graph.nodes)} nodes, "
            f"{len(holding)} that saved tensors, {len(freed)} that freed them")
    if packed:  # only then, so that the summary of an ordinary graph stays as it was
        head += f", {len(packed)} hold tensors packed by a hook"
    if unknown:
        head += f", {len(unknown)} not fully shown by this torch"
    lines = [head]
    width = max(len(n.name) for n in graph.nodes)
    for node in graph.nodes:
        if node.is_leaf:
            what = f"leaf {_shape(node.leaf_tensor)}"
        elif node.saved:
            what = "saved " + ", ".join(_saved_words(s) for s in node.saved)
        else:
            what = "saves no tensors"
        if node.unknown:
            what += " (" + ", ".join(node.unknown) + " unknown)"
        made = node.grad_fn_of + [name for name, _, i in graph.outputs if i == node.index]
        if made:
            what += " -> " + ", ".join(made)
        if len(node.reached_by) > 1:
            what += " [shared by " + ", ".join(node.reached_by) + "]"
        lines.append(f"  {node.name.ljust(width)}  {what}")
    return lines


def _saved_box(saved) -> tuple[str, str, dict]:
    """(label, legend key, style) of a saved tensor's box."""
    title = saved.attribute + (f" = {saved.name}" if saved.name else "")
    if saved.freed:
        return f"{title}\nfreed", "saved_freed", SAVED_FREED
    if saved.modified:
        return f"{title}\nmodified in place", "saved_modified", SAVED_MODIFIED
    if saved.packed_by_hook:
        return (f"{title}\npacked by a hook\nas {saved.packed_summary(short=True)}",
                "saved_packed", SAVED_PACKED)
    if saved.unknown:
        return f"{title}\nunknown", "unknown", UNKNOWN
    if saved.kept_on_ctx:
        return f"{title}\n{_shape(saved.tensor)}\nkept on ctx", "saved_ctx", SAVED_ON_CTX
    return f"{title}\n{_shape(saved.tensor)}", "saved", SAVED


def _dot(graph: Graph, show_saved: bool) -> graphviz.Digraph:
    dot = graphviz.Digraph(node_attr=NODE_STYLE, graph_attr=dict(size="12,12"))
    used = set()
    for node in graph.nodes:
        node_id = f"n{node.index}"
        if node.is_leaf:
            style, used_key = LEAF, "leaf"
            label = f"{node.name}\n{_shape(node.leaf_tensor)}"
        else:
            used_key = "backward_freed" if node.freed else "backward"
            style, label = (BACKWARD_FREED if node.freed else BACKWARD), node.name
            if len(node.reached_by) > 1:
                used.add("shared")
                style = {**style, **SHARED}
            for name in node.grad_fn_of:
                label += f"\n= {name}.grad_fn"
        if node.unknown:
            used.add("unknown")
            label += "\n" + ", ".join(node.unknown) + " unknown"
        used.add(used_key)
        dot.node(node_id, label, **style)
        for source in node.inputs:
            dot.edge(f"n{source}", node_id)
        if show_saved:
            for k, saved in enumerate(node.saved):
                saved_id = f"n{node.index}_saved{k}"
                label, key, style = _saved_box(saved)
                used.add(key)
                dot.node(saved_id, label, **style)
                dot.edge(saved_id, node_id, dir="none", style="dashed")
    for position, (name, tensor, index) in enumerate(graph.outputs):
        used.add("output")
        dot.node(f"out{position}", f"{name}\n{_shape(tensor)}", **OUTPUT)
        dot.edge(f"n{index}", f"out{position}")
    add_legend(dot, LEGEND, used)
    resize_graph(dot)
    return dot


def add_legend(dot: graphviz.Digraph, entries: list, used: set) -> None:
    """A dashed box listing, in a column, the `entries` (key, text, style) whose key the
    picture `used`, so that a legend never explains what is not drawn."""
    with dot.subgraph(name="cluster_legend") as legend:
        legend.attr(label="legend", fontname="monospace", fontsize="10", style="dashed")
        shown = [key for key, _, _ in entries if key in used]
        for key, text, style in entries:
            if key in used:
                legend.node(f"legend_{key}", text, **style)
        for upper, lower in zip(shown, shown[1:]):  # stack the entries in a column
            legend.edge(f"legend_{upper}", f"legend_{lower}", style="invis")


class GraphView:
    """A drawn autograd graph: SVG in Jupyter, a short summary as text.

    `.source` is the DOT source, the same bytes in every run for the same code.
    `.summary` lists the nodes, what each saved and whether freed. `.description` says
    what the picture shows in a sentence or three: its alt text, which Jupyter stores
    with the picture and the SVG carries as its aria-label. `repr()` (what a
    terminal shows) is the summary, but for a graph of more than 40 nodes only its first
    30, with a line saying how many it left out: `print(view.summary)` shows them all.

    Example::

        >>> import torch
        >>> from autograd_lens import draw
        >>> a = torch.ones(3, requires_grad=True)
        >>> view = draw(a.exp().sum())
        >>> view.source.startswith("digraph")
        True
        >>> print(view.summary.splitlines()[0])
        autograd graph of output 0 (): 3 nodes, 1 that saved tensors, 0 that freed them
    """

    see_all = SEE_ALL_NODES  # how the line that cuts a long repr says to see it all
    rows_are = "nodes"  # what the summary's rows stand for

    def __init__(self, graph: Graph, show_saved: bool) -> None:
        self._lines = _summary(graph)
        self._heading = 1  # lines above the rows, never cut
        self.description = describe_graph(graph)
        self.dot = _dot(graph, show_saved)

    @property
    def summary(self) -> str:
        """The whole text summary, however long."""
        return "\n".join(self._lines)

    @property
    def source(self) -> str:
        return self.dot.source

    def __repr__(self) -> str:
        head, rows = self._lines[:self._heading], self._lines[self._heading:]
        return "\n".join(head + shorten(rows, self.rows_are, self.see_all))

    def svg(self) -> str:
        """The SVG picture, labelled with `.description`; needs Graphviz's `dot` (raises
        ExecutableNotFound without)."""
        return labelled_svg(self.dot.pipe(format="svg", encoding="utf-8"), self.description)

    def _repr_mimebundle_(self, include=None, exclude=None) -> tuple[dict, dict]:
        """(data, metadata): the picture and the summary, and the picture's alt text,
        which Jupyter stores with it (tools/alt_text.py carries it to the site and decks)."""
        try:
            return ({"image/svg+xml": self.svg(), "text/plain": repr(self)},
                    {"image/svg+xml": {"alt": self.description}})
        except graphviz.ExecutableNotFound:
            return {"text/plain": f"{self!r}\n\n{INSTALL_NOTE}\n\n{self.source}"}, {}

    def save(self, path: str | os.PathLike) -> Path:
        """Write the graph to `path`: .svg, .png (both need Graphviz) or .dot.

        Example::

            >>> import torch
            >>> from autograd_lens import draw
            >>> a = torch.ones(3, requires_grad=True)
            >>> draw(a.exp().sum()).save("graph.svg")  # doctest: +SKIP
            PosixPath('graph.svg')
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".dot":
            path.write_text(self.source, encoding="utf-8")
        elif suffix in (".svg", ".png"):
            try:
                path.write_bytes(self.dot.pipe(format=suffix[1:]))
            except graphviz.ExecutableNotFound:
                raise RuntimeError(f"cannot write {path.name}: {INSTALL_NOTE} "
                                   "Or save as .dot, which needs no Graphviz.") from None
        else:
            raise ValueError(f"cannot save as {path.name!r}: use a path ending in "
                             ".svg, .png or .dot")
        return path


def draw(*outputs: torch.Tensor, params: Names | None = None,
         show_saved: bool = True) -> GraphView:
    r"""Draw the autograd graph that reaches `outputs`.

    params: maps names to tensors (e.g. {"a": a} or dict(model.named_parameters()), or
        the model itself for its parameters) to label the leaves, outputs and saved
        tensors they name.
    show_saved: draw each saved tensor as an orange box beside the node holding it.

    Never raises because buffers were freed: freed saved tensors are drawn dashed
    and the nodes that held them get a red dashed border, with a legend. Never runs
    your code either: a tensor that a saved-tensor hook packed (checkpoint,
    save_on_cpu, saved_tensors_hooks) is drawn as "packed by a hook", with what its
    pack hook returned, and is not unpacked.

    Example::

        >>> import torch
        >>> from autograd_lens import draw
        >>> a = torch.ones(1, 4, requires_grad=True)
        >>> draw((a ** 2).sum(), params={"a": a})  # in Jupyter, the picture
        autograd graph of output 0 (): 3 nodes, 1 that saved tensors, 0 that freed them
          SumBackward0  saves no tensors -> output 0
          PowBackward0  saved self = a (1, 4)
          a             leaf (1, 4)
    """
    return GraphView(walk(outputs, params), show_saved)
