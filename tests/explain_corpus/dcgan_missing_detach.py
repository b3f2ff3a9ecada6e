"""DCGAN training loop (pytorch/examples dcgan) with the .detach() left out of the discriminator's fake pass.

Source: https://github.com/pytorch/examples/issues/116
Thread: A user asked why dcgan/main.py calls netD(fake.detach()) in the discriminator step; the first reply said it only saves time. Another user then reported that dropping the detach() gives "Trying to backward through the graph second time", and a later reply explained why: without detach, errD_fake.backward() runs on through netG and frees its graph, so errG.backward() on the same fake batch finds the generator's saved tensors gone. Keeping netD(fake.detach()) in the discriminator step is what makes the later generator step work.
Cause: GAN
Fix: Feed the discriminator fake.detach() in its own step (netD(fake.detach())), so only errG.backward() goes through the generator.
Fix mentions: detach(), fake.detach()
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, nz=8, nc=4):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 16), nn.BatchNorm1d(16), nn.ReLU(True),
                                  nn.Linear(16, nc), nn.Tanh())

    def forward(self, input):
        return self.main(input)  # made


class Discriminator(nn.Module):
    def __init__(self, nc=4):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nc, 16), nn.LeakyReLU(0.2, inplace=True),
                                  nn.Linear(16, 1), nn.Sigmoid())

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


def main():
    torch.manual_seed(0)
    netG, netD = Generator(), Discriminator()
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real_label, fake_label = 1.0, 0.0
    for i in range(2):
        real_cpu = torch.randn(16, 4)
        batch_size = real_cpu.size(0)
        # (1) Update D network: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        label = torch.full((batch_size,), real_label)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        noise = torch.randn(batch_size, 8)
        fake = netG(noise)  # called
        label.fill_(fake_label)
        output = netD(fake)
        errD_fake = criterion(output, label)
        errD_fake.backward()  # freed
        optimizerD.step()
        # (2) Update G network: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()  # fails
        optimizerG.step()


if __name__ == "__main__":
    main()
