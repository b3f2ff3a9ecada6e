"""Reads its arguments, prints them, and trains a little: no error."""
import sys

import torch

if __name__ == "__main__":
    print("name:", __name__)
    print("argv:", sys.argv[1:])
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 3), torch.randn(16, 1)
    for step in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item()!r}")
    print("weight:", model.weight.detach().tolist())
    print("to stderr too", file=sys.stderr)
