"""Which parts of a graph several outputs share (e.g. the trunk under two losses)."""
from .graph import walk


def shared_nodes(*outputs, params=None) -> list:
    """Names of the nodes that the backward pass of more than one output runs through.

    These are the nodes whose saved tensors the first backward() frees and the
    second one needs: the reason for retain_graph=True in multi-task training.
    Leaves (parameters) are included under their names from `params`.
    """
    if len(outputs) < 2:
        raise ValueError(
            f"shared_nodes needs two or more outputs to compare, got {len(outputs)}: "
            "pass e.g. shared_nodes(loss1, loss2)"
        )
    graph = walk(outputs, params)
    return [node.name for node in graph.nodes if len(node.reached_by) > 1]
