"""Hallo stage-1 training with gradient_accumulation_steps = 2: the reference-attention bank is cleared only on optimizer steps, so the second micro-batch reads the first one's stored reference features.

Source: https://github.com/fudan-generative-vision/hallo/issues/211
Thread: A user asked why `self.bank.clear()` is commented out in the "read" branch of mutual_self_attention.py and the banks are cleared only inside `if accelerator.sync_gradients:` in train_stage1.py: with gradient accumulation the bank keeps growing, so the second forward pass reads the first micro-batch's hidden states (the reference UNet's features, written with their graph), the third reads the first two, and so on. The maintainers replied that they only tested gradient accumulation = 1; the user confirmed that with gradient accumulation > 1 training fails, and that the clear has to happen before each iteration.
Cause: CARRIED
Fix: Clear the reference banks (reference_control_reader.clear(), reference_control_writer.clear()) at every micro-step, before the next forward pass, not only when accelerator.sync_gradients is true; the stored features must keep their graph within a micro-step, since that is how the reference UNet is trained.
Fix mentions: clear
Fix must not say: retain_graph=True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def torch_dfs(model: torch.nn.Module):
    result = [model]
    for child in model.children():
        result += torch_dfs(child)
    return result


class BasicTransformerBlock(nn.Module):
    def __init__(self, dim=16, cross_dim=8):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn1 = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.attn2 = nn.MultiheadAttention(dim, 2, kdim=cross_dim, vdim=cross_dim, batch_first=True)
        self.norm3 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, hidden_states, encoder_hidden_states=None):
        norm_hidden_states = self.norm1(hidden_states)
        hidden_states = self.attn1(norm_hidden_states, norm_hidden_states, norm_hidden_states)[0] + hidden_states
        norm_hidden_states = self.norm2(hidden_states)
        hidden_states = self.attn2(norm_hidden_states, encoder_hidden_states, encoder_hidden_states)[0] + hidden_states
        return self.ff(self.norm3(hidden_states)) + hidden_states


class TinyUNet(nn.Module):
    def __init__(self, channels=4, dim=16, n_blocks=2):
        super().__init__()
        self.conv_in = nn.Linear(channels, dim)
        self.blocks = nn.ModuleList([BasicTransformerBlock(dim) for _ in range(n_blocks)])
        self.conv_out = nn.Linear(dim, channels)

    def forward(self, latents, timesteps, encoder_hidden_states):
        hidden_states = self.conv_in(latents) + timesteps.float().view(-1, 1, 1) / 1000
        for block in self.blocks:
            hidden_states = block(hidden_states, encoder_hidden_states=encoder_hidden_states)  # called
        return self.conv_out(hidden_states)


class ReferenceAttentionControl:
    def __init__(self, unet, mode="write"):
        self.unet = unet
        self.register_reference_hooks(mode)

    def register_reference_hooks(self, mode):
        MODE = mode

        def hacked_basic_transformer_inner_forward(self, hidden_states, encoder_hidden_states=None):
            norm_hidden_states = self.norm1(hidden_states)  # made
            if MODE == "write":
                self.bank.append(norm_hidden_states.clone())  # stored
                attn_output = self.attn1(norm_hidden_states, norm_hidden_states, norm_hidden_states)[0]
            if MODE == "read":
                modify_norm_hidden_states = torch.cat([norm_hidden_states] + self.bank, dim=1)
                attn_output = self.attn1(norm_hidden_states, modify_norm_hidden_states,
                                         modify_norm_hidden_states)[0]
                # self.bank.clear()
            hidden_states = attn_output + hidden_states
            norm_hidden_states = self.norm2(hidden_states)
            hidden_states = self.attn2(norm_hidden_states, encoder_hidden_states, encoder_hidden_states)[0] + hidden_states
            return self.ff(self.norm3(hidden_states)) + hidden_states

        attn_modules = [module for module in torch_dfs(self.unet) if isinstance(module, BasicTransformerBlock)]
        for module in attn_modules:
            module._original_inner_forward = module.forward
            module.forward = hacked_basic_transformer_inner_forward.__get__(module, BasicTransformerBlock)
            module.bank = []

    def _attn_modules(self, unet):
        return [module for module in torch_dfs(unet) if isinstance(module, BasicTransformerBlock)]

    def update(self, writer, dtype=torch.float32):
        for r, w in zip(self._attn_modules(self.unet), self._attn_modules(writer.unet)):
            r.bank = [v.clone().to(dtype) for v in w.bank]

    def clear(self):
        for r in self._attn_modules(self.unet):
            r.bank.clear()


class Net(nn.Module):
    def __init__(self, reference_unet, denoising_unet, reference_control_writer, reference_control_reader,
                 imageproj):
        super().__init__()
        self.reference_unet = reference_unet
        self.denoising_unet = denoising_unet
        self.reference_control_writer = reference_control_writer
        self.reference_control_reader = reference_control_reader
        self.imageproj = imageproj

    def forward(self, noisy_latents, timesteps, ref_image_latents, face_emb, uncond_fwd=False):
        face_emb = self.imageproj(face_emb)
        if not uncond_fwd:
            ref_timesteps = torch.zeros_like(timesteps)
            self.reference_unet(ref_image_latents, ref_timesteps, encoder_hidden_states=face_emb)
            self.reference_control_reader.update(self.reference_control_writer)
        model_pred = self.denoising_unet(noisy_latents, timesteps, encoder_hidden_states=face_emb)
        return model_pred


def main():
    torch.manual_seed(0)
    gradient_accumulation_steps = 2
    reference_unet, denoising_unet = TinyUNet(), TinyUNet()
    imageproj = nn.Sequential(nn.Linear(12, 4 * 8), nn.Unflatten(1, (4, 8)))
    reference_control_writer = ReferenceAttentionControl(reference_unet, mode="write")
    reference_control_reader = ReferenceAttentionControl(denoising_unet, mode="read")
    net = Net(reference_unet, denoising_unet, reference_control_writer, reference_control_reader, imageproj)
    trainable_params = list(filter(lambda p: p.requires_grad, net.parameters()))
    optimizer = torch.optim.AdamW(trainable_params, lr=1e-5)
    for step in range(4):
        sync_gradients = (step + 1) % gradient_accumulation_steps == 0
        latents = torch.randn(2, 6, 4)
        ref_image_latents = torch.randn(2, 6, 4)
        face_emb = torch.randn(2, 12)
        noise = torch.randn_like(latents)
        timesteps = torch.randint(0, 1000, (2,))
        noisy_latents = latents + noise * timesteps.view(-1, 1, 1) / 1000
        model_pred = net(noisy_latents, timesteps, ref_image_latents, face_emb, False)
        loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
        # Backpropagate
        (loss / gradient_accumulation_steps).backward()  # freed fails
        if sync_gradients:
            torch.nn.utils.clip_grad_norm_(trainable_params, 1.0)
            optimizer.step()
            optimizer.zero_grad()
            reference_control_reader.clear()
            reference_control_writer.clear()


if __name__ == "__main__":
    main()
