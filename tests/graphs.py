"""Small graphs and models the library's tests run on, each built fresh and seeded.

Every builder returns (outputs, leaves): the tensors to draw and the tensors that
require grad (the graph's leaves), whose .grad backward fills.
"""
import torch
from torch import nn


class Counts:
    """Calls of a pack and an unpack hook (or runs of a checkpointed segment)."""

    def __init__(self):
        self.pack = self.unpack = 0

    def now(self):
        return (self.pack, self.unpack)


def counting_hooks(counts, copy=False):
    """saved_tensors_hooks whose pack and unpack count their calls in `counts`; pack
    keeps the tensor itself, or a clone of it with copy=True."""
    def pack(tensor):
        counts.pack += 1
        return tensor.clone() if copy else tensor

    def unpack(packed):
        counts.unpack += 1
        return packed

    return torch.autograd.graph.saved_tensors_hooks(pack, unpack)


def seed_graph():
    """The seed post's Figure 1: a -> b -> c -> d (mean) and e (sum)."""
    torch.manual_seed(0)
    a = torch.rand(1, 4, requires_grad=True)
    b = a ** 2
    c = b * 2
    return (c.mean(), c.sum()), [a]


def linear_stack():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                          nn.Linear(16, 1))
    return (model(torch.randn(5, 6)).pow(2).mean(),), list(model.parameters())


def conv_batchnorm():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(),
                          nn.Flatten(), nn.Linear(3 * 4 * 4, 2))
    return (model(torch.randn(2, 1, 6, 6)).sum(),), list(model.parameters())


def lstm():
    torch.manual_seed(0)
    model = nn.LSTM(input_size=3, hidden_size=5, num_layers=2)
    output, (h, c) = model(torch.randn(4, 2, 3))
    return (output.sum() + h.pow(2).sum(),), list(model.parameters())


class Cube(torch.autograd.Function):
    """x**3 with a hand-written backward that saves x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2 * grad


def custom_function():
    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    h = (w * 2).exp()
    return (Cube.apply(h).sum(),), [w]


def views_and_inplace():
    torch.manual_seed(0)
    x = torch.randn(3, 4, requires_grad=True)
    h = x * 1.5
    h[0].mul_(3)  # in-place on a view: autograd rewrites the graph (CopySlices)
    y = h.t().sigmoid()
    z = y[:, 1:].reshape(-1).relu()
    return (z.sum(), y.mean()), [x]


def two_heads():
    torch.manual_seed(0)
    trunk = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
    head1, head2 = nn.Linear(8, 1), nn.Linear(8, 3)
    features = trunk(torch.randn(6, 4))
    loss1 = head1(features).pow(2).mean()
    loss2 = nn.functional.cross_entropy(head2(features), torch.tensor([0, 1, 2, 0, 1, 2]))
    params = [*trunk.parameters(), *head1.parameters(), *head2.parameters()]
    return (loss1, loss2), params


ALL = [seed_graph, linear_stack, conv_batchnorm, lstm, custom_function, views_and_inplace,
       two_heads]
