"""What a drawn graph shows, in one to three plain sentences: the picture's alt text.

A reader who cannot see the picture (a screen reader, a page whose images did not load)
gets what a glance at it gives: which outputs, how many nodes, which nodes saved tensors
and which have freed them, what the outputs' backward passes share. The words are the
summary's. `draw` and `overview` put it in the SVG (`aria-label`) and in the metadata
that Jupyter stores with the picture (`alt`), where the site and the decks read it.

Example::

    >>> import torch
    >>> from autograd_lens import draw
    >>> a = torch.ones(3, requires_grad=True)
    >>> print(draw(a.exp().sum(), params={"a": a}).description)
    Autograd graph of output 0: 3 nodes, 1 of them a leaf. ExpBackward0 saved tensors, none freed yet.
"""
import html
import re
from collections import Counter

from .graph import FREED, UNKNOWN

NAMED_UP_TO = 6  # kinds of node named one by one; past that, only counted
SVG_ROOT = re.compile(r"<svg\b[^>]*?(?=/?>)")


def and_list(names) -> str:
    """"a", "a and b", "a, b and c"."""
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def node_kinds(nodes) -> str:
    """The nodes by kind, in order: "MulBackward0 and 3 AddmmBackward0" (draw numbers a
    repeated kind "AddmmBackward0 #2"); past NAMED_UP_TO kinds, "12 nodes"."""
    kinds = Counter(node.name.split(" #")[0] for node in nodes)
    if len(kinds) > NAMED_UP_TO:
        return f"{len(nodes)} nodes"
    return and_list([kind if count == 1 else f"{count} {kind}" for kind, count in kinds.items()])


def _has(count: int) -> str:
    return "has" if count == 1 else "have"


def describe_graph(graph) -> str:
    """The alt text of draw's picture of `graph`."""
    leaves = sum(node.is_leaf for node in graph.nodes)
    outputs = and_list([name for name, _, _ in graph.outputs])
    sentences = [f"Autograd graph of {outputs}: {len(graph.nodes)} nodes"
                 + (f", {leaves} of them {'a leaf' if leaves == 1 else 'leaves'}." if leaves
                    else ".")]
    holding = [node for node in graph.nodes if node.saved]
    freed = [node for node in holding if node.freed]
    if not holding:
        sentences.append("No node saved tensors.")
    elif not freed:
        sentences.append(f"{node_kinds(holding)} saved tensors, none freed yet.")
    elif len(freed) == len(holding):
        sentences.append(f"{node_kinds(holding)} saved tensors, and backward has freed "
                         f"{'them' if len(holding) == 1 else 'them all'}.")
    else:
        sentences.append(f"{node_kinds(holding)} saved tensors; {node_kinds(freed)} "
                         f"{_has(len(freed))} freed them.")
    other_states = Counter(saved.lost for node in graph.nodes for saved in node.saved
                           if saved.lost not in (None, FREED))
    for state, count in other_states.items():
        words = "not shown by this torch" if state == UNKNOWN else state
        sentences.append(f"{count} saved tensor{'s' * (count != 1)} {words}.")
    shared = {}  # the outputs whose backward passes run a node -> those nodes
    for node in graph.nodes:
        if not node.is_leaf and len(node.reached_by) > 1:
            shared.setdefault(tuple(node.reached_by), []).append(node)
    for outputs_sharing, nodes in shared.items():
        sentences.append(f"The backward passes of {and_list(outputs_sharing)} share "
                         f"{node_kinds(nodes)}.")
    return " ".join(sentences)


def labelled_svg(svg: str, description: str) -> str:
    """The SVG with role="img" and the description as its aria-label, on its root element."""
    label = html.escape(description, quote=True)
    return SVG_ROOT.sub(lambda root: f'{root[0]} role="img" aria-label="{label}"', svg, count=1)
