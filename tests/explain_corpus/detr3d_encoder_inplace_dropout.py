"""3DETR transformer encoder layer: ReLU activation followed by an nn.Dropout built with inplace=True.

Source: https://github.com/facebookresearch/3detr/issues/55
Thread: A 90-epoch sanity-check run failed with "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [256, 8, 256]], which is output 0 of ReluBackward0, is at version 1; expected version 0". The reporter removed every inplace=True in the repo and the error went away, noting that the flags were all on Dropout layers rather than on the ReLU named in the message: the in-place dropout overwrites the ReLU output that ReLU saved for backward. Another user confirmed the fix.
Cause: IN_PLACE_IN_FORWARD
Fix: Build the encoder's dropout layers with inplace=False, so the dropout after the activation does not overwrite the ReLU output.
Fix mentions: inplace=False, Dropout
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn


class TransformerEncoderLayer(nn.Module):
    def __init__(self, d_model=16, nhead=2, dim_feedforward=32, dropout=0.1, dropout_inplace=True):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout, inplace=dropout_inplace)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout, inplace=dropout_inplace)
        self.dropout2 = nn.Dropout(dropout, inplace=dropout_inplace)
        self.activation = nn.ReLU()

    def forward(self, src, pos=None):
        q = k = src if pos is None else src + pos
        src2 = self.self_attn(q, k, value=src)[0]
        src = src + self.dropout1(src2)
        src = self.norm1(src)
        src2 = self.linear2(self.dropout(self.activation(self.linear1(src))))  # made changed
        src = src + self.dropout2(src2)
        src = self.norm2(src)
        return src


def main():
    torch.manual_seed(0)
    layer = TransformerEncoderLayer()
    head = nn.Linear(16, 3)
    optimizer = torch.optim.AdamW([*layer.parameters(), *head.parameters()], lr=5e-4)
    points, target = torch.randn(8, 2, 16), torch.randn(8, 2, 3)
    enc = layer(points)  # called
    loss = nn.functional.mse_loss(head(enc), target)
    optimizer.zero_grad()
    loss.backward()  # fails
    optimizer.step()


if __name__ == "__main__":
    main()
