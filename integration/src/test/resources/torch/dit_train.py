"""A small DiT-shaped model trained with PyTorch DDP (gloo, CPU), logging as DiT's train.py does.

Run by the integration tests under torchrun with 2 ranks:

    torchrun --nnodes 1 --rdzv_backend c10d --rdzv_endpoint localhost:PORT --rdzv_id ID --nproc_per_node 2 \
        --redirects 1 --tee 1 dit_train.py --results-dir DIR --scenario NAME

The model follows DiT (facebookresearch/DiT, models.py): patch embedding, timestep and label embedders, blocks
with adaLN-Zero modulation, a final layer unpatchifying to the input's shape; it is trained to predict the noise
added at a random diffusion step, on random "latents" served by a Dataset through DataLoader workers. The log
lines are DiT's own: its create_logger (rank 0 logs to stderr and to DIR/log.txt, the other ranks to nowhere) and
its messages, with "(step=...) Train Loss: ..., Train Steps/Sec: ..." every --log-every steps.

Scenarios (what goes wrong, and when):
  healthy    nothing; trains until --max-seconds
  nan        from step --fault-step on, the loss is NaN on every rank (a diverged run: it trains on)
  hang       at --fault-step rank 1 sleeps in host code for an hour; rank 0 blocks in the next all-reduce
  exception  at --fault-step rank 1 raises; rank 0 fails in the collective that rank 1 never joins
  sigkill    at --fault-step rank 1 is killed with SIGKILL (as the OOM killer does)
  slowdata   from --fault-step on, each sample takes --slow-sample-seconds to load in the DataLoader workers
Each scenario writes DIR/fault-<rank> with a wall-clock timestamp when its fault starts.

With --log-format pixart rank 0 logs PixArt-Sigma's step line instead of DiT's (train_scripts/train.py's format:
"Step/Epoch [...]:total_eta: ..., time_all:..., time_data:..., lr:..., loss:..., grad_norm:..."), with time_all the
mean wall time per step over the interval and time_data the mean time per step spent waiting for the DataLoader's
next batch, both measured as PixArt's script measures them.
"""
import argparse
import logging
import math
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


def modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


class TimestepEmbedder(nn.Module):
    def __init__(self, hidden_size, frequency_embedding_size=64):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(frequency_embedding_size, hidden_size), nn.SiLU(),
                                 nn.Linear(hidden_size, hidden_size))
        self.frequency_embedding_size = frequency_embedding_size

    @staticmethod
    def timestep_embedding(t, dim, max_period=10000):
        half = dim // 2
        freqs = torch.exp(-math.log(max_period) * torch.arange(0, half, dtype=torch.float32) / half)
        args = t[:, None].float() * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    def forward(self, t):
        return self.mlp(self.timestep_embedding(t, self.frequency_embedding_size))


class LabelEmbedder(nn.Module):
    def __init__(self, num_classes, hidden_size):
        super().__init__()
        self.embedding_table = nn.Embedding(num_classes, hidden_size)

    def forward(self, labels):
        return self.embedding_table(labels)


class DiTBlock(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.attn = nn.MultiheadAttention(hidden_size, num_heads, batch_first=True)
        self.norm2 = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(hidden_size, 4 * hidden_size), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * hidden_size, hidden_size))
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden_size, 6 * hidden_size))

    def forward(self, x, c):
        shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = self.adaLN_modulation(c).chunk(6, dim=1)
        h = modulate(self.norm1(x), shift_msa, scale_msa)
        x = x + gate_msa.unsqueeze(1) * self.attn(h, h, h, need_weights=False)[0]
        x = x + gate_mlp.unsqueeze(1) * self.mlp(modulate(self.norm2(x), shift_mlp, scale_mlp))
        return x


class FinalLayer(nn.Module):
    def __init__(self, hidden_size, patch_size, out_channels):
        super().__init__()
        self.norm_final = nn.LayerNorm(hidden_size, elementwise_affine=False, eps=1e-6)
        self.linear = nn.Linear(hidden_size, patch_size * patch_size * out_channels)
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(hidden_size, 2 * hidden_size))

    def forward(self, x, c):
        shift, scale = self.adaLN_modulation(c).chunk(2, dim=1)
        return self.linear(modulate(self.norm_final(x), shift, scale))


class DiT(nn.Module):
    def __init__(self, input_size=8, patch_size=2, in_channels=4, hidden_size=64, depth=2, num_heads=4,
                 num_classes=10):
        super().__init__()
        self.in_channels = in_channels
        self.patch_size = patch_size
        self.x_embedder = nn.Conv2d(in_channels, hidden_size, kernel_size=patch_size, stride=patch_size)
        self.t_embedder = TimestepEmbedder(hidden_size)
        self.y_embedder = LabelEmbedder(num_classes, hidden_size)
        num_patches = (input_size // patch_size) ** 2
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches, hidden_size), requires_grad=False)
        self.blocks = nn.ModuleList([DiTBlock(hidden_size, num_heads) for _ in range(depth)])
        self.final_layer = FinalLayer(hidden_size, patch_size, in_channels)

    def unpatchify(self, x):
        c, p = self.in_channels, self.patch_size
        h = w = int(x.shape[1] ** 0.5)
        x = x.reshape(x.shape[0], h, w, p, p, c)
        x = torch.einsum("nhwpqc->nchpwq", x)
        return x.reshape(x.shape[0], c, h * p, h * p)

    def forward(self, x, t, y):
        x = self.x_embedder(x).flatten(2).transpose(1, 2) + self.pos_embed
        c = self.t_embedder(t) + self.y_embedder(y)
        for block in self.blocks:
            x = block(x, c)
        return self.unpatchify(self.final_layer(x, c))


class RandomLatents(Dataset):
    """Latents and labels of a pretend image set; from --slow-from-index on, each one takes a while to load."""

    def __init__(self, size, slow_from_index, slow_seconds):
        self.size = size
        self.slow_from_index = slow_from_index
        self.slow_seconds = slow_seconds

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        if self.slow_from_index is not None and index >= self.slow_from_index:
            time.sleep(self.slow_seconds)
        g = torch.Generator().manual_seed(index)
        return torch.randn(4, 8, 8, generator=g), index % 10


def create_logger(logging_dir):
    """DiT's create_logger: rank 0 logs to stderr and log.txt, the others to nowhere."""
    if dist.get_rank() == 0:
        logging.basicConfig(
            level=logging.INFO,
            format="[\033[34m%(asctime)s\033[0m] %(message)s",
            datefmt="%Y-%m-%d %H:%M:%S",
            handlers=[logging.StreamHandler(), logging.FileHandler(f"{logging_dir}/log.txt")],
        )
        logger = logging.getLogger(__name__)
    else:
        logger = logging.getLogger(__name__)
        logger.addHandler(logging.NullHandler())
    return logger


def mark_fault(results_dir, rank, what):
    with open(os.path.join(results_dir, f"fault-{rank}"), "w") as f:
        f.write(f"{time.time()} {what}\n")


def main(args):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world = dist.get_world_size()
    torch.manual_seed(rank)
    torch.set_num_threads(1)
    os.makedirs(args.results_dir, exist_ok=True)
    logger = create_logger(args.results_dir)
    logger.info(f"Experiment directory created at {args.results_dir}")

    model = DDP(DiT())
    logger.info(f"DiT Parameters: {sum(p.numel() for p in model.parameters()):,}")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0)

    batch = args.batch_size
    slow_from = args.fault_step * batch * world if args.scenario == "slowdata" else None
    dataset = RandomLatents(1_000_000, slow_from, args.slow_sample_seconds)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=False, seed=0)
    loader = DataLoader(dataset, batch_size=batch, shuffle=False, sampler=sampler, num_workers=args.num_workers,
                        pin_memory=False, drop_last=True, persistent_workers=True)
    logger.info(f"Dataset contains {len(dataset):,} images (random latents)")

    betas = torch.linspace(1e-4, 0.02, 1000)
    alphas_cumprod = torch.cumprod(1 - betas, dim=0)
    model.train()
    train_steps = 0
    log_steps = 0
    running_loss = 0.0
    start_time = time.time()
    data_wait = 0.0  # seconds this interval waited for the loader's next batch (PixArt's time_data)
    steps_per_epoch = len(loader)
    waiting_since = time.time()
    deadline = time.time() + args.max_seconds
    stop = False
    logger.info(f"Training for {args.epochs} epochs...")
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        logger.info(f"Beginning epoch {epoch}...")
        for step_in_epoch, (x, y) in enumerate(loader):
            data_wait += time.time() - waiting_since
            if train_steps == args.fault_step and rank == 1:
                if args.scenario == "hang":
                    mark_fault(args.results_dir, rank, "sleeping in host code")
                    time.sleep(3600)
                elif args.scenario == "exception":
                    mark_fault(args.results_dir, rank, "raising")
                    raise ValueError(f"bad sample in batch {train_steps} on rank {rank}: shape {tuple(x.shape)}")
                elif args.scenario == "sigkill":
                    mark_fault(args.results_dir, rank, "SIGKILL")
                    os.kill(os.getpid(), signal.SIGKILL)
            if train_steps == args.fault_step and args.scenario in ("nan", "slowdata"):
                mark_fault(args.results_dir, rank, args.scenario)
            t = torch.randint(0, 1000, (x.shape[0],))
            noise = torch.randn_like(x)
            a = alphas_cumprod[t].view(-1, 1, 1, 1)
            x_t = a.sqrt() * x + (1 - a).sqrt() * noise
            loss = ((model(x_t, t, y) - noise) ** 2).mean()
            if args.scenario == "nan" and train_steps >= args.fault_step:
                loss = loss * float("nan")
            opt.zero_grad()
            loss.backward()
            opt.step()

            running_loss += loss.item()
            log_steps += 1
            train_steps += 1
            if train_steps % args.log_every == 0:
                end_time = time.time()
                steps_per_sec = log_steps / (end_time - start_time)
                # DiT's all-reduce of the loss, with this script's stop flag beside it: every rank stops at the
                # same step once any rank is past --max-seconds.
                reduced = torch.tensor([running_loss / log_steps, 1.0 if time.time() > deadline else 0.0])
                dist.all_reduce(reduced, op=dist.ReduceOp.SUM)
                avg_loss = reduced[0].item() / dist.get_world_size()
                stop = reduced[1].item() > 0
                if args.log_format == "pixart":
                    grad_norm = math.sqrt(sum(float(p.grad.pow(2).sum()) for p in model.parameters()
                                              if p.grad is not None))
                    logger.info(f"Step/Epoch [{train_steps}/{epoch + 1}][{step_in_epoch + 1}/{steps_per_epoch}]:"
                                f"total_eta: 0:00:00, epoch_eta:0:00:00, time_all:{1 / steps_per_sec:.3f}, "
                                f"time_data:{data_wait / log_steps:.3f}, lr:{1e-4:.3e}, loss:{avg_loss:.4f}, "
                                f"grad_norm:{grad_norm:.4f}")
                else:
                    logger.info(f"(step={train_steps:07d}) Train Loss: {avg_loss:.4f}, "
                                f"Train Steps/Sec: {steps_per_sec:.2f}")
                running_loss = 0
                log_steps = 0
                data_wait = 0.0
                start_time = time.time()
            if args.step_seconds > 0:
                time.sleep(args.step_seconds)
            waiting_since = time.time()
            if stop:
                break
        if stop:
            break
    logger.info("Done!")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--results-dir", required=True)
    parser.add_argument("--scenario", default="healthy",
                        choices=["healthy", "nan", "hang", "exception", "sigkill", "slowdata"])
    parser.add_argument("--fault-step", type=int, default=40)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--num-workers", type=int, default=1)
    parser.add_argument("--log-every", type=int, default=5)
    parser.add_argument("--step-seconds", type=float, default=0.05,
                        help="host time per step besides the model (keeps 2 shared cores usable)")
    parser.add_argument("--slow-sample-seconds", type=float, default=0.1)
    parser.add_argument("--max-seconds", type=float, default=600)
    parser.add_argument("--log-format", default="dit", choices=["dit", "pixart"])
    main(parser.parse_args())
