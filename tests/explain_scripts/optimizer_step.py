"""optimizer.step() between two backward calls over the same graph."""
import torch


def main():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    out = model(x)  # made
    loss1 = ((out[:, 0] - y[:, 0]) ** 2).mean()
    loss2 = ((out[:, 1] - y[:, 1]) ** 2).mean()
    loss1.backward(retain_graph=True)
    optimizer.step()  # changed
    loss2.backward()  # fails


if __name__ == "__main__":
    main()
