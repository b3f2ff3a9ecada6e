"""Shift-Net inpainting model with gan_type 're_avg_gan': the generator's relativistic loss reuses self.pred_fake, the discriminator output from the D step.

Source: https://github.com/Zhaoyi-Yan/Shift-Net_pytorch/issues/34
Thread: The maintainer opened "`re_avg_gan` is broken" with the freed-graph error. In backward_D the discriminator is run several times (netD(fake_AB.detach()) twice, netD(real_AB) once) and the outputs are kept in self.pred_fake / self.pred_real; backward_G runs netD(fake_AB) into a local pred_fake and netD(real_B) into self.pred_real, but the re_avg_gan branch still uses self.pred_fake, the D-step output that loss_D.backward() had already freed. The merged fix (PR 35, "fix bug in re_avg_gan") only added loss_D.backward(retain_graph=True) with the comment "for re_avg_gan, need to retain graph of D"; RaGAN was later removed from the repo (commit 8c9c4fc). With current PyTorch that retain_graph version fails anyway, because optimizer_D.step() changes the weights that graph saved, and that term would push no gradient into the generator (its input was fake_AB.detach()).
Cause: GAN
Fix: Build the generator's relativistic loss from this step's discriminator pass (the local pred_fake = netD(fake_AB) made in backward_G, after optimizer_D.step()) instead of self.pred_fake from backward_D; retain_graph=True on loss_D only postpones the error to the optimizer step's in-place change.
Fix mentions: pred_fake, after the step
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn


class GANLoss(nn.Module):
    def __init__(self, gan_type='re_avg_gan', target_real_label=1.0, target_fake_label=0.0):
        super(GANLoss, self).__init__()
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        self.loss = nn.BCEWithLogitsLoss()

    def get_target_tensor(self, input, target_is_real):
        target_tensor = self.real_label if target_is_real else self.fake_label
        return target_tensor.expand_as(input)

    def __call__(self, input, target_is_real):
        return self.loss(input, self.get_target_tensor(input, target_is_real))


class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc=3, ndf=8):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(input_nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2),
                                   nn.Conv2d(ndf, 1, 4, 1, 1))

    def forward(self, input):
        return self.model(input)  # made


class ShiftNetModel:
    def __init__(self):
        self.gan_type, self.gan_weight, self.lambda_A = 're_avg_gan', 0.2, 100
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
        self.netD = NLayerDiscriminator()
        self.criterionGAN, self.criterionL1 = GANLoss(self.gan_type), nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        fake_AB = self.fake_B
        real_AB = self.real_B  # GroundTruth
        self.pred_fake = self.netD(fake_AB.detach())
        self.pred_real = self.netD(real_AB)
        self.pred_fake = self.netD(fake_AB.detach())  # called
        self.loss_D = (self.criterionGAN(self.pred_real - torch.mean(self.pred_fake), True)
                       + self.criterionGAN(self.pred_fake - torch.mean(self.pred_real), False)) / 2.
        self.loss_D.backward()  # freed

    def backward_G(self):
        # First, G(A) should fake the discriminator
        fake_AB = self.fake_B
        pred_fake = self.netD(fake_AB)
        self.pred_real = self.netD(self.real_B)
        self.loss_G_GAN = (self.criterionGAN(self.pred_real - torch.mean(self.pred_fake), False)
                           + self.criterionGAN(self.pred_fake - torch.mean(self.pred_real), True)) / 2.
        self.loss_G_L1 = self.criterionL1(self.fake_B, self.real_B) * self.lambda_A
        self.loss_G = self.loss_G_L1 + self.loss_G_GAN * self.gan_weight
        self.loss_G.backward()  # fails

    def optimize_parameters(self):
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


def main():
    torch.manual_seed(0)
    model = ShiftNetModel()
    for i in range(2):
        real_B = torch.rand(2, 3, 16, 16) * 2 - 1
        real_A = real_B.clone()
        real_A[:, :, 4:12, 4:12] = 0.
        model.set_input(real_A, real_B)
        model.optimize_parameters()


if __name__ == "__main__":
    main()
