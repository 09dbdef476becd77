"""A tiny Flux-shaped MMDiT trained with LoRA on the CPU, printing as kohya's sd-scripts do.

Double-stream blocks (text and image tokens with their own weights, one joint attention over both), then
single-stream blocks over the concatenated tokens; adaLN modulation from the timestep; every base weight frozen
(requires_grad=False), LoRA adapters on the attention projections the only trainable parameters. Before training it
"caches latents" (a frozen conv encoder over the dataset) under a tqdm-style bar, then waits for DIR/go; it trains
with kohya's bar (steps: ... avr_loss=...), writes the printed (step, avr_loss) pairs to DIR/steps.json, and waits
for DIR/finish before it exits, so a test can read what was watched while the run is still listed.

    python3 mmdit_lora.py --results-dir DIR [--steps 10] [--cache-items 6] [--oom-skip-step N]

With --oom-skip-step it prints, before that step, ai-toolkit's banner for a caught CUDA OOM (its words since
ostris/ai-toolkit@3b1f7b0, jobs/process/BaseSDTrainProcess.py) and goes on.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
from torch import nn
from torch.nn import functional as F

DIM, HEADS, TEXT_TOKENS, RANK = 32, 2, 8, 4


class LoRALinear(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base = base
        self.down = nn.Linear(base.in_features, RANK, bias=False)
        self.up = nn.Linear(RANK, base.out_features, bias=False)
        nn.init.zeros_(self.up.weight)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x))


def attention(q, k, v):
    b, n, _ = q.shape
    q, k, v = (t.view(b, n, HEADS, DIM // HEADS).transpose(1, 2) for t in (q, k, v))
    w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(DIM // HEADS), dim=-1)
    return (w @ v).transpose(1, 2).reshape(b, n, DIM)


class Modulation(nn.Module):
    def __init__(self, chunks):
        super().__init__()
        self.chunks = chunks
        self.lin = nn.Linear(DIM, chunks * DIM)

    def forward(self, vec):
        return self.lin(F.silu(vec)).unsqueeze(1).chunk(self.chunks, dim=-1)


class Stream(nn.Module):
    """One stream of a double-stream block: its own modulation, QKV, output projection and MLP."""

    def __init__(self):
        super().__init__()
        self.mod = Modulation(6)
        self.norm1 = nn.LayerNorm(DIM, elementwise_affine=False)
        self.norm2 = nn.LayerNorm(DIM, elementwise_affine=False)
        self.q, self.k, self.v, self.out = (nn.Linear(DIM, DIM) for _ in range(4))
        self.mlp = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))


class DoubleStreamBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.img, self.txt = Stream(), Stream()

    def forward(self, img, txt, vec):
        mods = [s.mod(vec) for s in (self.img, self.txt)]
        qkv = []
        for s, x, (sh, sc, _, _, _, _) in zip((self.img, self.txt), (img, txt), mods):
            h = s.norm1(x) * (1 + sc) + sh
            qkv.append((s.q(h), s.k(h), s.v(h)))
        joint = attention(*(torch.cat([qkv[1][i], qkv[0][i]], dim=1) for i in range(3)))
        attn = {"txt": joint[:, :txt.shape[1]], "img": joint[:, txt.shape[1]:]}
        outs = []
        for s, x, (_, _, g1, sh2, sc2, g2), a in zip((self.img, self.txt), (img, txt), mods, (attn["img"], attn["txt"])):
            x = x + g1 * s.out(a)
            outs.append(x + g2 * s.mlp(s.norm2(x) * (1 + sc2) + sh2))
        return outs[0], outs[1]


class SingleStreamBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.mod = Modulation(3)
        self.norm = nn.LayerNorm(DIM, elementwise_affine=False)
        self.q, self.k, self.v, self.out = (nn.Linear(DIM, DIM) for _ in range(4))
        self.mlp = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))

    def forward(self, x, vec):
        sh, sc, g = self.mod(vec)
        h = self.norm(x) * (1 + sc) + sh
        return x + g * (self.out(attention(self.q(h), self.k(h), self.v(h))) + self.mlp(h))


class MMDiT(nn.Module):
    def __init__(self, channels=4, patch=2):
        super().__init__()
        self.patch = patch
        self.img_in = nn.Linear(channels * patch * patch, DIM)
        self.txt_in = nn.Linear(DIM, DIM)
        self.time_in = nn.Sequential(nn.Linear(DIM, DIM), nn.SiLU(), nn.Linear(DIM, DIM))
        self.double_blocks = nn.ModuleList(DoubleStreamBlock() for _ in range(2))
        self.single_blocks = nn.ModuleList(SingleStreamBlock() for _ in range(2))
        self.final = nn.Linear(DIM, channels * patch * patch)

    def forward(self, latents, txt, t):
        b, c, h, w = latents.shape
        p = self.patch
        img = latents.reshape(b, c, h // p, p, w // p, p).permute(0, 2, 4, 1, 3, 5).reshape(b, -1, c * p * p)
        freqs = torch.exp(-math.log(1e4) * torch.arange(DIM // 2) / (DIM // 2))
        emb = torch.cat([torch.cos(t[:, None] * 1000 * freqs), torch.sin(t[:, None] * 1000 * freqs)], dim=-1)
        vec = self.time_in(emb)
        img, txt = self.img_in(img), self.txt_in(txt)
        for block in self.double_blocks:
            img, txt = block(img, txt, vec)
        x = torch.cat([txt, img], dim=1)
        for block in self.single_blocks:
            x = block(x, vec)
        out = self.final(x[:, txt.shape[1]:])
        return out.reshape(b, h // p, w // p, c, p, p).permute(0, 3, 1, 4, 2, 5).reshape(b, c, h, w)


def add_lora(model):
    for p in model.parameters():
        p.requires_grad = False
    blocks = [s for b in model.double_blocks for s in (b.img, b.txt)] + list(model.single_blocks)
    for s in blocks:
        for name in ("q", "k", "v", "out"):
            setattr(s, name, LoRALinear(getattr(s, name)))
    return [p for p in model.parameters() if p.requires_grad]


def bar(n, total, elapsed, postfix=""):
    filled = n * 10 // total
    rate = n / elapsed if elapsed > 0 else 0
    remaining = (total - n) / rate if rate > 0 else 0
    return (f"{100 * n // total:3d}%|{'█' * filled}{' ' * (10 - filled)}| {n}/{total} "
            f"[{int(elapsed) // 60:02d}:{int(elapsed) % 60:02d}<{int(remaining) // 60:02d}:{int(remaining) % 60:02d},"
            f" {rate:5.2f}it/s{postfix}]")


def wait_for(path, seconds=60):
    deadline = time.time() + seconds
    while not os.path.exists(path):
        if time.time() > deadline:
            sys.exit(f"{path} did not appear within {seconds} s")
        time.sleep(0.1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--results-dir", required=True)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--cache-items", type=int, default=6)
    parser.add_argument("--oom-skip-step", type=int, default=0)
    args = parser.parse_args()
    os.makedirs(args.results_dir, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)

    encoder = nn.Conv2d(3, 4, kernel_size=8, stride=8).requires_grad_(False)
    images = torch.randn(args.cache_items, 3, 64, 64)
    print("caching latents.", flush=True)
    latents, started = [], time.time()
    for i in range(args.cache_items):
        with torch.no_grad():
            latents.append(encoder(images[i:i + 1]))
        time.sleep(0.05)
        sys.stderr.write("\r" + bar(i + 1, args.cache_items, time.time() - started))
        sys.stderr.flush()
    sys.stderr.write("\n")
    latents = torch.cat(latents)
    wait_for(os.path.join(args.results_dir, "go"))

    model = MMDiT()
    params = add_lora(model)
    assert all(n.endswith((".down.weight", ".up.weight")) for n, p in model.named_parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    print(f"trainable params: {sum(p.numel() for p in params)}, frozen: {frozen}", flush=True)
    opt = torch.optim.AdamW(params, lr=1e-3)
    text = torch.randn(args.cache_items, TEXT_TOKENS, DIM)
    printed, total_loss, started = [], 0.0, time.time()
    sys.stderr.write(f"steps:   0%|          | 0/{args.steps} [00:00<?, ?it/s]")
    for step in range(1, args.steps + 1):
        if step == args.oom_skip_step:
            print("\n################################################\n"
                  "# OOM during training step, skipping batch 1/3 #\n"
                  "################################################\n", flush=True)
        i = (step - 1) % args.cache_items
        x0 = latents[i:i + 1]
        noise = torch.randn_like(x0)
        t = torch.rand(1)
        xt = (1 - t) * x0 + t * noise
        loss = F.mse_loss(model(xt, text[i:i + 1], t), noise - x0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total_loss += loss.item()
        avr = f"{total_loss / step:.3g}"
        printed.append({"step": step, "avr_loss": avr})
        sys.stderr.write("\rsteps: " + bar(step, args.steps, time.time() - started, f", avr_loss={avr}"))
        sys.stderr.flush()
        time.sleep(0.2)
    sys.stderr.write("\n")
    sys.stderr.flush()
    with open(os.path.join(args.results_dir, "steps.json.tmp"), "w") as f:
        json.dump(printed, f)
    os.rename(os.path.join(args.results_dir, "steps.json.tmp"), os.path.join(args.results_dir, "steps.json"))
    wait_for(os.path.join(args.results_dir, "finish"))
    print("model saved.", flush=True)


if __name__ == "__main__":
    main()
