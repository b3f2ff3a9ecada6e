"""Which parts of a graph several outputs share (e.g. the trunk under two losses)."""
import torch

from .graph import Names, walk


def shared_nodes(*outputs: torch.Tensor, params: Names | None = None) -> list[str]:
    """Names of the nodes that the backward pass of more than one output runs through.

    These are the nodes whose saved tensors the first backward() frees and the
    second one needs: the reason for retain_graph=True in multi-task training.
    Leaves (parameters) are included under their names from `params` (a dict of names to
    tensors, model.named_parameters(), or the model itself). Only the
    graph's edges are read, not what its nodes saved, so no hook can run.

    Example::

        >>> import torch
        >>> from autograd_lens import shared_nodes
        >>> a = torch.ones(3, requires_grad=True)
        >>> trunk = a.exp()
        >>> shared_nodes(trunk.sum(), trunk.mean(), params={"a": a})
        ['ExpBackward0', 'a']
    """
    if len(outputs) < 2:
        raise ValueError(
            f"shared_nodes needs two or more outputs to compare, got {len(outputs)}: "
            "pass e.g. shared_nodes(loss1, loss2)"
        )
    graph = walk(outputs, params, read_saved=False)
    return [node.name for node in graph.nodes if len(node.reached_by) > 1]
