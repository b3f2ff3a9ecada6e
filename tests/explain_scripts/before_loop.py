"""A tensor computed once, before the loop, and reused in every iteration."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 4)
    features = torch.tanh(model(x))  # made
    for step in range(3):
        loss = (features ** 2).mean()
        optimizer.zero_grad()
        loss.backward()  # freed fails
        optimizer.step()


if __name__ == "__main__":
    main()
