"""ViT-VQGAN ViTDecoder (enhancing-transformers) that adds its position embedding into the incoming token tensor in place; two decoders share one quantized input.

Source: https://github.com/thuanz123/enhancing-transformers/issues/11
Thread: The reporter found `token += self.de_pos_embedding` at the start of ViTDecoder.forward and showed that decoding the same quant with two decoders (rec_a = decoder_a(quant); rec_b = decoder_b(quant)) raises the in-place modification error at backward: the second decoder's += overwrites quant, which the first decoder's transformer had already saved. They suggested `token = token + self.de_pos_embedding`, and the maintainer applied the change.
Cause: IN_PLACE_IN_FORWARD
Fix: Add the position embedding out of place in ViTDecoder.forward: token = token + self.de_pos_embedding.
Fix mentions: token = token + self.de_pos_embedding
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ViTDecoder(nn.Module):
    def __init__(self, num_patches=4, dim=8, mlp_dim=16, out_dim=12):
        super().__init__()
        self.transformer = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, mlp_dim), nn.GELU(), nn.Linear(mlp_dim, dim))
        self.de_pos_embedding = nn.Parameter(torch.randn(1, num_patches, dim))
        self.to_pixel = nn.Linear(dim, out_dim)

    def forward(self, token: torch.FloatTensor) -> torch.FloatTensor:
        token += self.de_pos_embedding  # changed
        x = self.transformer(token)  # made
        return self.to_pixel(x)


def main():
    torch.manual_seed(0)
    encoder = nn.Linear(12, 8)
    decoder_a, decoder_b = ViTDecoder(), ViTDecoder()
    params = [*encoder.parameters(), *decoder_a.parameters(), *decoder_b.parameters()]
    optimizer = torch.optim.Adam(params, lr=1e-4)
    patches_a, patches_b = torch.randn(2, 4, 12), torch.randn(2, 4, 12)
    quant = encoder(patches_a)
    rec_a = decoder_a(quant)  # called
    rec_b = decoder_b(quant)
    loss = F.mse_loss(rec_a, patches_a) + F.mse_loss(rec_b, patches_b)
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()


if __name__ == "__main__":
    main()
