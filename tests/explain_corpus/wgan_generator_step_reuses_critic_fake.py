"""PyTorch-GAN's WGAN (eriklindernoren/PyTorch-GAN, implementations/wgan/wgan.py, April 2018): the generator runs once per critic iteration and once more for its own step, and the generator step scored the critic loop's images.

Source: https://github.com/eriklindernoren/PyTorch-GAN/issues/6
Thread: Running wgan.py (torch 0.4.0) failed at gen_validity.backward(valid) with "Trying to backward through the graph a second time, but the buffers have already been freed". The maintainer: "Oh, a typo had snuck in there. Thanks!"; the fix (commit 48e84ef, "WGAN: Fixed typo.", which closes the issue) changed gen_validity = discriminator(fake_imgs) to gen_validity = discriminator(gen_imgs). fake_imgs is the output of the last generator call inside the critic loop; the critic's fake_validity.backward(fake) went back through it (it is not detached there) and freed the generator's graph, while gen_imgs, made by the generator step's own call, went unused.
Cause: GAN
Fix: Score the images of the generator step's own pass, gen_validity = discriminator(gen_imgs), not fake_imgs from the critic loop (in the critic loop, discriminator(fake_imgs.detach()) also keeps the critic's backward out of the generator).
Fix mentions: detach()
Fix must not say: retain_graph=True
"""
from argparse import Namespace

import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

opt = Namespace(n_epochs=1, batch_size=4, lr=0.00005, latent_dim=8, img_size=4, channels=1, n_critic=2,
                clip_value=0.01, sample_interval=400)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()

        self.model = nn.Sequential(
            nn.Linear(opt.latent_dim, 16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(16, 32),
            nn.BatchNorm1d(32),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(32, opt.img_size**2),
            nn.Tanh()
        )

    def forward(self, noise):
        img = self.model(noise)  # made
        img = img.view(img.shape[0], opt.channels, opt.img_size, opt.img_size)
        return img


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()

        self.model = nn.Sequential(
            nn.Linear(opt.img_size**2, 16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(16, 1)
        )

    def forward(self, img):
        img_flat = img.view(img.shape[0], -1)
        validity = self.model(img_flat)
        return validity


def main():
    torch.manual_seed(0)
    np.random.seed(0)
    generator = Generator()
    discriminator = Discriminator()

    # stands in for the MNIST DataLoader
    dataloader = [(torch.rand(opt.batch_size, opt.channels, opt.img_size, opt.img_size) * 2 - 1, None) for _ in range(4)]

    optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=opt.lr)
    optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=opt.lr)
    Tensor = torch.FloatTensor

    batches_done = 0
    for epoch in range(opt.n_epochs):

        # Batch iterator
        data_iter = iter(dataloader)

        for i in range(len(dataloader) // opt.n_critic):
            # Train discriminator for n_critic times
            for _ in range(opt.n_critic):
                (imgs, _) = next(data_iter)

                # Adversarial ground truths
                valid = Variable(Tensor(imgs.shape[0], 1).fill_(-1.0), requires_grad=False)
                fake = Variable(Tensor(imgs.shape[0], 1).fill_(1.0), requires_grad=False)

                # Configure input
                real_imgs = Variable(imgs.type(Tensor))

                optimizer_D.zero_grad()

                # Sample noise as generator input
                z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))

                # Generate a batch of images
                fake_imgs = generator(z)  # called

                # Train on real images
                real_validity = discriminator(real_imgs)
                real_validity.backward(valid)
                # Train on fake images
                fake_validity = discriminator(fake_imgs)
                fake_validity.backward(fake)  # freed

                d_loss = real_validity - fake_validity

                optimizer_D.step()

                # Clip weights of discriminator
                for p in discriminator.parameters():
                    p.data.clamp_(-opt.clip_value, opt.clip_value)

            optimizer_G.zero_grad()

            # Sample noise as generator input
            z = Variable(Tensor(np.random.normal(0, 1, (imgs.shape[0], opt.latent_dim))))

            # Generate a batch of images
            gen_imgs = generator(z)

            # Loss measures generator's ability to fool the discriminator
            # Train on fake images
            gen_validity = discriminator(fake_imgs)
            gen_validity.backward(valid)  # fails

            optimizer_G.step()

            print("[Epoch %d/%d] [Batch %d] [D loss: %f] [G loss: %f]" % (
                epoch, opt.n_epochs, batches_done, d_loss.mean().item(), gen_validity.mean().item()))
            batches_done += 1


if __name__ == "__main__":
    main()
