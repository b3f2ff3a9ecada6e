"""A GAN step whose discriminator loss uses the generator's output without detach()."""
import torch
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    G = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    D = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    g_optimizer = torch.optim.Adam(G.parameters(), lr=1e-3)
    d_optimizer = torch.optim.Adam(D.parameters(), lr=1e-3)
    real, z = torch.randn(16, 2) + 2, torch.randn(16, 4)
    ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)

    fake = G(z)  # made
    d_loss = (F.binary_cross_entropy_with_logits(D(real), ones)
              + F.binary_cross_entropy_with_logits(D(fake), zeros))
    d_optimizer.zero_grad()
    d_loss.backward()  # freed
    d_optimizer.step()

    g_loss = F.binary_cross_entropy_with_logits(D(fake), ones)
    g_optimizer.zero_grad()
    g_loss.backward()  # fails
    g_optimizer.step()


if __name__ == "__main__":
    main()
