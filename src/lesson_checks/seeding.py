"""Seeded set-ups that leave the reader's random numbers alone.

A checker builds its models and data the same way every time, so that a check gives the
same verdict in every run; and it must not move the notebook's global generator, or the
cells after the check would draw other numbers than the stored outputs show.
"""
from contextlib import contextmanager

import torch


@contextmanager
def seeded(seed):
    """Draw from the global RNG seeded with `seed`, then give it back the state it had."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield
