"""Two losses over a shared trunk, with a backward call each."""
import torch


def main():
    torch.manual_seed(0)
    trunk = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh())
    head1, head2 = torch.nn.Linear(8, 1), torch.nn.Linear(8, 1)
    x, y1, y2 = torch.randn(16, 4), torch.randn(16, 1), torch.randn(16, 1)
    features = trunk(x)  # made
    loss1 = ((head1(features) - y1) ** 2).mean()
    loss2 = ((head2(features) - y2) ** 2).mean()
    loss1.backward()  # freed
    loss2.backward()  # fails


if __name__ == "__main__":
    main()
