"""Linear regression with torch.optim.LBFGS where the prediction is computed once, outside the closure.

Source: https://github.com/pytorch/pytorch/issues/111369
Thread: The reporter could not get LBFGS to work even on a tiny Colab example and, asked by a maintainer for runnable code, posted it: pred = model(x) is computed before `def closure()`, and the closure only rebuilds the MSE loss from that fixed pred and calls loss.backward(). LBFGS calls the closure several times per step, so the second call backpropagates through the forward graph that the first call already freed. The reporter then wrote that they had solved it (the rest of that comment is cut off in the copy I read); the documented pattern, which the code differs from, is to run the model inside the closure.
Cause: LBFGS_CLOSURE
Fix: Move the forward pass into the closure (pred = model(x) inside closure, after optimizer.zero_grad()), so every closure call builds its own graph.
Fix mentions: closure, pred = model(x)
Fix must not say: retain_graph=True
"""
import torch
from torch import nn, optim


class LinearRegression(nn.Module):
    def __init__(self, p):
        super(LinearRegression, self).__init__()
        self.p = p
        self.lin = nn.Linear(p, 1)

    def forward(self, x):
        output = self.lin(x)  # made
        return output


def main():
    torch.manual_seed(0)
    x = torch.rand(size=(16, 10))
    y = torch.rand(size=(16, 1))
    model = LinearRegression(x.size(1))
    optimizer = optim.LBFGS(model.parameters())
    criterion = nn.MSELoss()

    pred = model(x)  # called

    def closure():
        optimizer.zero_grad()
        loss = criterion(pred, y.view(pred.shape))
        loss.backward()  # freed fails
        return loss

    optimizer.step(closure)


if __name__ == "__main__":
    main()
