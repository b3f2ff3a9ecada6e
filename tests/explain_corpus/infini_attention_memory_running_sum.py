"""Infini-attention Gemma (Beomi/InfiniTransformer): the compressive memory and its norm term are running sums over segments, updated with grad enabled and passed from one segment's forward to the next, with one backward per segment.

Source: https://github.com/jlamprou/Infini-Attention/issues/3
Thread: Beomi (author of Beomi/InfiniTransformer) adapted jlamprou's segment-by-segment, gradient-accumulation training loop and got "Trying to backward through the graph a second time"; retain_graph=True made it run but used more memory, against the point of Infini-attention. jlamprou: pass the compressive memory out of and into the model, and detach M and z in _update_memory, "since there is no need to keep them on the backward. ... There is no need to retain the graph that way." Beomi: "I missed that point! (to detatch M and z)". His repo then removed retain_graph and returned self.memory.detach(), self.norm_term.detach() (commit 122a4df, "no need grad for memory and norm"). The memory M = M + sigma(K)^T V and z = z + sum sigma(K) made in segment 1 is read by segment 2, so segment 2's backward reaches into segment 1's graph, freed by its backward.
Cause: CARRIED
Fix: Detach the running memory and norm term when they are handed to the next segment (return self.memory.detach(), self.norm_term.detach(), or detach M and z in _update_memory), and drop retain_graph=True.
Fix mentions: memory, detach()
Fix must not say: retain_graph=True
"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, HIDDEN, HEADS, SEGMENT = 32, 16, 2, 8


class GemmaInfiniAttention(nn.Module):
    def __init__(self, hidden_size=HIDDEN, num_heads=HEADS, segment_size=SEGMENT):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.q_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.o_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.gate = nn.Parameter(torch.full((1, self.num_heads, 1, 1), 0.0))
        self.segment_size = segment_size

    def forward(self, hidden_states, memory=None, norm_term=None):
        self.memory = memory
        self.norm_term = norm_term

        total_len = hidden_states.size(1)
        segments = torch.tensor_split(
            hidden_states,
            list(range(self.segment_size, total_len, self.segment_size)),
            dim=1,
        )
        bsz, _, hidden_dim = hidden_states.size()
        final_output = torch.empty(bsz, total_len, hidden_dim, dtype=hidden_states.dtype)

        start_index = 0
        for segment in segments:
            query_states = self.q_proj(segment)
            key_states = self.k_proj(segment)
            value_states = self.v_proj(segment)  # made

            bsz, q_len, _ = segment.size()
            query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
            key_states = key_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
            value_states = value_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)

            # Memory retrieval and attention calculation per segment
            memory_output = self._retrieve_from_memory(query_states)
            # Update memory with current segment's key and value states
            self._update_memory(key_states, value_states)

            attn_output = F.scaled_dot_product_attention(query_states, key_states, value_states, is_causal=True)

            combined_output = (
                F.sigmoid(self.gate) * memory_output
                + (1 - F.sigmoid(self.gate)) * attn_output
            )
            combined_output = combined_output.transpose(1, 2).contiguous()
            combined_output = combined_output.view(bsz, q_len, self.hidden_size)
            segment_output = self.o_proj(combined_output)

            current_segment_size = segment.size(1)
            final_output[:, start_index:start_index + current_segment_size, :] = segment_output
            start_index += current_segment_size

        return final_output, None, None, self.memory, self.norm_term

    def _retrieve_from_memory(self, query_states):
        if self.memory is None or self.norm_term is None:
            return torch.zeros_like(query_states)
        query_states = F.elu(query_states) + 1  # ELU activation + 1 for stability
        memory_output = torch.matmul(query_states, self.memory)
        norm_term_broadcastable = torch.matmul(query_states, self.norm_term.transpose(-2, -1))
        memory_output = memory_output / norm_term_broadcastable
        return memory_output

    def _update_memory(self, key_states, value_states):
        key_states = F.elu(key_states) + 1  # Apply ELU activation

        if self.memory is not None:
            self.memory = self.memory + torch.matmul(key_states.transpose(-2, -1), value_states)
        else:
            self.memory = torch.matmul(key_states.transpose(-2, -1), value_states)

        if self.norm_term is not None:
            self.norm_term = self.norm_term + key_states.sum(dim=2, keepdim=True)
        else:
            self.norm_term = key_states.sum(dim=2, keepdim=True)


class GemmaDecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(HIDDEN)
        self.self_attn = GemmaInfiniAttention()
        self.post_attention_layernorm = nn.LayerNorm(HIDDEN)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, 2 * HIDDEN), nn.GELU(), nn.Linear(2 * HIDDEN, HIDDEN))

    def forward(self, hidden_states, memory=None, norm_term=None):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        _attended = self.self_attn(hidden_states=hidden_states, memory=memory, norm_term=norm_term)  # called
        hidden_states, self_attn_weights, present_key_value, memory, norm_term = _attended
        hidden_states = residual + hidden_states

        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states
        return hidden_states, memory, norm_term


class GemmaForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layer = GemmaDecoderLayer()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids, labels=None, memory=None, norm_term=None):
        hidden_states = self.embed_tokens(input_ids)
        hidden_states, memory, norm_term = self.layer(hidden_states, memory=memory, norm_term=norm_term)
        logits = self.lm_head(hidden_states)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels[:, 1:].reshape(-1))
        return SimpleNamespace(loss=loss, logits=logits, memory=memory, norm_term=norm_term)


def main():
    torch.manual_seed(0)
    model = GemmaForCausalLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    segment_length = SEGMENT
    batches = [{"input_ids": torch.randint(0, VOCAB, (2, 3 * SEGMENT))} for _ in range(2)]

    total_loss = 0
    for step, batch in enumerate(batches):
        batch["labels"] = batch["input_ids"].clone()
        total_segment_loss = 0
        # Segment the batch items into smaller chunks
        input_ids = torch.tensor_split(batch["input_ids"], list(range(segment_length, batch["input_ids"].shape[1], segment_length)), dim=1)
        labels = torch.tensor_split(batch["labels"], list(range(segment_length, batch["labels"].shape[1], segment_length)), dim=1)
        memory, norm_term = None, None
        for i in range(len(input_ids)):
            outputs = model(input_ids=input_ids[i], labels=labels[i], memory=memory, norm_term=norm_term)
            memory = outputs.memory
            norm_term = outputs.norm_term
            loss = outputs.loss
            loss.backward()  # freed fails
            total_loss += loss.detach().float()
            total_segment_loss += loss.detach().float()
        optimizer.step()
        optimizer.zero_grad()
        print(f"Step: {step}, Loss: {(total_segment_loss / len(input_ids)).item()}")


if __name__ == "__main__":
    main()
