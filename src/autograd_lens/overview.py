"""A readable view of a big autograd graph: one box per block of the model.

A ResNet or a 12-layer transformer has hundreds to thousands of backward nodes; `draw`
shows every one and the picture is unreadable. `overview` draws one box per *block*
instead, and says in each box what `draw` would show node by node: how many nodes, how
many saved tensors, how many bytes those keep alive, how many have freed them, and
which outputs share it. Blocks that repeat alike (the 12 layers of an encoder) become
one box marked "(12 alike)".

Which block a node belongs to comes from the names in `params` alone (nothing is run):

1. a parameter belongs to its module: "encoder.layers.3.self_attn.in_proj_weight"
   -> "encoder.layers.3.self_attn". torch.compile's wrapper is left out of the names
   ("_orig_mod.encoder..." is "encoder..."), so the compiled model's names and the
   original's give the same blocks;
2. a backward node that takes parameters directly (AddmmBackward0 of a Linear, the
   TBackward0 of its weight, NativeLayerNormBackward0) belongs to their module. A node
   that takes none and holds no saved tensors (a reshape, a transpose, an add) and whose
   result has one user goes with that user: it prepares the user's input. Any other
   node (an activation, attention's softmax, a residual stream used twice, a trunk's
   output under two heads, the loss) belongs to the module of the last node made before
   it in the forward pass that took parameters: the order is autograd's own (each
   node's sequence number, or an order with every node after its inputs if this torch
   gives none). A parameter whose own module's block has no node goes with the first
   node that takes it, so that no box is empty;
3. the block is the module's name up to its first number, the layer of a ModuleList or
   Sequential, whether the number is a part of its own or ends a part:
   "encoder.layers.3.self_attn" -> "encoder.layers.3", "transformer.h.3.attn" ->
   "transformer.h.3", "encoder.layers.encoder_layer_3.mlp.0" ->
   "encoder.layers.encoder_layer_3", "blocks.block3.conv" -> "blocks.block3". A part
   ending in a number that a whole number follows is a stage of numbered blocks:
   "layer2.0.conv1" -> "layer2.0". A name without a number gives its first part
   ("head.fc" -> "head"). `depth=k` keeps the first k parts instead;
4. neighbouring blocks whose names differ only in that last number and whose nodes are
   alike (same node types, saved shapes, freed and shared state) are drawn as one box,
   "encoder.layers.0-11 (12 alike)", whose counts and bytes are totals over them all
   ("in all").

A torch.compile'd region is one backward node, CompiledFunctionBackward, that takes the
region's parameters: it belongs to the compiled module ("encoder (compiled)", or the
model's class name when the whole model was compiled and params is the model), and
the layers inside it are not shown (the text form says so).

When the picture of the default view (depth=None) would be larger than a 1920x1080
screen at 96 dpi (1440x810 pt), `overview` draws a coarser one itself: the largest
depth whose picture fits (measured with Graphviz; without Graphviz nothing is
measured). The text form says so; `fit=False` keeps the default view.

Colours are `draw`'s: grey boxes of backward nodes, a red dashed border when some of
their saved tensors were freed, thistle when several outputs' backward passes run
through some of their nodes, light blue for leaves not named in `params`, green outputs.
"""
import re
from dataclasses import dataclass, field

import graphviz
import torch

from . import internals
from .describe import NAMED_UP_TO, and_list
from .draw import (BACKWARD, BACKWARD_FREED, LEAF, NODE_STYLE, OUTPUT, SHARED, GraphView,
                   add_legend)
from .graph import FREED, PACKED, Names, check_names, storage_keys, walk
from .internals import node_kind

BEFORE_ANY_PARAMETER = "(before any parameter)"
TOP_LEVEL = "(top level)"
UNNAMED_LEAVES = "(leaves not in params)"
COMPILED_MODEL = "(compiled model)"  # the whole model compiled, its class name unknown

SCREEN_PT = (1440, 810)  # a 1920x1080 px screen at 96 dpi, in points (1/72 inch)
COMPILED_WRAPPER = "_orig_mod"  # torch.compile's OptimizedModule keeps the model under it
COMPILED_NODE = "CompiledFunctionBackward"  # the backward node of a compiled region
NUMBERED = re.compile(r"(.*?)(\d+)")  # "3", "block3", "encoder_layer_11": (stem, number)

LEGEND = [
    ("backward", "block of backward nodes", BACKWARD),
    ("freed", "block where backward\nfreed saved tensors", BACKWARD_FREED),
    ("shared", "block with nodes that the\nbackward passes of several\noutputs run", SHARED),
    ("leaf", "leaves not in params", LEAF),
    ("output", "output", OUTPUT),
]

COMPILED_NOTE = ("note: torch.compile made each compiled region one backward node "
                 f"({COMPILED_NODE}): the layers inside it are not shown. To see them, run "
                 "the forward pass through the uncompiled module (compiled._orig_mod).")


@dataclass
class Block:
    """One box of the overview: the nodes of one block, or of several alike blocks."""

    name: str  # "encoder.layers.0", or "encoder.layers.1-10" for repeated blocks
    repeats: int = 1  # how many alike blocks the box stands for
    nodes: int = 0  # backward nodes (grad_fn), leaves not counted
    params: int = 0  # parameters (leaves named in params)
    leaves: int = 0  # leaves not named in params
    holding: int = 0  # backward nodes holding saved tensors
    freed: int = 0  # of those, how many had them freed by backward
    saved_bytes: int = 0  # bytes kept alive, each storage counted once in the whole graph
    bytes_by_kind: dict = field(default_factory=dict)  # node type -> its part of saved_bytes
    lost: dict = field(default_factory=dict)  # other states of saved tensors -> count
    shared: int = 0  # nodes that several outputs' backward passes run through
    shared_by: list = field(default_factory=list)  # those outputs' names
    outputs: list = field(default_factory=list)  # outputs made by this box's nodes
    compiled: int = 0  # torch.compile'd regions (each one backward node)


def _module_of_param(name: str) -> str:
    return name.rpartition(".")[0]


def _uncompiled(name: str) -> str:
    """The name without torch.compile's wrapper: "_orig_mod.encoder.0" -> "encoder.0"."""
    return ".".join(part for part in name.split(".") if part != COMPILED_WRAPPER)


def _compiled_modules(names) -> set:
    """The modules that torch.compile wrapped, from the names under them: "" for
    "_orig_mod.0.weight" (the whole model), "encoder" for "encoder._orig_mod.0.weight"."""
    found = set()
    for name in names:
        parts = name.split(".")
        if COMPILED_WRAPPER in parts:
            found.add(".".join(parts[:parts.index(COMPILED_WRAPPER)]))
    return found


def _compiled_module(module: str, compiled: set) -> str:
    """The compiled module that holds `module`, the innermost one; `module` itself when
    the names do not say (params from the model before torch.compile)."""
    holding = [c for c in compiled if not c or module == c or module.startswith(c + ".")]
    return max(holding, key=len) if holding else module


def _common_module(modules) -> str:
    parts = [m.split(".") if m else [] for m in modules]
    common = []
    for same in zip(*parts):
        if len(set(same)) > 1:
            break
        common.append(same[0])
    return ".".join(common)


def _layer_part(parts) -> int | None:
    """Which part of a module's name numbers a layer: the first part that is or ends in a
    number ("3", "block3", "encoder_layer_11"); but for a name ending in a number with a
    whole number after it ("layer2.0": a stage, then its block), that whole number."""
    for k, part in enumerate(parts):
        if part[-1:].isdigit():
            stage = not part.isdigit() and k + 1 < len(parts) and parts[k + 1].isdigit()
            return k + 1 if stage else k
    return None


def _block_name(module, depth) -> str:
    if module is None:
        return BEFORE_ANY_PARAMETER
    if not module:
        return TOP_LEVEL
    parts = module.split(".")
    if depth is not None:
        return ".".join(parts[:depth])
    k = _layer_part(parts)
    return ".".join(parts[:k + 1]) if k is not None else parts[0]


def _forward_order(graph) -> list:
    """Backward nodes in the order the forward pass made them (leaves left out).

    Each node's sequence number (`_sequence_nr()`) is that order. If this torch does
    not give it, or the numbers put a node before one of its inputs (each thread counts
    on its own, so a graph built in two threads has no single order), a topological order
    (inputs first) from the walk stands in for it.
    """
    inner = [node for node in graph.nodes if not node.is_leaf]
    try:
        numbers = {node.index: node.fn._sequence_nr() for node in inner}
    except (AttributeError, RuntimeError, TypeError):
        return _inputs_first(graph)
    order = sorted(inner, key=lambda node: (numbers[node.index], node.index))
    position = {node.index: k for k, node in enumerate(order)}
    if any(position[i] > position[node.index] for node in inner for i in node.inputs
           if i in position):
        return _inputs_first(graph)
    return order


def _inputs_first(graph) -> list:
    done, order = set(), []
    for _, _, root in graph.outputs:
        stack = [(root, iter(graph.nodes[root].inputs))]
        while stack:
            index, inputs = stack[-1]
            step = next(inputs, None)
            if step is None:
                stack.pop()
                if index not in done:
                    done.add(index)
                    order.append(graph.nodes[index])
            elif step not in done:
                stack.append((step, iter(graph.nodes[step].inputs)))
    return [node for node in order if not node.is_leaf]


def _signature(nodes, leaves, prefix) -> tuple:
    """What must be equal for two blocks to be drawn as one box."""
    return (
        tuple((node_kind(n.fn), len(n.inputs), tuple(n.reached_by),
               tuple((s.attribute, s.shape, str(s.dtype), s.lost) for s in n.saved))
              for n in nodes),
        tuple(sorted(((name or "")[len(prefix):], tuple(leaf.leaf_tensor.shape))
                     for name, leaf in leaves)),
    )


def _kept_alive(saved) -> list:
    """[(storage key, bytes)] that one saved tensor keeps alive, counted as retained_bytes
    counts them: a live tensor's (or one kept on ctx) storage, or the tensors a pack hook
    returned; nothing for a leaf's, a freed one, or one that cannot be read (the box
    lists those)."""
    if saved.is_leaf or saved.lost not in (None, PACKED):
        return []
    found = []
    for tensor in [saved.tensor] if saved.tensor is not None else saved.packed_tensors:
        try:
            found += internals.storages(tensor)
        except internals.UnreadableStorage:
            pass  # its memory is out of sight; retained_bytes raises, the box goes on
    return found


def _numbered_end(name):
    """("encoder.layers", "encoder_layer_", "3") for "encoder.layers.encoder_layer_3":
    the parent, and the last part's stem and number; None if it ends in no number."""
    parent, _, last = name.rpartition(".")
    match = NUMBERED.fullmatch(last)
    return (parent, match[1], match[2]) if match else None


def _alike_names(name, previous) -> bool:
    """"layers.3" after "layers.2", "h.block3" after "h.block2": the same parent and stem,
    each ending in a number."""
    ends = _numbered_end(name), _numbered_end(previous)
    return None not in ends and ends[0][:2] == ends[1][:2]


def _blocks(graph, param_name, depth, compiled):
    """Assign every node to a block; list each block's nodes and parameters.

    param_name: id of a parameter -> its name, torch.compile's wrapper left out;
    compiled: the modules torch.compile wrapped, as _compiled_modules gives them.
    """
    block_of = {}  # node index -> block name
    members = {}  # block name -> ([backward nodes], [(param name or None, leaf)]), in order

    for node in graph.nodes:
        if node.is_leaf:
            given = param_name.get(id(node.leaf_tensor))
            block_of[node.index] = (UNNAMED_LEAVES if given is None
                                    else _block_name(_module_of_param(given), depth))
    order = _forward_order(graph)
    own = {}  # node index -> module of the parameters it takes directly
    last = {}  # node index -> module of the last node before it that took parameters
    module = None
    for node in order:
        direct = sorted({_module_of_param(param_name[id(graph.nodes[i].leaf_tensor)])
                         for i in node.inputs
                         if graph.nodes[i].is_leaf
                         and id(graph.nodes[i].leaf_tensor) in param_name})
        if direct:
            module = _common_module(direct)
            if node_kind(node.fn) == COMPILED_NODE:  # the region of a compiled module
                module = _compiled_module(module, compiled)
            own[node.index] = module
        last[node.index] = module
    users = {}  # node index -> the backward nodes that use its result
    for node in order:
        for i in node.inputs:
            users.setdefault(i, set()).add(node.index)
    for node in reversed(order):  # users come later in the forward pass: placed already
        if node.index in own:
            module_block = _block_name(own[node.index], depth)
        elif not node.saved and len(users.get(node.index, ())) == 1:
            (user,) = users[node.index]  # glue, e.g. a reshape before a Linear
            module_block = block_of[user]
        else:  # an activation, a residual stream, a trunk's output under two heads
            module_block = _block_name(last[node.index], depth)
        block_of[node.index] = module_block
    _no_empty_boxes(graph, order, block_of, param_name)

    placed = set()  # leaves already listed in their block
    for node in order:
        for i in node.inputs:  # a leaf is listed in its block where first used
            leaf = graph.nodes[i]
            if leaf.is_leaf and i not in placed:
                placed.add(i)
                members.setdefault(block_of[i], ([], []))[1].append(
                    (param_name.get(id(leaf.leaf_tensor)), leaf))
        members.setdefault(block_of[node.index], ([], []))[0].append(node)
    return block_of, members


def _no_empty_boxes(graph, order, block_of, param_name):
    """A parameter whose block has no backward node (its module's nodes went to another
    block: a torch.compile'd region, an op on two modules' parameters) goes with the
    first node that takes it, rather than make a box of its own with nothing in it."""
    with_nodes = {block_of[node.index] for node in order}
    for node in order:  # in forward order: the first user comes first
        for i in node.inputs:
            leaf = graph.nodes[i]
            if (leaf.is_leaf and id(leaf.leaf_tensor) in param_name
                    and block_of[i] not in with_nodes):
                block_of[i] = block_of[node.index]


def _boxes(members) -> list:
    """Fold runs of alike neighbours ("layers.1", "layers.2", ...) into one box each."""
    boxes = []  # (names of the blocks in the box, their common signature)
    for name, (nodes, leaves) in members.items():
        signature = _signature(nodes, leaves, name + ".")
        if boxes and _alike_names(name, boxes[-1][0][-1]) and boxes[-1][1] == signature:
            boxes[-1][0].append(name)
        else:
            boxes.append(([name], signature))
    return [names for names, _ in boxes]


def _count(graph, box_names, members, box_of, left_out, model_name) -> list:
    """Each box's counts. left_out: the parameters' storage keys, never counted."""
    blocks = []
    for names in box_names:
        label = names[0] if len(names) == 1 else f"{names[0]}-{_numbered_end(names[-1])[2]}"
        blocks.append(Block(name=label, repeats=len(names)))
    counted = set(left_out)  # storages already counted, so that the bytes add up over boxes
    for names in box_names:
        for name in names:
            nodes, leaves = members[name]
            for given, leaf in leaves:
                block = blocks[box_of[leaf.index]]
                if given is None:
                    block.leaves += 1
                else:
                    block.params += 1
            for node in nodes:
                block = blocks[box_of[node.index]]
                block.nodes += 1
                block.compiled += node_kind(node.fn) == COMPILED_NODE
                if node.saved:
                    block.holding += 1
                    block.freed += node.freed
                for saved in node.saved:
                    if saved.lost is not None and saved.lost != FREED:
                        block.lost[saved.lost] = block.lost.get(saved.lost, 0) + 1
                    for key, nbytes in _kept_alive(saved):
                        if key not in counted:
                            counted.add(key)
                            block.saved_bytes += nbytes
                            kind = node_kind(node.fn)
                            block.bytes_by_kind[kind] = block.bytes_by_kind.get(kind, 0) + nbytes
                if len(node.reached_by) > 1:
                    block.shared += 1
                    block.shared_by += [o for o in node.reached_by if o not in block.shared_by]
    for name, _, index in graph.outputs:
        blocks[box_of[index]].outputs.append(name)
    for block in blocks:
        if block.compiled:  # named after the compiled module
            whole = model_name + " (compiled)" if model_name else COMPILED_MODEL
            block.name = whole if block.name == TOP_LEVEL else block.name + " (compiled)"
    return blocks


def _size(nbytes: int) -> str:
    for unit, scale in (("MB", 10**6), ("kB", 10**3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"


def _shape(tensor) -> str:
    return "(" + ", ".join(str(n) for n in tensor.shape) + ")"


def _describe(block: Block) -> list:
    """The lines of a box's label, also used in the text summary. A box of several alike
    blocks gives totals over them, and says so ("in all")."""
    in_all = "in all: " if block.repeats > 1 else ""
    counts = []
    if block.nodes or not block.leaves:
        counts.append(f"{block.nodes} node{'s' * (block.nodes != 1)}")
    if block.params:
        counts.append(f"{block.params} param{'s' * (block.params != 1)}")
    if block.leaves:
        counts.append(f"{block.leaves} {'leaf' if block.leaves == 1 else 'leaves'}")
    if block.holding:
        counts.append(f"{block.holding} that saved tensors"
                      + (f", {block.freed} that freed them" if block.freed else ""))
    lines = [in_all + ", ".join(counts)]
    if block.holding:
        kept = f"kept alive: {_size(block.saved_bytes)}" + (" in all" if in_all else "")
        if block.saved_bytes:
            kind = max(block.bytes_by_kind, key=lambda k: (block.bytes_by_kind[k], k))
            kept += f", most by {kind}"
        lines.append(kept)
    for state, number in block.lost.items():
        lines.append(f"{in_all}{number} saved tensors {state}")
    if block.shared:  # worded so that no block's name can read as part of it
        nodes = ("all nodes" if block.shared == block.nodes
                 else f"{in_all}{block.shared} node{'s' * (block.shared != 1)}")
        lines.append(f"{nodes} run by the backward passes of {and_list(block.shared_by)}")
    return lines


def _title(block: Block) -> str:
    return block.name + (f" ({block.repeats} alike)" if block.repeats > 1 else "")


def _summary(graph, blocks) -> tuple[list, list]:
    """The text form: its heading, and one row per box."""
    outputs = ", ".join(f"{name} {_shape(t)}" for name, t, _ in graph.outputs)
    holding = sum(b.holding for b in blocks)
    lines = [f"overview of {outputs}: {len(graph.nodes)} nodes in {len(blocks)} "
             f"{'box' if len(blocks) == 1 else 'boxes'}, {holding} that saved tensors, "
             f"{sum(b.freed for b in blocks)} that freed them, "
             f"{_size(sum(b.saved_bytes for b in blocks))} kept alive"]
    width = max(len(_title(b)) for b in blocks)
    rows = []
    for block in blocks:
        what = "; ".join(_describe(block))
        if block.outputs:
            what += " -> " + ", ".join(block.outputs)
        rows.append(f"  {_title(block).ljust(width)}  {what}")
    return lines, rows


def _description(graph, blocks) -> str:
    """The alt text of the overview's picture: its outputs and boxes, what the boxes' nodes
    saved and freed, and which boxes several outputs' backward passes run through."""
    outputs = and_list([name for name, _, _ in graph.outputs])
    titles = ([_title(block) for block in blocks] if len(blocks) <= NAMED_UP_TO
              else [f"{len(blocks)} of them"])
    sentences = [f"Overview of {outputs}: {len(graph.nodes)} nodes in "
                 f"{'1 box' if len(blocks) == 1 else f'{len(blocks)} boxes'}, one per block "
                 f"of the model ({and_list(titles)})."]
    holding, freed = sum(b.holding for b in blocks), sum(b.freed for b in blocks)
    if holding:
        sentences.append(
            f"{holding} node{'s' * (holding != 1)} saved tensors, keeping "
            f"{_size(sum(b.saved_bytes for b in blocks))} alive; "
            + ("none freed yet." if not freed else f"{freed} {'has' if freed == 1 else 'have'}"
               " freed them."))
    else:
        sentences.append("No node saved tensors.")
    shared = [block for block in blocks if block.shared]
    if shared:
        sharing = and_list(sorted({name for b in shared for name in b.shared_by}))
        where = ([_title(block) for block in shared] if len(shared) <= NAMED_UP_TO
                 else [f"{len(shared)} boxes"])
        sentences.append(f"The backward passes of {sharing} share nodes in {and_list(where)}.")
    return " ".join(sentences)


def _dot(graph, blocks, block_of, box_of) -> graphviz.Digraph:
    # No `size`: the picture is drawn at its natural scale, text readable as in draw.
    dot = graphviz.Digraph(node_attr=NODE_STYLE, graph_attr=dict(ranksep="0.25"))
    used = set()
    for k, block in enumerate(blocks):
        if block.nodes == 0 and block.params == 0:
            style, key = LEAF, "leaf"
        else:
            style, key = (BACKWARD_FREED, "freed") if block.freed else (BACKWARD, "backward")
            if block.shared:
                used.add("shared")
                style = {**style, **SHARED}
        used.add(key)
        label = "\n".join([_title(block)] + _describe(block))
        dot.node(f"b{k}", label, **style)
    # An edge wherever a node feeds a node of another block; between two blocks of one
    # box it is a loop: the repeated blocks feed one another.
    edges = sorted({(box_of[i], box_of[node.index])
                    for node in graph.nodes for i in node.inputs
                    if block_of[i] != block_of[node.index]})
    for source, target in edges:
        dot.edge(f"b{source}", f"b{target}")
    for position, (name, tensor, index) in enumerate(graph.outputs):
        used.add("output")
        dot.node(f"out{position}", f"{name}\n{_shape(tensor)}", **OUTPUT)
        dot.edge(f"b{box_of[index]}", f"out{position}")
    add_legend(dot, LEGEND, used)
    return dot


class Overview(GraphView):
    """The overview of a graph: SVG in Jupyter, a table of its boxes as text.

    Like draw's GraphView: `.source` (the same DOT in every run), `.summary`,
    `.description` (the picture's alt text), `repr()`
    (the summary, cut after 30 boxes when there are more than 40), `.svg()` and
    `.save(path)`; `.blocks` holds the boxes' counts, and `.depth` the depth drawn
    (None: the default view).
    """

    see_all = "print(overview(...).summary)"
    rows_are = "boxes"

    def __init__(self, graph, blocks, block_of, box_of, depth=None):
        self.blocks = blocks
        self.depth = depth
        heading, rows = _summary(graph, blocks)
        if any(block.compiled for block in blocks):
            heading.append(COMPILED_NOTE)
        self._lines = heading + rows
        self._heading = len(heading)  # lines before the boxes' rows
        self.description = _description(graph, blocks)
        self.dot = _dot(graph, blocks, block_of, box_of)

    def add_note(self, note: str) -> None:
        """A line under the heading, e.g. why this depth was drawn."""
        self._lines.insert(self._heading, note)
        self._heading += 1


def _view(graph, params, depth, model_name) -> Overview:
    """The overview of `graph` with blocks cut at `depth` (None: the default view)."""
    param_name = {id(tensor): _uncompiled(name) for name, tensor in params.items()}
    block_of, members = _blocks(graph, param_name, depth, _compiled_modules(params))
    box_names = _boxes(members)
    box_of_block = {name: k for k, names in enumerate(box_names) for name in names}
    box_of = {index: box_of_block[name] for index, name in block_of.items()}
    blocks = _count(graph, box_names, members, box_of, storage_keys(params.values()),
                    model_name)
    return Overview(graph, blocks, block_of, box_of, depth)


def _picture_size(view) -> tuple[float, float] | None:
    """(width, height) in points of the picture Graphviz draws; None without Graphviz."""
    try:
        svg = view.svg()
    except (graphviz.ExecutableNotFound, graphviz.CalledProcessError):
        return None
    match = re.search(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    return (float(match[1]), float(match[2])) if match else None


def _fits(size) -> bool:
    return size[0] <= SCREEN_PT[0] and size[1] <= SCREEN_PT[1]


def _points(size) -> str:
    return f"{size[0]:.0f}x{size[1]:.0f} pt"


def _fitted(graph, params, default, model_name) -> Overview:
    """The default view if its picture fits the screen; else the largest depth with fewer
    boxes whose picture fits (or the coarsest, if none does), with a note saying so."""
    size = _picture_size(default)
    if size is None or _fits(size):
        return default
    deepest = max((len(name.split(".")) for name in _block_names(default)), default=1)
    coarser = (_view(graph, params, depth, model_name) for depth in range(deepest - 1, 0, -1))
    chosen = chosen_size = None
    for view in coarser:
        if len(view.blocks) >= len(default.blocks):
            continue  # no coarser than the default view
        chosen, chosen_size = view, _picture_size(view)
        if chosen_size is None or _fits(chosen_size):
            break
    if chosen is None or chosen_size is None:  # nothing coarser, or nothing measured
        return default
    screen = f"a 1920x1080 screen ({_points(SCREEN_PT)})"
    fits = (f"so that the picture fits {screen}" if _fits(chosen_size)
            else f"the coarsest view, still {_points(chosen_size)}, more than {screen}")
    chosen.add_note(
        f"note: drawn at depth={chosen.depth}, {fits}: the default view, "
        f"{len(default.blocks)} boxes, would be {_points(size)}. "
        "overview(..., fit=False) draws the default view.")
    return chosen


def _block_names(view) -> list:
    """The names of the view's boxes, without what a title adds (" (compiled)"), and
    without the names in brackets that stand for no module ("(top level)")."""
    return [block.name.split(" (")[0] for block in view.blocks
            if not block.name.startswith("(")]


def _model_name(params) -> str | None:
    """The model's class name when params is the model (under torch.compile's wrapper)."""
    if isinstance(params, torch.nn.Module):
        return type(getattr(params, COMPILED_WRAPPER, params)).__name__
    return None


def overview(*outputs: torch.Tensor, params: Names | None = None,
             depth: int | None = None, fit: bool = True) -> Overview:
    """Draw a big autograd graph as one box per block of the model.

    params: the model (an nn.Module), or its parameters' names and tensors,
        dict(model.named_parameters()): the blocks come from these names (see the
        module's docstring for the rules).
    depth: how many parts of a module's dotted name make a block (2 gives
        "encoder.layers"); by default a name is cut after its first number.
    fit: with the default depth, when the picture would be larger than a 1920x1080
        screen (1440x810 pt), draw the largest depth whose picture fits instead, and
        say so in the text form. fit=False keeps the default view.

    Each box gives its backward nodes, parameters, the nodes holding saved tensors
    and the bytes those keep alive (each storage counted once in the whole graph, so
    the boxes add up to `retained_bytes(*outputs, params=params)`), how many were freed
    by backward, and how many of its nodes the backward passes of several outputs run
    (and of which). A box of several alike blocks gives totals over them ("in all").
    Saved tensors in another state (packed by a saved-tensor hook, modified in place,
    unknown) get a line of their own; nothing is unpacked, and packed ones count as
    `retained_bytes` counts them. The parameters' own storages never count.

    Below, six alike Linear layers: the first differs (its input needs no gradient),
    the last also computes the loss. The summary's lines are wrapped here (doctest
    compares them with whitespace normalized).

    Example::

        >>> import torch
        >>> from autograd_lens import overview
        >>> _ = torch.manual_seed(0)
        >>> model = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(6)])
        >>> loss = model(torch.randn(4, 8)).pow(2).mean()
        >>> overview(loss, params=model)
        overview of output 0 (): 26 nodes in 3 boxes, 7 that saved tensors, 0 that freed them,
            896 B kept alive
          0              2 nodes, 2 params, 1 that saved tensors;
                         kept alive: 128 B, most by AddmmBackward0
          1-4 (4 alike)  in all: 8 nodes, 8 params, 4 that saved tensors;
                         kept alive: 512 B in all, most by AddmmBackward0
          5              4 nodes, 2 params, 2 that saved tensors;
                         kept alive: 256 B, most by PowBackward0 -> output 0
    """
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                              or depth < 1):
        raise ValueError(f"depth must be a whole number of 1 or more (how many parts of a "
                         f"module's name make a block, e.g. 2 for 'encoder.layers'), "
                         f"or None; got {depth!r}")
    if not isinstance(fit, bool):
        raise TypeError(f"fit must be True (draw a coarser view when the default one would "
                        f"not fit a screen) or False; got {fit!r}")
    model_name = _model_name(params)
    params = check_names(params)
    if not params:
        raise ValueError("overview groups nodes by the modules their parameters come from: "
                         "pass params=dict(model.named_parameters()), or the model itself "
                         "(params=model), of a model that has parameters")
    graph = walk(outputs, params)
    view = _view(graph, params, depth, model_name)
    if depth is None and fit:
        view = _fitted(graph, params, view, model_name)
    return view
