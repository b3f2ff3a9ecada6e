"""autograd_lens: look inside PyTorch's autograd graph.

- draw(*outputs): the graph as a picture, freed saved tensors marked;
- saved_tensors(*outputs): a table of every tensor the graph saved;
- retained_bytes(*outputs): how many bytes those saved tensors keep alive;
- shared_nodes(*outputs): the nodes that several outputs' backward passes share;
- overview(*outputs, params=...): a big graph drawn as one box per block of the model;
- backward_passes(module): a with-block that counts the backward passes computing
  gradients for the module's parameters;
- memory_timeline(): a with-block that records the bytes PyTorch's allocator holds over
  the code inside it, phase by phase (forward, each backward call, optimizer steps);
- backward_replay(*outputs): runs the backward pass once and shows it node by node: what
  each node let go of and the bytes held after it (the one function that runs something);
- explain(): a with-block (or `python -m autograd_lens.explain script.py`, or
  `%load_ext autograd_lens` in a notebook) that adds to autograd's freed-buffer and
  in-place errors a note on their cause;
- anomaly_report(warning): what PyTorch's anomaly mode said about a failed backward, with
  only your own code's lines.
"""
from .anomaly import anomaly_report
from .counting import BackwardPasses, backward_passes
from .draw import GraphView, draw
from .explain import explain
from .memory import MemoryTimeline, memory_timeline
from .overview import Overview, overview
from .replay import BackwardReplay, backward_replay
from .saved import SavedTensorTable, retained_bytes, saved_tensors
from .shared import shared_nodes

__all__ = ["draw", "GraphView", "saved_tensors", "SavedTensorTable", "retained_bytes",
           "shared_nodes", "overview", "Overview", "backward_passes", "BackwardPasses", "explain",
           "memory_timeline", "MemoryTimeline", "backward_replay", "BackwardReplay",
           "anomaly_report"]
__version__ = "0.1.0"


def load_ipython_extension(ipython):
    """`%load_ext autograd_lens`: explain() on for every cell of this kernel."""
    from .explain import turn_on

    turn_on()
    print("autograd_lens: explain() is on for every cell; `%unload_ext autograd_lens` turns it off.")


def unload_ipython_extension(ipython):
    """`%unload_ext autograd_lens`: explain() off again."""
    from .explain import turn_off

    if turn_off():
        print("autograd_lens: explain() is off.")
