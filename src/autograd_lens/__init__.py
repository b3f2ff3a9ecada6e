"""autograd_lens: look inside PyTorch's autograd graph.

- draw(*outputs): the graph as a picture, freed saved tensors marked;
- saved_tensors(*outputs): a table of every tensor the graph saved;
- retained_bytes(*outputs): how many bytes those saved tensors keep alive;
- shared_nodes(*outputs): the nodes that several outputs' backward passes share;
- overview(*outputs, params=...): a big graph drawn as one box per block of the model;
- backward_passes(module): a with-block that counts the backward passes computing
  gradients for the module's parameters;
- explain(): a with-block (or `python -m autograd_lens.explain script.py`) that adds to
  autograd's freed-buffer and in-place errors a note on their cause.
"""
from .counting import BackwardPasses, backward_passes
from .draw import GraphView, draw
from .explain import explain
from .overview import Overview, overview
from .saved import SavedTensorTable, retained_bytes, saved_tensors
from .shared import shared_nodes

__all__ = ["draw", "GraphView", "saved_tensors", "SavedTensorTable", "retained_bytes",
           "shared_nodes", "overview", "Overview", "backward_passes", "BackwardPasses", "explain"]
__version__ = "0.1.0"
