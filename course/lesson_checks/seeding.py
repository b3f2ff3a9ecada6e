"""Seeded set-ups that leave the reader's random numbers alone.

A checker builds its leaves, models and data the same way every time, so that a check
gives the same verdict in every run; and it must not move the notebook's global
generator, or the cells after the check would draw other numbers than the stored
outputs show.
"""
from contextlib import contextmanager

import torch


@contextmanager
def seeded(seed):
    """Draw from the global RNG seeded with `seed`, then give it back the state it had."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def fresh_leaf(values=None, *, shape=(1, 4), seed=0):
    """A new leaf that requires grad: from `values` if given, else uniform in [0, 1)
    of `shape`, drawn from its own generator seeded with `seed`."""
    if values is not None:
        return torch.tensor(values, dtype=torch.float32, requires_grad=True)
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=generator, requires_grad=True)


def fresh(build, seed=0):
    """`build()` (a model, a batch) run with the global RNG seeded, then restored."""
    with seeded(seed):
        return build()
