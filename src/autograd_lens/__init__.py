"""autograd_lens: look inside PyTorch's autograd graph.

- draw(*outputs): the graph as a picture, freed saved tensors marked;
- saved_tensors(*outputs): a table of every tensor the graph saved;
- retained_bytes(*outputs): how many bytes those saved tensors keep alive;
- shared_nodes(*outputs): the nodes that several outputs' backward passes share.
"""
from .draw import GraphView, draw
from .saved import SavedTensorTable, retained_bytes, saved_tensors
from .shared import shared_nodes

__all__ = ["draw", "GraphView", "saved_tensors", "SavedTensorTable", "retained_bytes",
           "shared_nodes"]
__version__ = "0.1.0"
