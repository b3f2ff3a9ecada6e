"""Small look-alikes of models readers bring, with their module names and structure.

Nothing is downloaded: each is built here at a tiny width, with the parameter names of
the real model (torchvision's ViT and MobileNetV3-small, Hugging Face's GPT-2), since
overview's blocks and retained_bytes' parameters come from those names. Each builder
returns (loss, model), seeded.
"""
from collections import OrderedDict

import torch
from torch import nn


# torchvision's vit_b_16: encoder.layers.encoder_layer_0 ... encoder_layer_11, each with
# ln_1, self_attention, ln_2 and mlp (a Sequential: mlp.0, mlp.3); a class token at the
# top level; heads.head.

class EncoderBlock(nn.Module):
    def __init__(self, width, heads, hidden):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.self_attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.dropout = nn.Dropout(0.0)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, hidden), nn.GELU(), nn.Dropout(0.0),
                                 nn.Linear(hidden, width), nn.Dropout(0.0))

    def forward(self, x):
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = x + self.dropout(y)
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, length, layers, width, heads, hidden):
        super().__init__()
        self.pos_embedding = nn.Parameter(torch.randn(1, length, width) * 0.02)
        self.dropout = nn.Dropout(0.0)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(width, heads, hidden)) for i in range(layers)))
        self.ln = nn.LayerNorm(width)

    def forward(self, x):
        return self.ln(self.layers(self.dropout(x + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(self, image=16, patch=4, width=16, layers=12):
        super().__init__()
        self.conv_proj = nn.Conv2d(3, width, patch, patch)
        self.class_token = nn.Parameter(torch.zeros(1, 1, width))
        self.encoder = Encoder((image // patch) ** 2 + 1, layers, width, 2, 2 * width)
        self.heads = nn.Sequential(OrderedDict(head=nn.Linear(width, 10)))

    def forward(self, x):
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.heads(self.encoder(x)[:, 0])


def vit_loss():
    torch.manual_seed(0)
    model = VisionTransformer()
    return model(torch.randn(2, 3, 16, 16)).logsumexp(1).mean(), model


# torchvision's mobilenet_v3_small: features.0 ... features.12, eleven distinct inverted
# residual blocks between a first and a last convolution, then classifier.0 and .3.
# Channels are divided by 8.

def conv_norm_act(c_in, c_out, kernel, stride=1, groups=1, act=nn.Hardswish):
    layers = [nn.Conv2d(c_in, c_out, kernel, stride, (kernel - 1) // 2, groups=groups,
                        bias=False), nn.BatchNorm2d(c_out)]
    return nn.Sequential(*layers, act()) if act is not None else nn.Sequential(*layers)


class SqueezeExcitation(nn.Module):
    def __init__(self, channels, squeezed):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1, self.fc2 = nn.Conv2d(channels, squeezed, 1), nn.Conv2d(squeezed, channels, 1)
        self.activation, self.scale_activation = nn.ReLU(), nn.Hardsigmoid()

    def forward(self, x):
        scale = self.fc2(self.activation(self.fc1(self.avgpool(x))))
        return self.scale_activation(scale) * x


class InvertedResidual(nn.Module):
    def __init__(self, c_in, kernel, expanded, c_out, squeeze, act, stride):
        super().__init__()
        self.use_res_connect = stride == 1 and c_in == c_out
        layers = [conv_norm_act(c_in, expanded, 1, act=act)] if expanded != c_in else []
        layers.append(conv_norm_act(expanded, expanded, kernel, stride, expanded, act))
        if squeeze:
            layers.append(SqueezeExcitation(expanded, max(expanded // 4, 1)))
        layers.append(conv_norm_act(expanded, c_out, 1, act=None))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return self.block(x) + x if self.use_res_connect else self.block(x)


# (in, kernel, expanded, out, squeeze-excitation, activation, stride), as torchvision's
MOBILENET_V3_SMALL = [
    (16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2),
    (24, 3, 88, 24, False, "RE", 1), (24, 5, 96, 40, True, "HS", 2),
    (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
    (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1),
    (48, 5, 288, 96, True, "HS", 2), (96, 5, 576, 96, True, "HS", 1),
    (96, 5, 576, 96, True, "HS", 1)]


class MobileNetV3Small(nn.Module):
    def __init__(self, shrink=8):
        super().__init__()
        def c(n):
            return max(n // shrink, 1)
        layers = [conv_norm_act(3, c(16), 3, 2)]
        for c_in, kernel, expanded, c_out, squeeze, act, stride in MOBILENET_V3_SMALL:
            layers.append(InvertedResidual(c(c_in), kernel, c(expanded), c(c_out), squeeze,
                                           nn.ReLU if act == "RE" else nn.Hardswish, stride))
        layers.append(conv_norm_act(c(96), c(576), 1))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(c(576), c(1024)), nn.Hardswish(),
                                        nn.Dropout(0.0), nn.Linear(c(1024), 10))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def mobilenet_loss():
    torch.manual_seed(0)
    model = MobileNetV3Small()
    return model(torch.randn(2, 3, 32, 32)).logsumexp(1).mean(), model


# Hugging Face's GPT2LMHeadModel: transformer.wte, .wpe, .h.0 ... .h.11 (ln_1, attn.c_attn,
# attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj: Conv1D layers), .ln_f; lm_head tied to wte.

class Conv1D(nn.Module):
    """GPT-2's linear layer: weight stored (in, out), applied with addmm."""

    def __init__(self, n_out, n_in):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_in, n_out) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        out = torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight)
        return out.view(*x.shape[:-1], -1)


class Attention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.c_attn, self.c_proj, self.heads = Conv1D(3 * width, width), Conv1D(width, width), heads

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2)
                   for t in self.c_attn(x).split(width, dim=2))
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(batch, length, width))


class MLP(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.c_fc, self.c_proj = Conv1D(4 * width, width), Conv1D(width, 4 * width)
        self.act = nn.GELU(approximate="tanh")

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(width), Attention(width, heads)
        self.ln_2, self.mlp = nn.LayerNorm(width), MLP(width)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, vocabulary, positions, width, layers, heads):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocabulary, width), nn.Embedding(positions, width)
        self.drop = nn.Dropout(0.0)
        self.h = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)

    def forward(self, ids):
        x = self.drop(self.wte(ids) + self.wpe(torch.arange(ids.shape[1])))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, vocabulary=2000, positions=64, width=32, layers=12, heads=2):
        super().__init__()
        self.transformer = GPT2Model(vocabulary, positions, width, layers, heads)
        self.lm_head = nn.Linear(width, vocabulary, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied, as GPT-2's are

    def forward(self, ids):
        return self.lm_head(self.transformer(ids))


def gpt2_loss(freeze_embeddings=True):
    """A next-token loss; the embeddings frozen (requires_grad=False), as when only the
    layers are fine-tuned."""
    torch.manual_seed(0)
    model = GPT2LMHeadModel()
    if freeze_embeddings:
        for embedding in (model.transformer.wte, model.transformer.wpe):
            embedding.weight.requires_grad_(False)
    ids = torch.randint(0, 2000, (2, 8))
    logits = model(ids)
    return nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten()), model
