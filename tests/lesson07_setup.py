"""Lesson 07's set-up as its set-up cells define it, for the tests of its checkers and of
its claims: `make_net` (seeded), the data `x` and `y`."""
import torch
from torch import nn


def make_net():
    torch.manual_seed(0)
    encoder, head = nn.Sequential(nn.Linear(4, 8), nn.Tanh()), nn.Linear(8, 1)
    return encoder, head, torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.3)


_generator = torch.Generator().manual_seed(0)
x = torch.randn(64, 4, generator=_generator)
y = torch.tanh(x @ torch.randn(4, 1, generator=_generator))
