"""GAN step that computes loss_g and loss_d up front, then updates the generator first and the discriminator second.

Source: https://whosebug.com/question/5232549/How-does-PyTorch-s-loss-backward-work-when-retain-graph-True-is-specified
Thread: The user computed both losses, ran loss_g.backward(); optim_g.step() and then loss_d.backward(); optim_d.step(), got the freed-graph error, silenced it with loss_g.backward(retain_graph=True), and asked why two separate networks share a graph. The answer explained that D(G(z)) is one graph, so the discriminator's loss was backpropagating into the generator (and through the discriminator pass loss_g had already consumed), and that retain_graph=True only hides this mistake; the discriminator's loss should be computed on the generator's output detached.
Cause: GAN
Fix: Build the discriminator's loss from a fresh D pass on fake.detach() instead of reusing the generator-step graph, and drop retain_graph=True.
Fix mentions: detach()
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    optim_g = torch.optim.Adam(G.parameters(), lr=1e-3)
    optim_d = torch.optim.Adam(D.parameters(), lr=1e-3)
    ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
    for it in range(2):
        real, z = torch.randn(16, 2) + 3, torch.randn(16, 4)
        # computing loss_g and loss_d...
        fake = G(z)
        pred_fake = D(fake)  # made
        pred_real = D(real)
        loss_g = F.binary_cross_entropy_with_logits(pred_fake, ones)
        loss_d = (F.binary_cross_entropy_with_logits(pred_real, ones)
                  + F.binary_cross_entropy_with_logits(pred_fake, zeros))
        optim_g.zero_grad()
        loss_g.backward()  # freed
        optim_g.step()
        optim_d.zero_grad()
        loss_d.backward()  # fails
        optim_d.step()


if __name__ == "__main__":
    main()
