"""torch.autograd.grad for two losses over a shared part, one call each."""
import torch


def main():
    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(8, 4)
    shared = torch.sin(x @ w)  # made
    grad_a, = torch.autograd.grad(shared.sum(), w)  # freed
    grad_b, = torch.autograd.grad((shared ** 2).sum(), w)  # fails
    print(grad_a + grad_b)


if __name__ == "__main__":
    main()
