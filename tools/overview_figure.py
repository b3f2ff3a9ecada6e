"""The README's picture of `overview`: a 12-layer transformer under two losses.

A model of the size readers bring (an input projection, a 12-layer
nn.TransformerEncoder, two heads: 933 backward nodes and leaves) after
`loss1.backward()`: the shared encoder and head 0 are freed, head 1 is not.
`tools/make_figures.py` saves it as figures/overview_transformer.dot, .svg and .png
beside the lessons' figures; tests/test_figures.py checks that it is up to date.
"""
import torch
from torch import nn

from autograd_lens import overview


class TwoHeadedTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 32)
        layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=12, enable_nested_tensor=False)
        self.heads = nn.ModuleList([nn.Linear(32, 1), nn.Linear(32, 1)])

    def forward(self, x):
        features = self.encoder(self.embed(x))
        return [head(features).pow(2).mean() for head in self.heads]


def overview_transformer():
    torch.manual_seed(0)
    model = TwoHeadedTransformer()
    loss1, loss2 = model(torch.randn(2, 10, 8))
    loss1.backward()  # frees what the encoder and head 0 saved; head 1 keeps its own
    return overview(loss1, loss2, params=dict(model.named_parameters(), loss1=loss1,
                                              loss2=loss2))


FIGURES = {"overview_transformer": overview_transformer}
