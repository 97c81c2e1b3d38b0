"""The DDR model of nexp's ddr plugin written in PyTorch, trained the same way, to time it.

Same architecture (patch embedding, DDR blocks with gated attention + frequency-domain relative position
bias and a GFNet spectral mixer, learnable per-layer gates), same data path (random batch, random
translation, standardisation), same AdamW with two parameter groups and a cosine schedule. Prints one line:
images per second of the training loop.

    /usr/bin/python3 bench/ddr_train_speed.py --data DIR --train-size 2560 --epochs 3 ...
"""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_idx(path):
    with open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


def low_frequencies(m, count):
    freqs = [(u, v) for v in range(m) for u in range(-(m - 1), m) if v > 0 or u > 0]
    freqs.sort(key=lambda f: (max(abs(f[0]), abs(f[1])), f[0] ** 2 + f[1] ** 2, math.atan2(f[1], f[0])))
    return freqs[:count]


def relative_index(n):
    r = torch.arange(n)
    y, x = r.repeat_interleave(n), r.repeat(n)
    return ((y[:, None] - y[None, :] + n - 1) * (2 * n - 1) + (x[:, None] - x[None, :] + n - 1)).reshape(-1)


class FrequencyBias(nn.Module):
    def __init__(self, m, heads):
        super().__init__()
        freqs = low_frequencies(m, min(2 * (2 * m - 1), 2 * m * (m - 1)))
        k = len(freqs)
        self.coefficients = nn.Parameter(torch.randn(heads, 2 * k) * 0.02 / math.sqrt(k))
        r = torch.arange(-(m - 1), m, dtype=torch.float64)
        delta = torch.stack([r.repeat_interleave(2 * m - 1), r.repeat(2 * m - 1)], 1)
        theta = delta @ torch.tensor(freqs, dtype=torch.float64).t() * (2 * math.pi / (2 * m - 1))
        self.register_buffer("basis", torch.cat([theta.cos(), theta.sin()], 1).float())
        self.register_buffer("index", relative_index(m))
        self.tokens = m * m

    def forward(self):
        table = self.basis @ self.coefficients.t()
        return table[self.index].view(self.tokens, self.tokens, -1).permute(2, 0, 1)


class SpectralMixer(nn.Module):
    def __init__(self, n, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, n // 2 + 1, dim, 2) * 0.02)
        self.n = n

    def forward(self, x):
        b, t, c = x.shape
        spec = torch.fft.rfft2(x.reshape(b, self.n, self.n, c), dim=(1, 2), norm="ortho")
        y = torch.fft.irfft2(spec * torch.view_as_complex(self.weight), s=(self.n, self.n), dim=(1, 2), norm="ortho")
        return y.reshape(b, t, c)


class GatedAttention(nn.Module):
    def __init__(self, dim, heads, m):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.qkv, self.proj, self.gate = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.bias = FrequencyBias(m, heads)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        logits = q @ k.transpose(-2, -1) * self.scale + self.bias().unsqueeze(0)
        out = (logits.softmax(-1) @ v).transpose(1, 2).reshape(b, t, c)
        return self.proj(out * self.gate(x).sigmoid())


class DdrBlock(nn.Module):
    def __init__(self, dim, heads, m, mlp_ratio, gate_init):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        hidden = round(mlp_ratio * dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))
        self.attention, self.spectral = GatedAttention(dim, heads, m), SpectralMixer(m, dim)
        self.gate_attention = nn.Parameter(torch.full((1,), gate_init))
        self.gate_spectral = nn.Parameter(torch.full((1,), gate_init))
        self.gate_mlp = nn.Parameter(torch.full((1,), gate_init))

    def forward(self, x):
        h = self.norm1(x)
        y = x + self.gate_attention * self.attention(h) + self.gate_spectral * self.spectral(h)
        return y + self.gate_mlp * self.mlp(self.norm2(y))


class Ddr(nn.Module):
    def __init__(self, image, patch, dim, depth, heads, mlp_ratio, gate_init, classes=10):
        super().__init__()
        m = image // patch
        self.embed = nn.Conv2d(1, dim, patch, stride=patch)
        self.blocks = nn.ModuleList(DdrBlock(dim, heads, m, mlp_ratio, gate_init) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)
        for mod in self.modules():
            if isinstance(mod, nn.Linear):
                with torch.no_grad():
                    mod.weight.normal_(0, 0.02).clamp_(-0.04, 0.04)
                    mod.bias.zero_()

    def forward(self, images):
        x = self.embed(images).flatten(2).transpose(1, 2)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(1))


def augment(images, shift, gen):
    b, _, h, w = images.shape
    padded = F.pad(images, (shift, shift, shift, shift))
    off = torch.randint(0, 2 * shift + 1, (b, 2), generator=gen)
    out = torch.empty_like(images)
    for i in range(b):
        out[i] = padded[i, :, off[i, 0]: off[i, 0] + h, off[i, 1]: off[i, 1] + w]
    return out


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--data", required=True, help="folder with the Fashion-MNIST IDX files")
    a.add_argument("--train-size", type=int, default=2560)
    a.add_argument("--epochs", type=int, default=3)
    a.add_argument("--batch-size", type=int, default=128)
    a.add_argument("--dim", type=int, default=64)
    a.add_argument("--depth", type=int, default=4)
    a.add_argument("--heads", type=int, default=4)
    a.add_argument("--mlp-ratio", type=float, default=2.0)
    a.add_argument("--lr", type=float, default=2e-3)
    a.add_argument("--shift", type=int, default=2)
    a.add_argument("--threads", type=int, default=1)
    args = a.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    x = read_idx(os.path.join(args.data, "train-images-idx3-ubyte")).unsqueeze(1).float().div(255)
    y = read_idx(os.path.join(args.data, "train-labels-idx1-ubyte")).long()
    keep = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(0))[: args.train_size]
    x, y = x[keep], y[keep]
    mean, std = x.mean().item(), x.std().item()

    model = Ddr(28, 4, args.dim, args.depth, args.heads, args.mlp_ratio, 0.5)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "attention.bias." not in n]
    rest = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "attention.bias." not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": rest, "weight_decay": 0.0}], lr=args.lr)
    per_epoch = args.train_size // args.batch_size
    total, warmup = args.epochs * per_epoch, 50
    images, start = 0, time.perf_counter()
    for step in range(total):
        epoch, pos = divmod(step, per_epoch)
        if pos == 0:
            order = torch.randperm(args.train_size, generator=torch.Generator().manual_seed(epoch))
        idx = order[pos * args.batch_size: (pos + 1) * args.batch_size]
        xb = (augment(x[idx], args.shift, torch.Generator().manual_seed(step)) - mean) / std
        lr = args.lr * (step + 1) / warmup if step < warmup else \
            1e-5 + 0.5 * (args.lr - 1e-5) * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))
        for g in opt.param_groups:
            g["lr"] = lr
        model.train()
        loss = F.cross_entropy(model(xb), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()
        images += idx.numel()
    seconds = time.perf_counter() - start
    print(f"images_per_second {images / seconds:.2f} steps {total} seconds {seconds:.2f} torch {torch.__version__}")


if __name__ == "__main__":
    main()
