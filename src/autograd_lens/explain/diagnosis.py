"""The note that `explain` adds to autograd's two errors: what was lost, where it was made
(and where the model was called from), who lost it, and the likely pattern with a fix that
is safe for what it sees."""
import linecache
import math
import os
import re
from collections import deque
from dataclasses import dataclass

from ..graph import FREED, MODIFIED, _read_saved
from . import advice
from .recorder import nodes_from, record_of

FREED_TEXT = "Trying to backward through the graph a second time"
VERSION_TEXT = "modified by an inplace operation"
MARK = "_autograd_lens_explained"  # set on an error once it has its note (nested explain)


@dataclass(frozen=True)
class Pattern:
    """A cause as a practitioner would name it, the fix, and where the series teaches it."""
    cause: str
    fix: str
    lesson: str


BEFORE_THE_LOOP = Pattern(
    "a tensor computed once (before the loop, or cached on a first call) and reused in "
    "every iteration: the first backward freed what its graph saved",
    "recompute it inside the loop, so that each backward has its own graph; only if no "
    "gradient should flow into it (a fixed target), compute it once under torch.no_grad() "
    "or with .detach()",
    "lesson 07, section 1")
CARRIED = Pattern(
    "a tensor that a line run in every iteration keeps for the next (hidden state, a running "
    "estimate, a cache, a queue, an anchor): this iteration's graph reaches into an earlier "
    "one's, whose saved tensors were freed",
    "detach what is kept for the next iteration (hidden = hidden.detach()), or update it "
    "under torch.no_grad() if no gradient should flow through it; clear at the end of each "
    "iteration what the next should not read (a cache of this step's features)",
    "lesson 06, section 2")
RUNNING_TOTAL = Pattern(
    "a running total backpropagated every step (total = total + loss): it holds every "
    "earlier step's graph, whose saved tensors earlier backward calls freed",
    "backpropagate this step's loss only, and add loss.item() (or loss.detach()) to the "
    "total you log",
    "lesson 05, section 4")
STALE_LOSS = Pattern(
    "a loss from an earlier step, kept (in a list, a dict, an attribute) and backpropagated "
    "again: what its graph saved was freed when it was first backpropagated",
    "backpropagate each loss once, in the step that made it; keep loss.item() (or "
    "loss.detach()) for what you log or average",
    "lesson 05, section 4")
SAME_LOSS_TWICE = Pattern(
    "the same loss backpropagated twice: the first call freed what its graph saved",
    "call backward() once per loss; a second call adds the same gradient again into .grad, "
    "so if that is really wanted, keep the graph for it on the first call (retain_graph)",
    "lesson 02")
TWO_LOSSES = Pattern(
    "two losses over a shared part of the graph, with a backward call each: the first call "
    "freed what the shared part saved",
    "add the losses and call backward once, (loss1 + loss2).backward(); retain_graph=True on "
    "the first call also works, and keeps the shared part alive until the second",
    "lesson 04, section 5")
GRAD_PENALTY = Pattern(
    "a gradient taken with torch.autograd.grad without create_graph=True (a gradient "
    "penalty, say), then part of a loss that is backpropagated: autograd.grad freed what "
    "the graph saved, and made its result without a graph",
    "pass create_graph=True to torch.autograd.grad, so that the penalty's own gradient "
    "reaches the parameters (it keeps the graph too); keeping the graph alone (retain_graph) "
    "would run but train nothing through the penalty",
    "lesson 06, section 3")
GAN = Pattern(
    "two models updated in turn (a GAN's discriminator and generator, a critic and an "
    "actor), the second loss going back through the part of the graph whose saved tensors the "
    "first loss's backward freed: the first loss used the other model's output without detach()",
    "detach the other model's output where the first loss reads it, as in D(fake.detach()) "
    "for a GAN's discriminator; the second loss then makes its own forward pass through "
    "what it needs. Do not move the first optimizer's step after the second backward: the "
    "second loss would add its gradient into the first model's .grad",
    "lesson 06, section 1")
STEP_BETWEEN_BACKWARDS = Pattern(
    "optimizer.step() between two backward calls through the same parameters: it changed "
    "them in place, and the graph had saved them",
    "call every backward first, with no zero_grad() between them (or add the losses and "
    "call backward once), then optimizer.step()",
    "lesson 04, section 7")
TWO_MODELS_STEP = Pattern(
    "optimizer.step() for one model between two backward calls, the second loss going "
    "through that model's parameters (saved by the graph before the step) to train another",
    "compute the second loss's forward pass again after the step, so that it saves the new "
    "weights; or update in the other order, the second loss's backward and step before the "
    "first model's zero_grad(), backward and step, so that the gradient it leaves in the "
    "first model's .grad is cleared before that is used",
    "lesson 06, section 4")
LBFGS_CLOSURE = Pattern(
    "an optimizer that calls its closure several times (L-BFGS): the forward pass is outside "
    "the closure, so the closure's second backward runs through a graph whose saved tensors the first freed",
    "move the forward pass into the closure, so that each call builds its own graph",
    "lesson 07")
IN_PLACE = Pattern(
    "an in-place operation in your code changed a tensor that the graph had saved for "
    "backward",
    "use the out-of-place form (x = x * 2, not x.mul_(2) or x *= 2)",
    "lesson 07, section 5")
IN_PLACE_IN_FORWARD = Pattern(
    "an in-place operation inside a model's forward (an inplace ReLU or dropout, +=, a slice "
    "assignment, masked_fill_) changed a tensor that an earlier op had saved for backward",
    "use the out-of-place form in forward: nn.ReLU() (not inplace=True), out = out + x "
    "(not out += x), x = x.masked_fill(mask, 0), or a clone before a slice assignment",
    "lesson 07, section 5")


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


def _made_at(what, site, callers):
    """'X was made at model.py:12, in forward, called from train.py:30:' and the code."""
    if site is None:
        return [f"  {what} was made before explain() started."]
    inside = f", in {site.function}" if callers and site.function else ""
    called = "".join(f", {'called from' if k == 0 else 'from'} {where(c)}"
                     for k, c in enumerate(callers))
    return ([f"  {what} was made at {where(site)}{inside}{called}:", *_site_lines(site)]
            + [line for caller in callers for line in _site_lines(caller)])


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
    """Freed before the failing call: the failing call itself frees the saved tensors of
    the nodes it runs before it stops, so only a node whose saved tensors an earlier call
    freed (or that were freed before explain started) counts."""
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
        lines = _version_note(recorder, call, roots, str(error))
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
    """The failing call; whether it kept its graph matters only if it did."""
    words = _call_words(call) if call.retain_graph else _call_words(call).rsplit(", ", 1)[0]
    return [f"autograd_lens.explain: {words}, failed.", *_site_lines(call.site)]


def _pattern_lines(pattern, here="", fix=None):
    """The cause, and the fix: the usual one (or the one safe for what was seen), then,
    when the lines say it, in the program's own words."""
    here = f" Here: {here}." if here else ""
    return [f"  Likely cause: {pattern.cause}.",
            f"  Usual fix: {fix or pattern.fix}.{here} (See {pattern.lesson}.)"]


def _freed_note(recorder, call, roots):
    node, lost, parent = _failing_node(roots, _freed_earlier)
    if node is None:
        return None
    record = record_of(node)
    lines = _header(call)
    lines.append(f"  It needs what {node.name()} saved for backward ({_saved_names(node)}), "
                 "and the node no longer holds it: an earlier backward call freed it.")
    lines += _made_at(node.name(), record.created_at if record else None,
                      record.called_from if record else ())
    freer = record.freed_by if record is not None else None
    if freer is None:
        lines.append("  The backward call that freed it ran before explain() started.")
        return lines
    lines += [f"  It was freed by {_call_words(freer)}:", *_site_lines(freer.site)]
    if len(lost) > 1:
        lines.append(f"  ({len(lost) - 1} more node(s) on this path had theirs freed too.)")
    return lines + _pattern_lines(*_freed_pattern(recorder, call, node, record, freer, parent))


def _path(node, parent):
    """The nodes from `node` back up to the failing call's root, `node` first."""
    path = [node]
    while parent[path[-1]] is not None:
        path.append(parent[path[-1]])
    return path


def _stepped_between(recorder, first, second):
    """ids of the parameters that optimizer steps updated between two calls."""
    return set().union(*recorder.stepped[first.steps_before:second.steps_before])


def _leaves_reached(roots):
    """ids of the tensors whose .grad the backward from `roots` would fill."""
    return {id(node.variable) for node in nodes_from(roots)
            if hasattr(node, "variable") and node.name().endswith("AccumulateGrad")}


def _entries(parent, freer):
    """Where this iteration's graph enters an earlier one's: (the record of a node made
    before the freeing call, the records of the nodes made after it that read it)."""
    found = {}
    for node in parent:
        reader = record_of(node)
        if reader is None or reader.calls_before < freer.number:
            continue
        for child, _ in node.next_functions:
            record = record_of(child)
            if (record is not None and record.created_at is not None
                    and record.calls_before < freer.number):
                found.setdefault(record.created_at, (record, []))[1].append(reader)
    return [found[site] for site in sorted(found, key=lambda s: (s.filename, s.lineno))]


def _same_function(a, b) -> bool:
    return (a.created_at is not None and b.created_at is not None
            and (a.created_at.filename, a.created_at.function)
            == (b.created_at.filename, b.created_at.function))


def _carried(recorder, entries, freer):
    """The entries that a line running in every iteration keeps for the next: the line
    that made it ran again since (hidden = cell(x, hidden)), or the code that made it runs
    again and a node made there now reads it (memory = memory + ..., after a first
    iteration's memory = ...). Not a tensor made once, before the loop or cached on a first
    call."""
    def again(site):
        return recorder.last_made.get(site, 0) >= freer.number

    return [(record, readers) for record, readers in entries
            if again(record.created_at) or _reassigned_since(recorder, record, freer)
            or (again(_outer_line(record)) and any(_same_function(record, r) for r in readers))]


def _reassigned_since(recorder, record, freer):
    """Another line of the function that made it assigns the same name and has run since
    (self.memory = matmul(...) on a first call, self.memory = self.memory + ... after): a
    state updated in every iteration, not a cache made once."""
    made = record.created_at
    names = set(advice.assigned_names(_code(made))) if made is not None else set()
    return bool(names) and any(
        site != made and number >= freer.number
        and (site.filename, site.function) == (made.filename, made.function)
        and names & set(advice.assigned_names(_code(site)))
        for site, number in recorder.last_made.items())


def _running_update(record, readers):
    """The reader that folds the old tensor into a running estimate on another line
    (center = 0.9 * center + 0.1 * out.mean(0)): (its record, the name it updates), or None."""
    for reader in readers:
        site = _outer_line(reader)
        if site is None or site == _outer_line(record):
            continue
        code = _code(site)
        value = code.split("=", 1)[-1]
        kept = [name for name in advice.carried_names(code)
                if re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", value)]
        if kept and "=" in code:
            return site, kept[0]
    return None


def _carried_here(entries):
    updates = [(record, update) for record, readers in entries
               if (update := _running_update(record, readers))]
    if updates:
        record, (site, name) = updates[0]
        made = advice.assigned_names(advice.code_of(_code(_outer_line(record))))
        made = made[0] if len(made) == 1 else "a tensor"
        return (f"{where(site)} folds {made}, from an earlier iteration, into {name}, which the "
                f"next iteration reads: start each iteration with {name} = {name}.detach(), "
                f"or update {name} under torch.no_grad() if no gradient is to flow through it")
    records = [record for record, _ in entries]
    lines = " and ".join(dict.fromkeys(where(record.created_at) for record in records))
    names = list(dict.fromkeys(name for record in records
                               for name in advice.carried_names(_code(record.created_at))))
    what = " and ".join(names) or "a tensor"
    kept = "and they were" if len(names) > 1 else "and it was"
    detached = " and ".join(f"{name}.detach()" for name in names) or "it detached"
    return (f"{lines} made {what} in an earlier iteration, {kept} kept for a later one: "
            f"keep {detached} instead")


def _outer_line(record):
    """The program's line outside any model that led to a node: its last caller, or the
    line itself."""
    return record.called_from[-1] if record.called_from else record.created_at


def _freed_pattern(recorder, call, node, record, freer, parent):
    """(pattern, the fix in the program's own words or "")."""
    roots = [root for root in parent if parent[root] is None]
    root_records = [record_of(root) for root in roots]
    loss = advice.loss_name(_code(call.site))
    if freer.function == "torch.autograd.grad()" and not freer.create_graph \
            and call.function == "backward()":
        return GRAD_PENALTY, f"torch.autograd.grad(..., create_graph=True) at {where(freer.site)}"
    if call.in_optimizer_step and freer.same_line(call):
        made = _code(_outer_line(record))
        return LBFGS_CLOSURE, (f"move {advice.code_of(made)} into the closure" if made else "")
    if any(r is not None and freer.number in r.root_of for r in root_records):
        if freer.steps_before < call.steps_before or freer.same_line(call):
            return STALE_LOSS, ""  # this very loss was backpropagated in an earlier step
        return SAME_LOSS_TWICE, ""
    if any(freer.number in record_of(n).root_of for n in parent if record_of(n)):
        here = (f"if {loss} is the loss itself, not a log, make it afresh in each step "
                f"({loss} = 0, then add this step's terms)") if loss else ""
        return RUNNING_TOTAL, here  # this graph reaches back to where the earlier call started
    if freer.same_line(call):  # the same backward line again: a loop
        carried = _carried(recorder, _entries(parent, freer), freer)
        if carried:
            return CARRIED, _carried_here(carried)
        return _before_the_loop(recorder, freer, call, node, record)
    if call.steps_before > freer.steps_before:
        stepped = _stepped_between(recorder, freer, call)
        if _leaves_reached(roots) - stepped:  # this loss trains what that step did not update
            return GAN, _two_models_here(freer, call, node, record, stepped, loss)
    return TWO_LOSSES, ""


def _two_models_here(freer, call, node, record, stepped, loss):
    """Which side to fix: if the first loss needed the freed part (it leads to the
    parameters its step updated: G's loss through D), the second loss must make its own
    forward pass; if not (D's loss through G's output), the first loss should detach it."""
    made = advice.code_of(_code(_outer_line(record)))
    names = advice.assigned_names(made)
    if _leaves_reached([node]) & stepped:
        what = f"{', '.join(names)} = ... again" if names else "its forward pass again"
        return (f"compute {what} for {loss} after the step, instead of reusing the graph that "
                f"{where(freer.site)} ran through") if loss else ""
    if len(names) == 1:
        return f"{names[0]}.detach() where the loss of {where(freer.site)} reads {names[0]}"
    return ""


def _before_the_loop(recorder, freer, call, node, record):
    """BEFORE_THE_LOOP, with the fix that is safe here: detaching is right only if nothing
    that made the tensor is to learn from it (no step here updates it, and the loop steps
    an optimizer at all); else the tensor must be made again in each iteration."""
    outer = _outer_line(record)
    made = advice.code_of(_code(outer))
    again = recorder.last_made.get(outer, 0) >= freer.number  # that line ran again since
    where_made = (f"{made} made it in an earlier iteration and kept it: make it again in "
                  f"each iteration, not once" if again else f"move {made} into the loop")
    stepped = _stepped_between(recorder, freer, call)
    if stepped and not (_leaves_reached([node]) & stepped):
        names = advice.assigned_names(made)
        what = names[0] if len(names) == 1 else "it"
        return BEFORE_THE_LOOP, (f"{made} runs once, and no optimizer step here trains what "
                                 f"made it, so {what}.detach() (or computing it under "
                                 f"torch.no_grad()) is safe") if made else ""
    fix = ("recompute it inside the loop, so that each backward has its own graph (detaching "
           "it would stop the gradient to what made it)")
    return BEFORE_THE_LOOP, (where_made if made else ""), fix


def _expected_version(message):
    """autograd: '... is at version 2; expected version 1 instead.'"""
    match = re.search(r"expected version (\d+)", message)
    return int(match.group(1)) if match else None


def _shape_in_message(message):
    """autograd names the changed tensor as '[torch.FloatTensor [8, 2]]': its shape."""
    match = re.search(r"\[torch\.\w+ \[([\d, ]*)\]\]", message)
    return tuple(int(n) for n in match.group(1).split(",") if n.strip()) if match else None


def _changes_since_saved(recorder, record, expected, saved_shape):
    """The in-place changes to the memory of the node's op's tensors made after it saved
    them, the first change after the version autograd expected first; those of the
    saved tensor's size first."""
    if record is None:
        return []
    numel = math.prod(saved_shape) if saved_shape is not None else None
    found = []
    for key, version in record.storages:
        for change in recorder.changes.get(key, []):
            if change.version > (version if expected is None else expected):
                found.append(change)
    return sorted(found, key=lambda c: (c.version, numel is not None and math.prod(c.shape) != numel))


def _version_note(recorder, call, roots, message):
    node, _, parent = _failing_node(roots, _modified)
    if node is None:
        return None
    record = record_of(node)
    lines = _header(call)
    modified = [a for a, _, lost in _read_saved(node) if lost == MODIFIED]
    expected, saved_shape = _expected_version(message), _shape_in_message(message)
    lines.append(f"  {node.name()} saved {', '.join(modified)}, which was changed in place "
                 "after it was saved.")
    if record is not None and record.created_at is not None:
        lines += _made_at(node.name(), record.created_at, record.called_from)
    changes = _changes_since_saved(recorder, record, expected, saved_shape)
    if not changes:
        lines.append("  The change in place was not seen: it was made before explain() "
                     "started, or by code that torch's Python API does not show.")
        return lines
    change = changes[0]
    what = "an optimizer step" if change.by_optimizer else "an in-place operation"
    if saved_shape is None or change.shape == saved_shape:
        whose = f"That tensor, of shape {change.shape},"
    else:  # e.g. a Linear layer saves weight.T, a view of the (out, in) weight
        whose = (f"What it saved (shape {saved_shape}) shares its memory with a tensor of "
                 f"shape {change.shape}, which")
    inside = f", in {change.site.function}" if change.called_from else ""
    inside += "".join(f", {'called from' if k == 0 else 'from'} {where(c)}"
                      for k, c in enumerate(change.called_from))
    lines += [f"  {whose} was changed by {what} at {where(change.site)}{inside}:",
              *_site_lines(change.site),
              *[line for caller in change.called_from for line in _site_lines(caller)]]
    return lines + _pattern_lines(*_version_pattern(recorder, call, change, roots, record))


def _version_pattern(recorder, call, change, roots, record):
    """(pattern, the fix in the program's own words or "")."""
    if not change.by_optimizer:
        here = advice.out_of_place(change.op, _code(change.site), change.on_a_view)
        return (IN_PLACE_IN_FORWARD if change.called_from else IN_PLACE), here
    stepped = recorder.stepped[change.step] if change.step is not None else set()
    reached = _leaves_reached([root for root in roots if root is not None])
    step, loss = advice.code_of(_code(change.site)), advice.loss_name(_code(call.site))
    earlier = [c.number for c in recorder.calls if c.same_line(call) and c.number < call.number]
    if earlier and record is not None and record.created_at is not None \
            and record.calls_before < max(earlier):  # made before this line's last call: kept
        return CARRIED, _carried_here([(record, [])])
    if reached <= stepped:  # this loss trains only what the step updated: one model
        before = [c for c in recorder.calls
                  if c.number < call.number and c.steps_before <= change.step]
        first = advice.loss_name(_code(before[-1].site)) if before else ""
        here = (f"one ({first} + {loss}).backward(), then {step}; or, keeping two calls, "
                f"no {step} and no zero_grad() between {first}.backward() and "
                f"{loss}.backward()") if step and loss and first and first != loss else ""
        return STEP_BETWEEN_BACKWARDS, here
    steps = [advice.code_of(_code(recorder.step_sites[k]))
             for k in range(change.step, len(recorder.stepped)) if recorder.stepped[k] & reached]
    first = _steps_since(recorder, roots, reached)
    steps = " and ".join(dict.fromkeys(first + steps)) or step
    here = (f"compute {loss} again after {steps}; or call {loss}.backward() and its own step "
            f"before {steps}, each optimizer's zero_grad() before its own backward"
            if steps and loss else "")
    return TWO_MODELS_STEP, here


def _steps_since(recorder, roots, reached):
    """The program's optimizer.step() lines, since the loss's graph was made, that updated
    parameters it reaches."""
    made = [r.steps_before for root in roots if (r := record_of(root)) is not None]
    since = min(made, default=len(recorder.stepped))
    return [advice.code_of(_code(recorder.step_sites[k]))
            for k in range(since, len(recorder.stepped)) if recorder.stepped[k] & reached]
