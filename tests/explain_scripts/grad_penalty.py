"""A discriminator step with an R1 gradient penalty taken by torch.autograd.grad without
create_graph=True, then added to the loss that is backpropagated."""
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    D = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(D.parameters(), lr=1e-3)
    real = torch.randn(8, 2, requires_grad=True)
    out = D(real)  # made
    grad, = torch.autograd.grad(out.sum(), real)  # freed
    penalty = grad.pow(2).sum(1).mean()
    loss = nn.functional.softplus(-out).mean() + 10 * penalty
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()


if __name__ == "__main__":
    main()
