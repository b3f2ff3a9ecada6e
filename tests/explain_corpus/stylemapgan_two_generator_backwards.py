"""StyleMapGAN generator step: the adversarial loss and the W-reconstruction loss are backpropagated by two separate backward() calls.

Source: https://github.com/naver-ai/StyleMapGAN/issues/16
Thread: Training from scratch failed at `(w_rec_loss * args.lambda_w_rec_loss).backward()` in train.py with "Trying to backward through the graph a second time". Both losses come out of one model(None, "G") call and share the generated image (the W-reconstruction loss encodes the fake image again), so g_loss.backward() had already freed the shared generator graph. The reporter unblocked themself by adding the two losses and calling backward() once, and asked the authors why the calls were separate (no reply in the thread).
Cause: TWO_LOSSES
Fix: Add the weighted losses and call backward once: (g_loss + w_rec_loss * lambda_w_rec_loss).backward() (or pass retain_graph=True to the first call).
Fix mentions: backward once
Fix must not say: detach()
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, latent=8, img=12):
        super().__init__()
        self.mapping_network = nn.Sequential(nn.Linear(latent, latent), nn.LeakyReLU(0.2))
        self.generator = nn.Sequential(nn.Linear(latent, 16), nn.LeakyReLU(0.2), nn.Linear(16, img))
        self.encoder = nn.Sequential(nn.Linear(img, 16), nn.LeakyReLU(0.2), nn.Linear(16, latent))
        self.discriminator = nn.Sequential(nn.Linear(img, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, real_img, train_mode):
        if train_mode == "G":
            z = torch.randn(4, 8)
            stylecode = self.mapping_network(z)
            fake_img = self.generator(stylecode)  # made
            fake_pred = self.discriminator(fake_img)
            adv_loss = F.softplus(-fake_pred).mean()
            fake_stylecode = self.encoder(fake_img)
            w_rec_loss = F.mse_loss(stylecode, fake_stylecode)
            return adv_loss, w_rec_loss, stylecode


def main():
    torch.manual_seed(0)
    model = Model()
    g_optim = torch.optim.Adam([*model.mapping_network.parameters(), *model.generator.parameters()], lr=2e-3)
    e_optim = torch.optim.Adam(model.encoder.parameters(), lr=2e-3)
    lambda_adv_loss, lambda_w_rec_loss = 1.0, 1.0
    adv_loss, w_rec_loss, stylecode = model(None, "G")  # called
    adv_loss = adv_loss.mean()
    w_rec_loss = w_rec_loss.mean()
    g_loss = adv_loss * lambda_adv_loss
    g_optim.zero_grad()
    e_optim.zero_grad()
    g_loss.backward()  # freed
    (w_rec_loss * lambda_w_rec_loss).backward()  # fails
    e_optim.step()
    g_optim.step()


if __name__ == "__main__":
    main()
