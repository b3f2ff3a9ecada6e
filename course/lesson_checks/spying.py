"""Watching what the reader's code asks autograd to do, without changing what it does.

`Tensor.backward()` goes through `torch.autograd.backward`, so replacing that function
and `torch.autograd.grad` for a while sees every backward pass the reader starts.
"""
import inspect
from contextlib import contextmanager
from dataclasses import dataclass

import torch

from autograd_lens import retained_bytes


@dataclass(frozen=True)
class BackwardCall:
    retain_graph: bool          # the call kept the graph for another backward
    retained_bytes: int | None  # what that graph kept alive just before; None: unreadable


def _bytes_or_none(tensors):
    """retained_bytes of what backward was asked to run, or None if it can't be read."""
    try:
        return retained_bytes(*tensors)
    except Exception:  # freed, modified in place, not a graph: the call itself will say
        return None


@contextmanager
def watch_backward_calls():
    """Record every backward()/autograd.grad() call made inside, as a BackwardCall."""
    calls = []
    originals = {"backward": torch.autograd.backward, "grad": torch.autograd.grad}

    def spy(name):
        original = originals[name]
        signature = inspect.signature(original)

        def watched(*args, **kwargs):
            arguments = signature.bind(*args, **kwargs).arguments
            retain = arguments.get("retain_graph")
            if retain is None:  # autograd's default: retain_graph = create_graph
                retain = bool(arguments.get("create_graph", False))
            outputs = arguments.get("tensors", arguments.get("outputs"))
            outputs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs or [])
            calls.append(BackwardCall(bool(retain), _bytes_or_none(outputs)))
            return original(*args, **kwargs)
        return watched

    torch.autograd.backward = spy("backward")
    torch.autograd.grad = spy("grad")
    try:
        yield calls
    finally:  # even when the reader's code raised: the notebook goes on using autograd
        torch.autograd.backward = originals["backward"]
        torch.autograd.grad = originals["grad"]
