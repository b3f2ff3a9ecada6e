"""pytorch_GAN_zoo generator step with the GDPP loss: lossGFake.backward(), then the GDPP loss backpropagates through the same fake-image features.

Source: https://github.com/facebookresearch/pytorch_GAN_zoo/issues/83
Thread: Training PGAN with --GDPP True failed with "Trying to backward through the graph a second time"; the reporter traced it to base_GAN.py, where lossGFake.backward() releases the graph before the GDPP loss (computed from the discriminator features phiGFake of the same fake batch) is backpropagated. A maintainer noted that calling backward in two places does not change the loss, and the fix merged in PR 85 sets lossGFake.backward(retain_graph=True) so the GDPP backward can reuse the shared part (summing the two losses, as the paper writes, is the equivalent single-backward form).
Cause: TWO_LOSSES
Fix: Keep the shared discriminator pass alive for the GDPP loss: lossGFake.backward(retain_graph=True) (or add the two generator losses and call backward once).
Fix mentions: retain_graph=True
Fix must not say: detach()
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Discriminator(nn.Module):
    def __init__(self, dim=8, n_features=6):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(dim, n_features), nn.LeakyReLU(0.2))
        self.decision = nn.Linear(n_features, 1)

    def forward(self, x, getFeature=False):
        feature = self.features(x)  # made
        out = self.decision(feature)
        if getFeature:
            return out, feature
        return out


def GDPPLoss(phiFake, phiReal, backward=True):
    def compute_diversity(phi):
        phi = F.normalize(phi, p=2, dim=1)
        SB = torch.mm(phi, phi.t())
        eigVals, eigVecs = torch.linalg.eigh(SB)
        return eigVals, eigVecs

    def normalize_min_max(eigVals):
        minV, maxV = torch.min(eigVals), torch.max(eigVals)
        return (eigVals - minV) / (maxV - minV)

    fakeEigVals, fakeEigVecs = compute_diversity(phiFake)
    realEigVals, realEigVecs = compute_diversity(phiReal)
    magnitudeLoss = 0.0001 * F.mse_loss(target=realEigVals, input=fakeEigVals)
    structureLoss = -torch.sum(torch.mul(fakeEigVecs, realEigVecs), 0)
    normalizedRealEigVals = normalize_min_max(realEigVals)
    weightedStructureLoss = torch.sum(torch.mul(normalizedRealEigVals, structureLoss))
    gdppLoss = magnitudeLoss + weightedStructureLoss
    if backward:
        gdppLoss.backward()  # fails
    return gdppLoss.item()


def main():
    torch.manual_seed(0)
    netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    netD = Discriminator()
    optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.0, 0.99))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.0, 0.99))
    real_input = torch.randn(8, 8)
    # Update the generator
    optimizerG.zero_grad()
    optimizerD.zero_grad()
    inputNoise = torch.randn(8, 4)
    predFakeG = netG(inputNoise)
    predFakeD, phiGFake = netD(predFakeG, True)  # called
    lossGFake = F.softplus(-predFakeD).mean()
    lossGFake.backward()  # freed
    _, phiDReal = netD(real_input, True)
    GDPPLoss(phiDReal, phiGFake, backward=True)
    optimizerG.step()


if __name__ == "__main__":
    main()
