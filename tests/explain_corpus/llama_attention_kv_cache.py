"""Fine-tuning Llama's Attention module, whose self.cache_k / self.cache_v keep the previous batch's keys and values.

Source: https://github.com/meta-llama/llama-cookbook/issues/247
Thread: While fine-tuning, the user hit "Trying to backward through the graph a second time" on the second batch. They traced it to the inference KV cache in Attention: forward writes xk and xv into self.cache_k / self.cache_v in place and reads keys/values back from them, so the cache tensors carry the previous batch's graph into the next one. Their fix, posted in the issue, is to detach the caches at the start of forward (self.cache_k = self.cache_k.to(xq).detach()).
Cause: CARRIED
Fix: Detach the KV cache before writing into it each forward (self.cache_k = self.cache_k.to(xq).detach(), same for cache_v), so a batch's graph never reaches the previous batch.
Fix mentions: detach(), cache_k
Fix must not say: retain_graph=True
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim=16, n_heads=2, max_batch_size=4, max_seq_len=8):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.cache_k = torch.zeros(max_batch_size, max_seq_len, n_heads, self.head_dim)
        self.cache_v = torch.zeros(max_batch_size, max_seq_len, n_heads, self.head_dim)

    def forward(self, x, start_pos):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)  # made
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_heads, self.head_dim)
        self.cache_k = self.cache_k.to(xq)
        self.cache_v = self.cache_v.to(xq)
        self.cache_k[:bsz, start_pos: start_pos + seqlen] = xk
        self.cache_v[:bsz, start_pos: start_pos + seqlen] = xv
        keys = self.cache_k[:bsz, : start_pos + seqlen]
        values = self.cache_v[:bsz, : start_pos + seqlen]
        xq, keys, values = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


def main():
    torch.manual_seed(0)
    attn = Attention()
    head = nn.Linear(16, 10)
    optimizer = torch.optim.AdamW([*attn.parameters(), *head.parameters()], lr=1e-3)
    for batch in range(3):
        x = torch.randn(4, 8, 16)
        targets = torch.randint(0, 10, (4, 8))
        h = attn(x, start_pos=0)  # called
        loss = F.cross_entropy(head(h).view(-1, 10), targets.view(-1))
        optimizer.zero_grad()
        loss.backward()  # freed fails
        optimizer.step()


if __name__ == "__main__":
    main()
