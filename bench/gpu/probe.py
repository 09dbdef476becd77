"""Real PyTorch training steps of the estimator's catalog models, measured: the ground truth bench/gpu brings back.

Each model is built from the catalog's own architecture description (`trainwatch models --json`, the one source the
estimator reads), with random weights and synthetic latents and text features: nothing is downloaded. Each row of
the sweep (bench/gpu/sweep.json: model, resolution, batch, precision, weights, attention, checkpointing, optimizer,
EMA, kernels) is trained for a few warm-up and timed steps; what it measured is appended at once to

  rows.tsv    rows in the shape of the estimator's published-measurement table
              (estimator/src/test/resources/measurements/published.tsv), marked as measured by this kit
  rows.jsonl  the same with every figure: max_memory_allocated, max_memory_reserved, the process's memory per NVML,
              every timed step, the built model's parameter count, and the `trainwatch estimate` flags of the row

so a run cut off at any moment still returns every row it finished. The step lines go to --log in PixArt-Sigma's
format (train_scripts/train.py), which `trainwatch agent --log` reads.

  probe.py --catalog models.json --sweep sweep.json --out DIR [--log FILE] [--budget-s S] [--tiny] [--only IDS]

--tiny runs the same code at tiny sizes (2 blocks of width 64, a few tokens): the CPU check in CI. Rows of a tiny run
are of kind `unpriced` (not the catalog's model). Runs on PyTorch 1.13 (Debian's, the CPU check) and 2.x (the GPU
machine); what a version cannot do (torch.compile, SDPA kernels, an optimizer) is a skipped row with its reason.
"""
import argparse
import datetime
import gc
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

import sweep as sweep_rows

TSV_COLUMNS = ["id", "kind", "model", "gpu", "gpus", "res", "frames", "batch", "precision", "weights", "optimizer",
               "ckpt", "ema", "features", "zero", "attention", "vae_micro", "config", "kernels", "measured", "unit", "Q",
               "source", "mapping"]
MIB = 1 << 20


class ProbeError(Exception):
    """A bad input: said in one line, without a stack trace."""


# ----------------------------------------------------------------------------------------------------- building blocks

def modulate(x, shift, scale):
    return x * (1 + scale) + shift


class Attention(nn.Module):
    """Multi-head attention: softmax (math: the score matrix materialised; flash: PyTorch's fused SDPA kernels) or
    ReLU linear attention (Sana). `upcast` computes it in fp32 under autocast (PixArt/Sana fp32_attention)."""

    def __init__(self, dim, heads, kv_dim=None, kind="softmax", kernel="math", upcast=False, qk_norm=False,
                 projections=True):
        super().__init__()
        self.heads, self.kind, self.kernel, self.upcast = heads, kind, kernel, upcast
        if projections:  # Flux's single-stream block projects q, k, v with its own fused layer
            self.q = nn.Linear(dim, dim)
            self.kv = nn.Linear(kv_dim or dim, 2 * dim)
            self.proj = nn.Linear(dim, dim)
        self.q_norm = nn.LayerNorm(dim // heads) if qk_norm else nn.Identity()
        self.k_norm = nn.LayerNorm(dim // heads) if qk_norm else nn.Identity()

    def split(self, t):
        b, n, d = t.shape
        return t.view(b, n, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, context=None):
        q = self.q_norm(self.split(self.q(x)))
        k, v = self.kv(x if context is None else context).chunk(2, dim=-1)
        k, v = self.k_norm(self.split(k)), self.split(v)
        return self.proj(self.attend(q, k, v).transpose(1, 2).reshape(x.shape))

    def attend(self, q, k, v):
        if not self.upcast:
            return self.scores(q, k, v)
        dtype = v.dtype
        with torch.autocast(q.device.type, enabled=False):
            return self.scores(q.float(), k.float(), v.float()).to(dtype)

    def scores(self, q, k, v):
        if self.kind == "linear":
            q, k = F.relu(q), F.relu(k)
            return (q @ (k.transpose(-2, -1) @ v)) / (q @ k.sum(dim=-2, keepdim=True).transpose(-2, -1) + 1e-6)
        if self.kernel == "flash":
            return F.scaled_dot_product_attention(q, k, v)
        return ((q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)).softmax(dim=-1) @ v


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class MixFfn(nn.Module):
    """Sana's GLUMBConv: 1x1 conv to 2F, depthwise 3x3, GLU gate to F, 1x1 conv back."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.inverted = nn.Conv2d(dim, 2 * hidden, 1)
        self.depth = nn.Conv2d(2 * hidden, 2 * hidden, 3, padding=1, groups=2 * hidden)
        self.point = nn.Conv2d(hidden, dim, 1, bias=False)
        self.grid = None

    def forward(self, x):
        b, n, d = x.shape
        h, w = self.grid
        y = x.transpose(1, 2).reshape(b, d, h, w)
        y, gate = self.depth(F.silu(self.inverted(y))).chunk(2, dim=1)
        return self.point(y * F.silu(gate)).flatten(2).transpose(1, 2)


class AdaLnBlock(nn.Module):
    """One transformer block with adaLN modulation: DiT (per-block adaLN-Zero from the condition), PixArt/Sana/STDiT
    (adaLN-single: a shared projection of the timestep plus a per-block table), with optional cross-attention."""

    def __init__(self, c, a, ffn, cross, attention_kind="softmax", single=True):
        super().__init__()
        h = c["hidden"]
        self.single = single
        self.norm1 = nn.LayerNorm(h, elementwise_affine=False, eps=1e-6)
        self.attn = Attention(h, c["heads"], kind=attention_kind, kernel=a["attention"], upcast=a["upcast"])
        self.cross = Attention(h, c["heads"], kernel=a["attention"], upcast=a["upcast"]) if cross else None
        self.norm2 = nn.LayerNorm(h, elementwise_affine=False, eps=1e-6)
        self.ffn = ffn
        if single:
            self.table = nn.Parameter(torch.zeros(6, h))
        else:
            self.modulation = nn.Linear(h, 6 * h)

    def forward(self, x, cond, text):
        mods = (self.table[None] + cond.view(cond.shape[0], 6, -1)) if self.single \
            else self.modulation(F.silu(cond)).view(cond.shape[0], 6, -1)
        s1, sc1, g1, s2, sc2, g2 = (m.unsqueeze(1) for m in mods.unbind(1))
        x = x + g1 * self.attn(modulate(self.norm1(x), s1, sc1))
        if self.cross is not None:
            x = x + self.cross(x, text)
        return x + g2 * self.ffn(modulate(self.norm2(x), s2, sc2))


class VideoBlock(nn.Module):
    """Open-Sora's STDiT block: self-attention within each frame (spatial) or across frames at each position
    (temporal), cross-attention of the whole sequence to the caption, MLP; adaLN-single. STDiT 1.0 has spatial and
    temporal attention in one block (`both`); STDiT3 alternates spatial and temporal blocks."""

    def __init__(self, c, a, mode):
        super().__init__()
        h = c["hidden"]
        self.mode, self.frames = mode, None
        self.norm1 = nn.LayerNorm(h, elementwise_affine=False, eps=1e-6)
        self.attn = Attention(h, c["heads"], kernel=a["attention"])
        self.temporal = Attention(h, c["heads"], kernel=a["attention"]) if mode == "both" else None
        self.norm_t = nn.LayerNorm(h, elementwise_affine=False, eps=1e-6)
        self.cross = Attention(h, c["heads"], kernel=a["attention"])
        self.norm2 = nn.LayerNorm(h, elementwise_affine=False, eps=1e-6)
        self.mlp = Mlp(h, int(h * c["mlp_ratio"]))
        self.table = nn.Parameter(torch.zeros(6, h))

    def mix(self, attn, x, axis):
        b, n, d = x.shape
        t = self.frames
        s = n // t
        if axis == "spatial":
            return attn(x.reshape(b * t, s, d)).view(b, n, d)
        y = x.view(b, t, s, d).transpose(1, 2).reshape(b * s, t, d)
        return attn(y).view(b, s, t, d).transpose(1, 2).reshape(b, n, d)

    def forward(self, x, cond, text):
        mods = self.table[None] + cond.view(cond.shape[0], 6, -1)
        s1, sc1, g1, s2, sc2, g2 = (m.unsqueeze(1) for m in mods.unbind(1))
        axis = "temporal" if self.mode == "temporal" else "spatial"
        x = x + g1 * self.mix(self.attn, modulate(self.norm1(x), s1, sc1), axis)
        if self.temporal is not None:
            x = x + self.mix(self.temporal, self.norm_t(x), "temporal")
        x = x + self.cross(x, text)
        return x + g2 * self.mlp(modulate(self.norm2(x), s2, sc2))


class DoubleStreamBlock(nn.Module):
    """Flux's double-stream block: image and text each with their own weights, one joint attention."""

    def __init__(self, c, a):
        super().__init__()
        h, heads = c["hidden"], c["heads"]
        self.heads, self.kernel = heads, a["attention"]
        self.img_mod, self.txt_mod = nn.Linear(h, 6 * h), nn.Linear(h, 6 * h)
        self.img_attn, self.txt_attn = (Attention(h, heads, kernel=a["attention"], qk_norm=True) for _ in range(2))
        hidden = int(h * c["mlp_ratio"])
        self.img_mlp, self.txt_mlp = Mlp(h, hidden), Mlp(h, hidden)
        self.norm = nn.LayerNorm(h, elementwise_affine=False, eps=1e-6)

    def qkv(self, attn, x):
        q = attn.q_norm(attn.split(attn.q(x)))
        k, v = attn.kv(x).chunk(2, dim=-1)
        return q, attn.k_norm(attn.split(k)), attn.split(v)

    def forward(self, img, txt, vec):
        im = [m.unsqueeze(1) for m in self.img_mod(F.silu(vec)).chunk(6, dim=-1)]
        tm = [m.unsqueeze(1) for m in self.txt_mod(F.silu(vec)).chunk(6, dim=-1)]
        qi, ki, vi = self.qkv(self.img_attn, modulate(self.norm(img), im[0], im[1]))
        qt, kt, vt = self.qkv(self.txt_attn, modulate(self.norm(txt), tm[0], tm[1]))
        out = self.img_attn.attend(torch.cat([qt, qi], 2), torch.cat([kt, ki], 2), torch.cat([vt, vi], 2))
        out = out.transpose(1, 2).reshape(img.shape[0], -1, img.shape[-1])
        t_out, i_out = out[:, :txt.shape[1]], out[:, txt.shape[1]:]
        img = img + im[2] * self.img_attn.proj(i_out)
        img = img + im[5] * self.img_mlp(modulate(self.norm(img), im[3], im[4]))
        txt = txt + tm[2] * self.txt_attn.proj(t_out)
        txt = txt + tm[5] * self.txt_mlp(modulate(self.norm(txt), tm[3], tm[4]))
        return img, txt


class SingleStreamBlock(nn.Module):
    """Flux's single-stream block: attention and MLP in parallel from one fused input projection."""

    def __init__(self, c, a):
        super().__init__()
        h = c["hidden"]
        self.hidden, self.mlp_hidden = h, int(h * c["mlp_ratio"])
        self.attn = Attention(h, c["heads"], kernel=a["attention"], qk_norm=True, projections=False)
        self.mod = nn.Linear(h, 3 * h)
        self.linear1 = nn.Linear(h, 3 * h + self.mlp_hidden)
        self.linear2 = nn.Linear(h + self.mlp_hidden, h)
        self.norm = nn.LayerNorm(h, elementwise_affine=False, eps=1e-6)

    def forward(self, x, vec):
        shift, scale, gate = (m.unsqueeze(1) for m in self.mod(F.silu(vec)).chunk(3, dim=-1))
        qkv, mlp = self.linear1(modulate(self.norm(x), shift, scale)).split([3 * self.hidden, self.mlp_hidden], -1)
        q, k, v = (self.attn.split(t) for t in qkv.chunk(3, dim=-1))
        out = self.attn.attend(self.attn.q_norm(q), self.attn.k_norm(k), v).transpose(1, 2).reshape(x.shape)
        return x + gate * self.linear2(torch.cat([out, F.gelu(mlp, approximate="tanh")], -1))


class LoraLinear(nn.Module):
    """A frozen linear layer plus a trainable rank-r update (B A), B zero at start as in LoRA."""

    def __init__(self, base, rank):
        super().__init__()
        self.base = base
        self.down = nn.Linear(base.in_features, rank, bias=False)
        self.up = nn.Linear(rank, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.up(self.down(x))


def timestep_embedding(t, dim=256):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class Net(nn.Module):
    """A catalog model, assembled from its architecture description `c` (see `trainwatch models --json`)."""

    def __init__(self, c, a, geometry):
        super().__init__()
        h, arch = c["hidden"], c["architecture"]
        self.c, self.arch, self.geometry, self.checkpointing = c, arch, geometry, a["ckpt"]
        self.x_embed = nn.Linear(geometry["patch_dim"], h)
        self.t_embed = nn.Sequential(nn.Linear(256, h), nn.SiLU(), nn.Linear(h, h))
        out_dim = geometry["patch_dim"] * (2 if c["learn_sigma"] else 1)
        if arch == "dit":
            self.y_embed = nn.Embedding(c["num_classes"] + 1, h)
        elif arch == "mmdit":
            self.txt_in = nn.Linear(c["caption_channels"], h)
            self.vector_in = nn.Sequential(nn.Linear(c["vector_channels"], h), nn.SiLU(), nn.Linear(h, h))
        else:
            self.caption = nn.Sequential(nn.Linear(c["caption_channels"], h), nn.GELU(approximate="tanh"),
                                         nn.Linear(h, h))
            self.t_block = nn.Sequential(nn.SiLU(), nn.Linear(h, 6 * h))
        self.blocks = nn.ModuleList(self.make_blocks(c, a, geometry))
        self.singles = nn.ModuleList(SingleStreamBlock(c, a) for _ in range(c["single_depth"] if arch == "mmdit" else 0))
        self.final_norm = nn.LayerNorm(h, elementwise_affine=False, eps=1e-6)
        self.final_mod = nn.Linear(h, 2 * h)
        self.final = nn.Linear(h, out_dim)

    @staticmethod
    def make_blocks(c, a, geometry):
        h, arch = c["hidden"], c["architecture"]
        mlp = lambda: Mlp(h, int(h * c["mlp_ratio"]))  # noqa: E731
        if arch == "dit":
            return [AdaLnBlock(c, a, mlp(), cross=False, single=False) for _ in range(c["depth"])]
        if arch == "pixart":
            return [AdaLnBlock(c, a, mlp(), cross=True) for _ in range(c["depth"])]
        if arch == "sana":
            blocks = [AdaLnBlock(c, a, MixFfn(h, c["ffn_hidden"]), cross=True, attention_kind="linear")
                      for _ in range(c["depth"])]
            for b in blocks:
                b.ffn.grid = geometry["grid"]
            return blocks
        if arch in ("stdit", "stdit3"):
            modes = ["both"] if arch == "stdit" else ["spatial", "temporal"]
            blocks = [VideoBlock(c, a, m) for _ in range(c["depth"]) for m in modes]
            for b in blocks:
                b.frames = geometry["frames"]
            return blocks
        if arch == "mmdit":
            return [DoubleStreamBlock(c, a) for _ in range(c["depth"])]
        raise ProbeError(f"architecture {arch!r} of {c['id']} is not one the probe builds")

    def run(self, block, *args):
        if self.checkpointing and self.training:
            return checkpoint(block, *args, use_reentrant=False)
        return block(*args)

    def forward(self, x, t, y, text, vec):
        x = self.x_embed(x)
        temb = self.t_embed(timestep_embedding(t).to(x.dtype))
        if self.arch == "mmdit":
            vec = temb + self.vector_in(vec)
            txt = self.txt_in(text)
            for block in self.blocks:
                x, txt = self.run(block, x, txt, vec)
            joint = torch.cat([txt, x], 1)
            for block in self.singles:
                joint = self.run(block, joint, vec)
            x, cond = joint[:, txt.shape[1]:], vec
        else:
            if self.arch == "dit":
                cond, ctx = temb + self.y_embed(y), None
            else:
                cond, ctx = self.t_block(temb), self.caption(text)
            for block in self.blocks:
                x = self.run(block, x, cond, ctx)
            cond = temb if self.arch != "dit" else cond
        shift, scale = self.final_mod(F.silu(cond)).unsqueeze(1).chunk(2, dim=-1)
        return self.final(modulate(self.final_norm(x), shift, scale))


# ------------------------------------------------------------------------------------------------------ sizes and rows

def tiny_architecture(c):
    """The same architecture at tiny width and depth: the CPU check runs every code path in seconds."""
    t = dict(c)
    t.update(depth=min(c["depth"], 2), single_depth=min(c["single_depth"], 2), hidden=64, heads=4,
             ffn_hidden=160 if c["ffn_hidden"] else 0, caption_channels=32 if c["caption_channels"] else 0,
             vector_channels=16 if c["vector_channels"] else 0, text_tokens=8 if c["text_tokens"] else 0,
             num_classes=min(c["num_classes"], 10))
    return t


def geometry_of(c, row, tiny):
    """Latent shape and token counts of a row: resolution / VAE downsampling / patch, frames / temporal downsampling."""
    res = 8 * c["latent_downsample"] if tiny else row["res"]
    side = res // c["latent_downsample"]
    frames = 1
    if c["video"]:
        raw = 5 if tiny else row["frames"]
        td = max(c["temporal_downsample"], 1)
        frames = (raw - 1) // td + 1 if td > 1 else raw
    grid = (side // c["patch"], side // c["patch"])
    patch_t = max(c["patch_t"], 1)
    return {"res": res, "frames": frames, "grid": grid, "tokens": frames // patch_t * grid[0] * grid[1],
            "patch_dim": c["latent_channels"] * c["patch"] * c["patch"] * patch_t}


def gpu_id(device_name, gpus):
    """The catalog id of a device name as NVML and CUDA give it ("NVIDIA H100 80GB HBM3" -> h100-sxm), or the name."""
    for g in gpus:
        if device_name in g.get("nvml_names", []) or device_name == g.get("id"):
            return g["id"]
    return device_name


def load_json(path, what):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ProbeError(f"cannot read the {what} {path}: {e}") from None


# ------------------------------------------------------------------------------------------------------ one row, timed

class Skip(Exception):
    """A row this machine or PyTorch version cannot run; the reason is written instead of figures."""


class Device:
    """Where the rows run: the CUDA device (with NVML for the process's memory when nvidia-ml-py is there) or the CPU."""

    def __init__(self, tiny):
        self.cuda = torch.cuda.is_available()
        if not self.cuda and not tiny:
            raise ProbeError("no CUDA device here: --tiny runs the same sweep at tiny sizes on the CPU")
        self.torch = torch.device("cuda" if self.cuda else "cpu")
        self.name = torch.cuda.get_device_name(0) if self.cuda else "CPU"
        self.nvml, self.driver = None, "-"
        self.catalog_id = self.name
        if self.cuda:
            try:
                import pynvml
                pynvml.nvmlInit()
                visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
                handle = pynvml.nvmlDeviceGetHandleByIndex(int(visible)) if visible.isdigit() \
                    else pynvml.nvmlDeviceGetHandleByUUID(visible)
                self.nvml = (pynvml, handle)
                self.driver = pynvml.nvmlSystemGetDriverVersion()
                self.driver = self.driver.decode() if isinstance(self.driver, bytes) else self.driver
            except Exception as e:  # nvidia-ml-py absent or NVML unusable: the rows still carry PyTorch's figures
                print(f"probe: no NVML process memory ({type(e).__name__}: {e})", file=sys.stderr)

    def process_bytes(self):
        """This process's memory on the GPU as NVML reports it (what nvidia-smi shows), or None."""
        if self.nvml is None:
            return None
        pynvml, handle = self.nvml
        try:
            for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
                if p.pid == os.getpid():
                    return p.usedGpuMemory
        except Exception:
            return None
        return None

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def reset(self):
        gc.collect()
        if self.cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()


HALF = {"fp16": torch.float16, "bf16": torch.bfloat16}


def runnable(row, dev, tiny):
    """The row as this machine runs it; a tiny run without SDPA (PyTorch 1.x) takes the math kernel instead, so the
    CPU check still builds and trains every architecture. Raises Skip for what cannot run here at all."""
    if row["kernels"] == "compiled" and not hasattr(torch, "compile"):
        raise Skip(f"torch.compile needs PyTorch 2 (this is {torch.__version__})")
    if row["precision"] == "fp16" and not dev.cuda:
        raise Skip("fp16 autocast needs CUDA")
    ran = dict(row)
    if tiny:
        ran["batch"] = min(row["batch"], 2)
    if row["attention"] == "flash" and not hasattr(F, "scaled_dot_product_attention"):
        if not tiny:
            raise Skip(f"fused attention (SDPA) needs PyTorch 2 (this is {torch.__version__})")
        ran["attention"] = "math"
        ran["note"] = f"math attention in place of SDPA (PyTorch {torch.__version__} has none)"
    return ran


def make_optimizer(name, params):
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, weight_decay=0.0)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-4)
    if name == "adafactor" and hasattr(torch.optim, "Adafactor"):
        return torch.optim.Adafactor(params, lr=1e-4)
    if name == "adamw8bit":
        try:
            import bitsandbytes
        except ImportError:
            raise Skip("adamw8bit needs bitsandbytes, which is not installed") from None
        return bitsandbytes.optim.AdamW8bit(params, lr=1e-4)
    raise Skip(f"optimizer {name} is not in this PyTorch {torch.__version__} (the kit downloads nothing)")


def weights_dtype(row):
    """The dtype the model's own parameters are made in: half for half weights (with or without fp32 master copies
    in the optimizer) and for a LoRA row's frozen base, fp32 otherwise."""
    half = HALF.get(row["precision"])
    if row.get("lora_rank"):
        return HALF.get(row.get("base_weights", "bf16"), torch.bfloat16)
    return half if half is not None and row["weights"] in ("mixed", "pure") else torch.float32


def construct(c, a, geometry, dev, dtype):
    """The model, its parameters made and initialised in `dtype` where they live: on PyTorch 2 directly on the GPU
    (a 12B model in fp32 on the host first would take 48 GB of its memory and minutes)."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        if hasattr(dev.torch, "__enter__"):
            with dev.torch:
                return Net(c, a, geometry)
        return Net(c, a, geometry).to(dev.torch)
    finally:
        torch.set_default_dtype(previous)


def build_model(entry, row, args, dev):
    c = tiny_architecture(entry) if args.tiny else entry
    geometry = geometry_of(c, row, args.tiny)
    a = {"attention": row["attention"], "ckpt": row["ckpt"],
         "upcast": bool(c["attention_upcast"]) and HALF.get(row["precision"]) is not None}
    torch.manual_seed(0)
    model = construct(c, a, geometry, dev, weights_dtype(row))
    if row.get("lora_rank"):
        model.requires_grad_(False)
        for attn in [m for m in model.modules() if isinstance(m, Attention)]:
            for name in [n for n in ("q", "kv", "proj") if hasattr(attn, n)]:
                setattr(attn, name, LoraLinear(getattr(attn, name), row["lora_rank"]).to(dev.torch))
    return model, c, geometry


def make_batch(c, geometry, row, dev, dtype):
    b, g = row["batch"], torch.Generator(device="cpu").manual_seed(1)
    rand = lambda *shape: torch.randn(*shape, generator=g).to(dev.torch, dtype)  # noqa: E731
    out_dim = geometry["patch_dim"] * (2 if c["learn_sigma"] else 1)
    return {"x": rand(b, geometry["tokens"], geometry["patch_dim"]),
            "t": torch.randint(0, 1000, (b,), generator=g).to(dev.torch),
            "y": torch.randint(0, max(c["num_classes"], 1), (b,), generator=g).to(dev.torch),
            "text": rand(b, max(c["text_tokens"], 1), max(c["caption_channels"], 1)),
            "vec": rand(b, max(c["vector_channels"], 1)),
            "target": rand(b, geometry["tokens"], out_dim)}


class Trainer:
    """One row's training step: autocast or half weights (with fp32 master weights for `mixed`), the optimizer,
    EMA of every parameter as DiT keeps it, a loss scaler for fp16 over fp32 weights."""

    def __init__(self, model, row, dev):
        self.model, self.row, self.dev = model, row, dev
        half = HALF.get(row["precision"])
        self.autocast = half if half is not None and (row["weights"] == "fp32" or row.get("lora_rank")) else None
        params = [p for p in model.parameters() if p.requires_grad]
        self.pairs = None
        if row["weights"] == "mixed" and half is not None and not row.get("lora_rank"):
            self.pairs = [(p, p.detach().float().clone().requires_grad_()) for p in params]
            params = [m for _, m in self.pairs]
        self.optimizer = make_optimizer(row["optimizer"], params)
        self.ema = [p.detach().float().clone() for p in model.parameters()] if row["ema"] else None
        self.scaler = None
        if dev.cuda and row["precision"] == "fp16" and self.autocast:
            self.scaler = torch.amp.GradScaler("cuda") if hasattr(torch.amp, "GradScaler") \
                else torch.cuda.amp.GradScaler()
        self.forward = torch.compile(model) if row["kernels"] == "compiled" else model
        self.input_dtype = torch.float32 if self.autocast is not None else next(model.parameters()).dtype
        if dev.cuda:
            torch.backends.cuda.matmul.allow_tf32 = row["precision"] != "fp32"
            torch.backends.cudnn.allow_tf32 = row["precision"] != "fp32"

    def step(self, batch):
        with torch.autocast(self.dev.torch.type, dtype=self.autocast or torch.bfloat16,
                            enabled=self.autocast is not None):
            out = self.forward(batch["x"], batch["t"], batch["y"], batch["text"], batch["vec"])
            loss = F.mse_loss(out.float(), batch["target"].float())
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            if self.pairs is not None:
                for p, m in self.pairs:
                    m.grad = p.grad.float() if p.grad is not None else None
                    p.grad = None
            self.optimizer.step()
            if self.pairs is not None:
                with torch.no_grad():
                    for p, m in self.pairs:
                        p.copy_(m)
        self.optimizer.zero_grad(set_to_none=True)
        if self.ema is not None:
            # DiT's update_ema, parameter by parameter: a half parameter is promoted one at a time, never the whole
            # model at once (that would be a second fp32 copy of it at the peak)
            with torch.no_grad():
                for e, p in zip(self.ema, self.model.parameters()):
                    e.mul_(0.9999).add_(p.detach(), alpha=1 - 0.9999)
        return loss.item()


def is_oom(e):
    return isinstance(e, RuntimeError) and "out of memory" in str(e).lower()


class Sweep:
    """The rows in order, each appended to rows.tsv and rows.jsonl as soon as it is measured; step lines to the log."""

    def __init__(self, args, dev, catalog):
        self.args, self.dev, self.catalog = args, dev, catalog
        self.deadline = time.monotonic() + args.budget_s
        self.global_step = 0
        os.makedirs(args.out, exist_ok=True)
        self.tsv_path = os.path.join(args.out, "rows.tsv")
        self.jsonl_path = os.path.join(args.out, "rows.jsonl")
        self.log = open(args.log, "a", buffering=1, encoding="utf-8") if args.log else None
        today = datetime.date.today().isoformat()
        self.source = (f"measured by this kit (bench/gpu/probe.py) on {dev.name} {today}, driver {dev.driver}, "
                       f"torch {torch.__version__}" + (", tiny sizes" if args.tiny else ""))
        if not os.path.exists(self.tsv_path):
            with open(self.tsv_path, "w", encoding="utf-8") as f:
                f.write(f"# {self.source}\n# columns as estimator/src/test/resources/measurements/published.tsv\n")
                f.write("\t".join(TSV_COLUMNS) + "\n")

    def append(self, path, text):
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    def say(self, line):
        stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
        if self.log:
            self.log.write(f"{stamp} - INFO - {line}\n")
        print(line, flush=True)

    def run(self, rows):
        for row in rows:
            if time.monotonic() >= self.deadline:
                self.say(f"probe: budget of {self.args.budget_s:.0f} s spent; {row['id']} and the rows after it not run")
                break
            result = self.measure(row)
            self.write(result.get("ran", row), result)

    def measure(self, row):
        entry = self.catalog.get(row["model"])
        if entry is None:
            raise ProbeError(f"row {row['id']}: model {row['model']!r} is not in the catalog")
        self.dev.reset()
        steps_before = self.global_step
        result = {"id": row["id"], "row": row, "gpu": self.dev.name, "estimate_args": sweep_rows.estimate_args(row, entry["video"]),
                  "tiny": self.args.tiny, "catalog_params": entry.get("params"), "started": time.time()}
        try:
            ran = runnable(row, self.dev, self.args.tiny)
            result["ran"] = ran
            result.update(self.train(ran, entry))
        except Skip as e:
            result["skipped"] = str(e)
        except RuntimeError as e:
            if not is_oom(e):
                raise
            result["fits"] = False
            result["error"] = str(e).splitlines()[0][:300]
        finally:
            if hasattr(torch, "_dynamo"):
                torch._dynamo.reset()
            self.dev.reset()
        result["ended"] = time.time()
        result["steps_logged"] = self.global_step - steps_before
        return result

    def train(self, row, entry):
        args = self.args
        model, c, geometry = build_model(entry, row, args, self.dev)
        trainer = Trainer(model, row, self.dev)
        batch = make_batch(c, geometry, row, self.dev, trainer.input_dtype)
        self.dev.reset()  # what building left in PyTorch's cache is not the training's: peaks count from here
        warmup = args.warmup + (args.compile_warmup if row["kernels"] == "compiled" else 0)
        times = []
        for i in range(warmup + args.steps):
            if time.monotonic() >= self.deadline:
                raise Skip(f"cut off by the budget after {i} of {warmup + args.steps} steps")
            self.dev.sync()
            start = time.perf_counter()
            loss = trainer.step(batch)
            self.dev.sync()
            elapsed = time.perf_counter() - start
            if i >= warmup:
                times.append(elapsed)
            self.global_step += 1
            self.say(f"Step/Epoch [{self.global_step}/1][{i + 1}/{warmup + args.steps}]:total_eta: 0:00:00, "
                     f"epoch_eta:0:00:00, time_all:{elapsed:.3f}, time_data:0.000, lr:1.000e-04, loss:{loss:.4f}")
        figures = {"fits": True, "warmup_steps": warmup, "step_times_s": times,
                   "step_median_s": statistics.median(times), "params": sum(p.numel() for p in model.parameters()),
                   "trainable_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
                   "tokens": geometry["tokens"], "res": geometry["res"], "latent_frames": geometry["frames"]}
        if self.dev.cuda:
            figures["max_memory_allocated_bytes"] = torch.cuda.max_memory_allocated()
            figures["max_memory_reserved_bytes"] = torch.cuda.max_memory_reserved()
            figures["nvml_process_bytes"] = self.dev.process_bytes()
        return figures

    def write(self, row, result):
        self.append(self.jsonl_path, json.dumps(result) + "\n")
        if "skipped" in result:
            self.say(f"probe: {row['id']} skipped: {result['skipped']}")
            return
        lines = [self.tsv_line(row, suffix, kind, value, unit, mapping)
                 for suffix, kind, value, unit, mapping in self.measured(row, result)]
        self.append(self.tsv_path, "".join(lines))
        self.say(f"probe: {row['id']} measured: " + "; ".join(
            f"{kind} {value} {unit}" for _, kind, value, unit, _ in self.measured(row, result)))

    def measured(self, row, r):
        """(suffix, kind, value, unit, mapping) of each table row a measurement gives."""
        tiny = self.args.tiny
        if not r.get("fits"):
            return [("f", "unpriced" if tiny else "fits", "no", "yes/no", r.get("error", ""))]
        built = f"{r['params']:,} parameters built ({r['trainable_params']:,} trainable; catalog {r['catalog_params']:,})"
        out = [("s", "unpriced" if tiny else "step", f"{r['step_median_s']:.4f}", "s",
                f"median of {len(r['step_times_s'])} timed steps after {r['warmup_steps']} warm-up; {built}; "
                f"{row.get('note', row.get('why', ''))}")]
        if self.dev.cuda:
            alloc, reserved = r["max_memory_allocated_bytes"], r["max_memory_reserved_bytes"]
            nvml = r.get("nvml_process_bytes")
            value = nvml if nvml is not None else reserved
            out.append(("m", "unpriced" if tiny else "memory", f"{value / MIB:.0f}", "MiB",
                        ("NVML process memory" if nvml is not None else "max_memory_reserved (no NVML)")
                        + f"; max_memory_allocated {alloc / MIB:.0f} MiB, max_memory_reserved {reserved / MIB:.0f} MiB"))
        return out

    def tsv_line(self, row, suffix, kind, value, unit, mapping):
        model = row["model"] + (" (tiny)" if self.args.tiny else "")
        cells = [f"K{row['id']}{suffix}", kind, model, self.dev.catalog_id, "1", str(row["res"]),
                 str(row.get("frames", "-")) if "frames" in row else "-", str(row["batch"]), row["precision"],
                 row["weights"], row["optimizer"], "yes" if row["ckpt"] else "no", "yes" if row["ema"] else "no",
                 "precomputed", "0", row["attention"], "-", "-", row["kernels"], value, unit, "A", self.source,
                 mapping.replace("\t", " ")]
        return "\t".join(cells) + "\n"


def parse_args(argv):
    p = argparse.ArgumentParser(description="Measure real training steps of the catalog's models (bench/gpu).")
    p.add_argument("--catalog", required=True, help="`trainwatch models --json` output")
    p.add_argument("--gpus", help="`trainwatch gpus --json`: rows name the GPU by its catalog id (NVML's name otherwise)")
    p.add_argument("--sweep", required=True, help="the rows to measure, in order (bench/gpu/sweep.json)")
    p.add_argument("--out", required=True, help="directory for rows.tsv and rows.jsonl (appended)")
    p.add_argument("--log", help="file for the step lines (PixArt's format, read by `trainwatch agent --log`)")
    p.add_argument("--budget-s", type=float, default=420, help="no row is started or continued after this")
    p.add_argument("--tiny", action="store_true", help="tiny sizes: the same code on the CPU in seconds")
    p.add_argument("--only", help="comma-separated row ids to run (default: all, in order)")
    p.add_argument("--warmup", type=int, help=f"warm-up steps per row (default {sweep_rows.WARMUP_STEPS}; --tiny 1)")
    p.add_argument("--compile-warmup", type=int, default=sweep_rows.COMPILE_WARMUP_STEPS,
                   help="more warm-up steps of a torch.compile row")
    p.add_argument("--steps", type=int, help=f"timed steps per row (default {sweep_rows.TIMED_STEPS}; --tiny 3)")
    args = p.parse_args(argv)
    args.warmup = args.warmup if args.warmup is not None else (1 if args.tiny else sweep_rows.WARMUP_STEPS)
    args.steps = args.steps if args.steps is not None else (3 if args.tiny else sweep_rows.TIMED_STEPS)
    if args.warmup < 0 or args.steps < 1 or args.budget_s <= 0:
        raise ProbeError("--warmup must be >= 0, --steps >= 1 and --budget-s > 0")
    return args


def main(argv):
    args = parse_args(argv)
    catalog = {m["id"]: m for m in load_json(args.catalog, "catalog")}
    rows = load_json(args.sweep, "sweep")
    rows = rows["rows"] if isinstance(rows, dict) else rows
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {r["id"] for r in rows}
        if unknown:
            raise ProbeError(f"--only: no row {', '.join(sorted(unknown))} in {args.sweep}")
        rows = [r for r in rows if r["id"] in wanted]
    if args.tiny:
        torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    dev = Device(args.tiny)
    if args.gpus:
        dev.catalog_id = gpu_id(dev.name, load_json(args.gpus, "GPU catalog"))
    sweep_run = Sweep(args, dev, catalog)
    sweep_run.say(f"probe: {len(rows)} rows on {dev.name}, torch {torch.__version__}, budget {args.budget_s:.0f} s, "
                  f"pid {os.getpid()}")
    sweep_run.run(rows)
    sweep_run.say("probe: done")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except ProbeError as e:
        print(f"probe: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
