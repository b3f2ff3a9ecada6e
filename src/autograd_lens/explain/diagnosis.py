"""The note that `explain` adds to autograd's two errors: what was lost, where it was made,
who lost it, and the likely pattern with its usual fix."""
import linecache
from collections import deque
import math
import os
import re

from ..graph import FREED, MODIFIED, _read_saved
from .recorder import record_of

FREED_TEXT = "Trying to backward through the graph a second time"
VERSION_TEXT = "modified by an inplace operation"
MARK = "_autograd_lens_explained"  # set on an error once it has its note (nested explain)

# The likely patterns: what a practitioner would call it, the usual fix, where it is taught.
BEFORE_THE_LOOP = (
    "a tensor computed once (before the loop, or cached on first use) and reused in every "
    "iteration: the first backward freed its graph",
    "compute it inside the loop; or, if no gradient should flow into it, compute it once "
    "under torch.no_grad() (or .detach() it)",
    "lesson 07")
CARRIED = (
    "a tensor carried over from the previous iteration (hidden state, a cache, a running "
    "estimate): this iteration's graph reaches into the last one's, already freed",
    "cut the link at the start of each iteration with detach(), as in "
    "hidden = hidden.detach()",
    "lesson 06, section 2")
RUNNING_TOTAL = (
    "a running total that is backpropagated every step (total = total + loss): it holds "
    "every earlier step's graph, freed by earlier backward calls",
    "backpropagate this step's loss only, and add loss.item() (or loss.detach()) to the "
    "total you log",
    "lesson 05, section 5")
TWO_LOSSES = (
    "two losses over a shared part of the graph, with a backward call each: the first call "
    "freed the shared part",
    "add the losses and call backward once, (loss1 + loss2).backward(); retain_graph=True on "
    "the first call also works, and keeps the shared part alive until the second",
    "lesson 04")
GAN = (
    "two models updated in turn, the second loss going back through the first loss's graph "
    "(a GAN step without detach(): the discriminator's loss used the generator's output)",
    "detach where the first update must not reach: D(fake.detach()) in the discriminator's "
    "loss; the generator's loss then builds its own pass through D",
    "lesson 06, section 1")
OPTIMIZER_STEP = (
    "optimizer.step() between the forward pass and this backward call: it changed the "
    "parameters in place, and the graph had saved them",
    "call every backward first (or add the losses and call backward once), then "
    "optimizer.step()",
    "lesson 04, section 7")
IN_PLACE = (
    "an in-place operation in your code changed a tensor that the graph had saved for "
    "backward",
    "use the out-of-place form (x = x * 2, not x.mul_(2) or x *= 2)",
    "lesson 07")


def where(site) -> str:
    """'train.py:14' (relative to the working folder), or 'cell In[5], line 3' in IPython."""
    if site is None:
        return "before explain() started"
    cell = _ipython_cell(site.filename)
    if cell is not None:
        return f"cell In[{cell}], line {site.lineno}"
    path = site.filename
    try:
        relative = os.path.relpath(path)
        path = relative if not relative.startswith("..") else path
    except ValueError:  # another drive, on Windows
        pass
    return f"{path}:{site.lineno}"


def _ipython_cell(filename):
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    names = getattr(getattr(shell, "compile", None), "_filename_map", {}) if shell else {}
    return names.get(filename)


def _code(site) -> str:
    return linecache.getline(site.filename, site.lineno).strip() if site else ""


def _site_lines(site, indent="      "):
    code = _code(site)
    return [f"{indent}{code}"] if code else []


def _call_words(call) -> str:
    retain = "with retain_graph=True" if call.retain_graph else "without retain_graph"
    return f"{call.function} call #{call.number}, at {where(call.site)}, {retain}"


def _lost(node):
    return {lost for _, _, lost in _read_saved(node) if lost}


def _saved_names(node):
    return ", ".join(attribute for attribute, _, _ in _read_saved(node)) or "nothing"


def _walk(roots, stop):
    """Every node reachable from `roots`, not going past `stop` nodes, each with the node
    it was first reached from (None for a root): a shortest path back to the roots."""
    parent = {root: None for root in roots if root is not None}
    queue = deque(parent)
    while queue:
        node = queue.popleft()
        if stop(node):
            continue
        for child, _ in node.next_functions:
            if child is not None and child not in parent:
                parent[child] = node
                queue.append(child)
    return parent


def _failing_node(roots, lost_here):
    """The node the engine stopped at: among the nodes first met from the roots for which
    `lost_here(node)` holds, the one made last (the engine runs later nodes first)."""
    parent = _walk(roots, lost_here)
    lost = [node for node in parent if lost_here(node)]
    node = max(lost, key=lambda n: n._sequence_nr(), default=None)
    return node, lost, parent


def _freed_earlier(node):
    """Freed before the failing call: the failing call itself frees the nodes it runs
    before it stops, so only a node that an earlier call freed (or that was freed before
    explain started) counts."""
    record = record_of(node)
    earlier = record is None or record.freed_by is not None or record.created_at is None
    return earlier and FREED in _lost(node)


def _modified(node):
    return MODIFIED in _lost(node)


def add_diagnosis(error, recorder, call, roots):
    if getattr(error, MARK, False):
        return
    if FREED_TEXT in str(error):
        lines = _freed_note(recorder, call, roots)
    elif VERSION_TEXT in str(error):
        lines = _version_note(recorder, call, roots, _shape_in_message(error))
    else:
        return
    if lines:
        add_note(error, "\n".join(lines))
        setattr(error, MARK, True)


def add_note(error, text):
    if hasattr(error, "add_note"):  # Python 3.11 and newer (PEP 678)
        error.add_note(text)
    else:  # 3.10: kept where 3.11 keeps it; the runner prints it
        error.__notes__ = [*getattr(error, "__notes__", []), text]


def _header(call):
    return [f"autograd_lens.explain: {_call_words(call)}, failed.", *_site_lines(call.site)]


def _pattern_lines(pattern):
    cause, fix, lesson = pattern
    return [f"  Likely cause: {cause}.", f"  Usual fix: {fix} (see {lesson})."]


def _freed_note(recorder, call, roots):
    node, lost, parent = _failing_node(roots, _freed_earlier)
    if node is None:
        return None
    record = record_of(node)
    lines = _header(call)
    lines.append(f"  It needs what {node.name()} saved for backward ({_saved_names(node)}), "
                 "and the node no longer holds it: an earlier backward call freed it.")
    if record is not None and record.created_at is not None:
        lines += [f"  {node.name()} was made at {where(record.created_at)}:",
                  *_site_lines(record.created_at)]
    else:
        lines.append(f"  {node.name()} was made before explain() started.")
    freer = record.freed_by if record is not None else None
    if freer is None:
        lines.append("  The backward call that freed it ran before explain() started.")
        return lines
    lines += [f"  It was freed by {_call_words(freer)}:", *_site_lines(freer.site)]
    if len(lost) > 1:
        lines.append(f"  ({len(lost) - 1} more node(s) on this path were freed too.)")
    return lines + _pattern_lines(_freed_pattern(call, node, record, freer, parent))


def _freed_pattern(call, node, record, freer, parent):
    if any(freer.number in record_of(n).root_of for n in parent if record_of(n)):
        return RUNNING_TOTAL  # this graph reaches back to where the earlier call started
    if freer.site == call.site:  # the same backward line again: a loop
        # Carried state (hidden = cell(x, hidden)) reaches the old node through a node that
        # the same line made in this iteration; a cached or precomputed tensor does not.
        path = []
        while parent[node] is not None:
            node = parent[node]
            path.append(record_of(node))
        if any(r is not None and r.created_at == record.created_at
               and r.calls_before >= freer.number for r in path):
            return CARRIED
        return BEFORE_THE_LOOP
    if call.steps_before > freer.steps_before:
        return GAN
    return TWO_LOSSES


def _changed_tensors(recorder, record, numel):
    """The tensors of the node's op that changed in place since, with where they changed;
    those with `numel` elements (the saved tensor's, from autograd's message) first."""
    found = []
    for ref, version in record.tensors if record is not None else []:
        tensor = ref()
        change = recorder.changes.get(id(tensor)) if tensor is not None else None
        if change and change[0]() is tensor and tensor._version != version:
            found.append((tensor, change[1]))
    return sorted(found, key=lambda pair: pair[0].numel() != numel)


def _shape_in_message(error):
    """autograd names the changed tensor as '[torch.FloatTensor [8, 2]]': its shape."""
    match = re.search(r"\[torch\.\w+ \[([\d, ]*)\]\]", str(error))
    return tuple(int(n) for n in match.group(1).split(",") if n.strip()) if match else None


def _version_note(recorder, call, roots, saved_shape):
    node, _, _ = _failing_node(roots, _modified)
    if node is None:
        return None
    record = record_of(node)
    lines = _header(call)
    modified = [a for a, _, lost in _read_saved(node) if lost == MODIFIED]
    lines.append(f"  {node.name()} saved {', '.join(modified)}, which was changed in place "
                 "after it was saved.")
    if record is not None and record.created_at is not None:
        lines += [f"  {node.name()} was made at {where(record.created_at)}:",
                  *_site_lines(record.created_at)]
    numel = math.prod(saved_shape) if saved_shape is not None else None
    changes = _changed_tensors(recorder, record, numel)
    if not changes:
        return lines
    tensor, change = changes[0]
    what = "an optimizer step" if change.by_optimizer else "an in-place operation"
    if saved_shape is None or tuple(tensor.shape) == saved_shape:
        whose = f"That tensor, of shape {tuple(tensor.shape)},"
    else:  # e.g. a Linear layer saves weight.T, a view of the (out, in) weight
        whose = (f"What it saved (shape {saved_shape}) was made from a tensor of shape "
                 f"{tuple(tensor.shape)}, which")
    lines += [f"  {whose} was changed by {what} at {where(change.site)}:",
              *_site_lines(change.site)]
    return lines + _pattern_lines(OPTIMIZER_STEP if change.by_optimizer else IN_PLACE)
