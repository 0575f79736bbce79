"""The GPT layer host_gating.py and small_model_step.py time: pre-LayerNorm, fused QKV with
biases, PyTorch SDPA causal attention, 4h tanh-GeLU MLP (Megatron's GPT), in plain PyTorch;
and the check both make before they start."""

import sys


def torch_on_gpu(script):
    """torch, when it imports and sees a GPU; else None after saying why (the caller exits 3,
    run.sh's "skipped")."""
    try:
        import torch
    except ImportError:
        print(f"{script}: skipped: torch is not installed", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{script}: skipped: torch sees no GPU", file=sys.stderr)
        return None
    return torch


def gpt_block_class(torch, hidden, heads, head_dim, ffn):
    """A torch.nn.Module class of one layer with these per-rank widths."""
    F = torch.nn.functional

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = torch.nn.LayerNorm(hidden)
            self.qkv = torch.nn.Linear(hidden, 3 * heads * head_dim)
            self.proj = torch.nn.Linear(heads * head_dim, hidden)
            self.ln2 = torch.nn.LayerNorm(hidden)
            self.fc1 = torch.nn.Linear(hidden, ffn)
            self.fc2 = torch.nn.Linear(ffn, hidden)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, heads, head_dim).permute(2, 0, 3, 1, 4)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, heads * head_dim))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    return Block
