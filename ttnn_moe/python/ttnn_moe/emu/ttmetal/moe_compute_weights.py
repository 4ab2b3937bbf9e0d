"""The weight layout of moe_compute's matmul ring (tt-metal 0.81.1): host forms of
ttnn.experimental.prepare_w0_w1_tensor_for_moe_compute and prepare_w2_tensor_for_moe_compute, and their placement
in DRAM as the ring's dm0.cpp reads them.

The geometry is the kernels' (moe_ring_common.h): the ring has n cores (12 on a Wormhole, one per DRAM bank); the
intermediate dim's Nt tiles are dealt out by a Bresenham rhythm (shard_tiles) and so are the hidden dim's Ht output
tiles of W2 (w2_shard_tiles). Weights stream in blocks of two DRAM transactions of tiles_per_txn tiles (14; 20 for
one Qwen shape), consumed as rows of 4 tiles:
- W0/W1: ring core c stores its gate/up columns (stored_cols: its own, or a uniform stride padded with zero
  columns) as block-columns of two columns, each row [W0 k a, W1 k a, W0 k a+1, W1 k a+1] (block_h K rows per
  block), an odd last column as a half block-column of rows [W0 k a, W1 k a, W0 k+1 a, W1 k+1 a]. Per (layer,
  expert) the cores' slices lie back to back and that stream is cut into one equal piece per DRAM bank.
- W2: ring core c stores, per all-to-all iteration i, the rows of its output tiles 4 i .. 4 i + 3 (its slice of
  the hidden dim, zero past it) with the K rows in the order the ring delivers the intermediate slices: its own
  columns first, then those of core c - 1, c - 2, ... Each core's blocks lie in its own bank.
Bias rows are not described (has_bias is refused).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np
import torch

from ttnn_moe.emu import types as emu_types
from ttnn_moe.emu.pages import to_pages

TILE = 32
BLOCK_W = 4  # tiles per stored row
TXNS_PER_BLOCK = 2
DEFAULT_TILES_PER_TXN = 14
ALT_TILES_PER_TXN = 20
W2_HALF_ITER_W = 2


def shard_tiles(n_tiles: int, core: int, n_cores: int) -> int:
    """Tiles ring core `core` owns of `n_tiles` (the kernels' shard_tiles: the remainder spread evenly)."""
    n_big = n_tiles % n_cores
    return n_tiles // n_cores + (1 if n_big and (core * n_big) % n_cores < n_big else 0)


def w2_shard_tiles(ht: int, core: int, nt: int, n_cores: int) -> int:
    """W2 output tiles of ring core `core`: the complement of the W0/W1 rhythm where the remainders add up to the ring,
    else shard_tiles."""
    n_big_nt, n_big_ht = nt % n_cores, ht % n_cores
    if n_big_nt + n_big_ht == n_cores:
        big_nt = n_big_nt > 0 and (core * n_big_nt) % n_cores < n_big_nt
        return ht // n_cores + (0 if big_nt else 1)
    return shard_tiles(ht, core, n_cores)


def _div_up(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class RingGeometry:
    ht: int  # hidden tiles
    nt: int  # intermediate tiles
    cores: int = 12

    @property
    def tiles_per_txn(self) -> int:
        return ALT_TILES_PER_TXN if (self.ht, self.nt, self.cores) == (80, 20, 8) else DEFAULT_TILES_PER_TXN

    @property
    def tiles_per_block(self) -> int:
        return TXNS_PER_BLOCK * self.tiles_per_txn

    @property
    def block_h(self) -> int:
        return self.tiles_per_block // BLOCK_W

    @property
    def half_block_h(self) -> int:
        return self.tiles_per_block // 2

    def col_offset(self, core: int) -> int:
        return sum(shard_tiles(self.nt, c, self.cores) for c in range(core))

    def _even_stride(self) -> int:
        widest = _div_up(self.nt, self.cores)
        return max(widest + widest % 2, BLOCK_W)

    @property
    def compact(self) -> bool:
        return _div_up(self.nt, self.cores) < self._even_stride()

    def stored_cols(self, core: int) -> int:
        return shard_tiles(self.nt, core, self.cores) if self.compact else self._even_stride()

    @property
    def blocks_per_col(self) -> int:
        return _div_up(self.ht, self.block_h)

    @property
    def blocks_per_half_col(self) -> int:
        return _div_up(self.ht, self.half_block_h)

    def w0_w1_core_blocks(self, core: int) -> int:
        cols = self.stored_cols(core)
        return (cols // 2) * self.blocks_per_col + (cols % 2) * self.blocks_per_half_col

    def w0_w1_bank_blocks(self, banks: int) -> int:
        return _div_up(sum(self.w0_w1_core_blocks(c) for c in range(self.cores)), banks)

    def w2_offset(self, core: int) -> int:
        return sum(w2_shard_tiles(self.ht, c, self.nt, self.cores) for c in range(core))

    @property
    def a2a_iters(self) -> int:
        return _div_up(_div_up(self.ht, self.cores), BLOCK_W)

    @property
    def w2_last_iter_half(self) -> bool:
        last = _div_up(self.ht, self.cores) % BLOCK_W
        return self.tiles_per_txn != DEFAULT_TILES_PER_TXN and 0 < last <= W2_HALF_ITER_W

    def w2_iter_blocks(self, half: bool) -> int:
        return _div_up(self.nt, self.half_block_h if half else self.block_h)

    @property
    def w2_blocks_per_expert(self) -> int:
        half = int(self.w2_last_iter_half)
        return (self.a2a_iters - half) * self.w2_iter_blocks(False) + half * self.w2_iter_blocks(True)

    def w2_k_order(self, core: int) -> list[int]:
        """The intermediate tiles in the order core `core` multiplies them: its own, then core - 1's, ..."""
        order = []
        for step in range(self.cores):
            src = (core - step) % self.cores
            start = self.col_offset(src)
            order += range(start, start + shard_tiles(self.nt, src, self.cores))
        return order


def _tiles(m: torch.Tensor) -> torch.Tensor:
    """[..., R, C] -> [..., R/32, C/32, 32, 32]."""
    *lead, r, c = m.shape
    return m.reshape(*lead, r // TILE, TILE, c // TILE, TILE).transpose(-3, -2)


def _blocks_of_rows(rows: list[list[torch.Tensor | None]], block_rows: int, like: torch.Tensor) -> torch.Tensor:
    """Stored rows of 4 tiles (None: a zero tile) -> `[blocks, block_rows * 4, 32, 32]`, zero rows padding the last."""
    zero = torch.zeros_like(like)
    rows = rows + [[None] * BLOCK_W] * ((-len(rows)) % block_rows)
    flat = [t if t is not None else zero for row in rows for t in row]
    return torch.stack(flat).reshape(len(rows) // block_rows, block_rows * BLOCK_W, TILE, TILE)


def w0_w1_core_blocks(w0_t: torch.Tensor, w1_t: torch.Tensor, geom: RingGeometry, core: int) -> torch.Tensor:
    """Ring core `core`'s W0/W1 blocks of one (layer, expert): `[blocks, tiles_per_block, 32, 32]`.
    w0_t, w1_t: `[Ht, Nt, 32, 32]` tiles."""
    own = range(geom.col_offset(core), geom.col_offset(core) + shard_tiles(geom.nt, core, geom.cores))
    cols = [geom.col_offset(core) + j for j in range(geom.stored_cols(core))]

    def tile(w, k, col):
        return w[k, col] if k < geom.ht and col in own else None

    blocks = []
    for pair in range(len(cols) // 2):
        a, b = cols[2 * pair], cols[2 * pair + 1]
        rows = [[tile(w0_t, k, a), tile(w1_t, k, a), tile(w0_t, k, b), tile(w1_t, k, b)] for k in range(geom.ht)]
        blocks.append(_blocks_of_rows(rows, geom.block_h, w0_t[0, 0]))
    if len(cols) % 2:
        a = cols[-1]
        k_rows = range(0, geom.blocks_per_half_col * geom.half_block_h, 2)
        rows = [[tile(w0_t, k, a), tile(w1_t, k, a), tile(w0_t, k + 1, a), tile(w1_t, k + 1, a)] for k in k_rows]
        blocks.append(_blocks_of_rows(rows, geom.block_h, w0_t[0, 0]))
    return torch.cat(blocks) if blocks else torch.zeros(0, geom.tiles_per_block, TILE, TILE, dtype=w0_t.dtype)


def w0_w1_expert_blocks(w0_t: torch.Tensor, w1_t: torch.Tensor, geom: RingGeometry, banks: int) -> torch.Tensor:
    """One (layer, expert)'s W0/W1 bank pieces `[banks, bank_blocks, tiles_per_block, 32, 32]`: the cores' blocks
    back to back, zero blocks padding the stream to equal pieces. w0_t, w1_t: `[Ht, Nt, 32, 32]` tiles."""
    per_bank = geom.w0_w1_bank_blocks(banks)
    stream = torch.cat([w0_w1_core_blocks(w0_t, w1_t, geom, c) for c in range(geom.cores)])
    padded = torch.zeros(banks * per_bank, *stream.shape[1:], dtype=stream.dtype)
    padded[: len(stream)] = stream
    return padded.reshape(banks, per_bank, *stream.shape[1:])


def prepare_w0_w1(w0: torch.Tensor, w1: torch.Tensor, cores: int = 12, banks: int = 12) -> torch.Tensor:
    """w0, w1: `[L, E, K, N]` -> the bank pieces `[banks, L, E, bank_blocks, tiles_per_block, 32, 32]`."""
    layers, experts, k, n = w0.shape
    geom = _geometry(k, n, cores)
    per_bank = geom.w0_w1_bank_blocks(banks)
    out = torch.zeros(banks, layers, experts, per_bank, geom.tiles_per_block, TILE, TILE, dtype=w0.dtype)
    for layer in range(layers):
        for e in range(experts):
            out[:, layer, e] = w0_w1_expert_blocks(_tiles(w0[layer, e]), _tiles(w1[layer, e]), geom, banks)
    return out


def w2_core_blocks(w2_t: torch.Tensor, geom: RingGeometry, core: int) -> torch.Tensor:
    """Ring core `core`'s W2 blocks of one (layer, expert): `[blocks, tiles_per_block, 32, 32]`.
    w2_t: `[Nt, Ht, 32, 32]` tiles."""
    width = w2_shard_tiles(geom.ht, core, geom.nt, geom.cores)
    offset = geom.w2_offset(core)
    order = geom.w2_k_order(core)
    blocks = []
    for it in range(geom.a2a_iters):
        half = geom.w2_last_iter_half and it == geom.a2a_iters - 1
        cols = [offset + BLOCK_W * it + j if BLOCK_W * it + j < width else None for j in range(BLOCK_W)]
        if not half:
            rows = [[w2_t[k, c] if c is not None else None for c in cols] for k in order]
        else:
            ks = order + [None] * ((-len(order)) % geom.half_block_h)
            rows = [[w2_t[k, c] if k is not None and c is not None else None for k in ks[r : r + 2] for c in cols[:2]]
                    for r in range(0, len(ks), 2)]  # fmt: skip
        blocks.append(_blocks_of_rows(rows, geom.block_h, w2_t[0, 0]))
    return torch.cat(blocks)


def w2_expert_blocks(w2_t: torch.Tensor, geom: RingGeometry) -> torch.Tensor:
    """One (layer, expert)'s W2 blocks of every ring core `[cores, w2_blocks_per_expert, tiles_per_block, 32, 32]`.
    w2_t: `[Nt, Ht, 32, 32]` tiles."""
    return torch.stack([w2_core_blocks(w2_t, geom, c) for c in range(geom.cores)])


def prepare_w2(w2: torch.Tensor, cores: int = 12) -> torch.Tensor:
    """w2: `[L, E, N, K]` -> each ring core's blocks `[cores, L, E, w2_blocks_per_expert, tiles_per_block, 32, 32]`."""
    layers, experts, n, k = w2.shape
    geom = _geometry(k, n, cores)
    per_expert = [[w2_expert_blocks(_tiles(w2[layer, e]), geom) for e in range(experts)] for layer in range(layers)]
    return torch.stack([torch.stack(blocks) for blocks in per_expert]).movedim(
        2, 0
    )  # [L, E, cores, ...] -> cores first


def _geometry(hidden: int, intermediate: int, cores: int) -> RingGeometry:
    if hidden % TILE or intermediate % TILE:
        raise ValueError(f"moe_compute weights: hidden {hidden} and intermediate {intermediate} must be tile multiples")
    return RingGeometry(hidden // TILE, intermediate // TILE, cores)


def shard_bytes(blocks: torch.Tensor, dtype=emu_types.bfloat4_b) -> list[bytes]:
    """The device bytes of each bank's (or core's) shard: its tiles in order, in `dtype`'s tile format."""
    shards = []
    for shard in blocks:
        tiles = shard.reshape(-1, TILE, TILE).float()
        shards.append(to_pages(tiles.reshape(-1, TILE), dtype, emu_types.TILE_LAYOUT).tobytes())
    return shards


def _tile_bytes(blocks: torch.Tensor) -> np.ndarray:
    """The bfloat4_b bytes of `[..., 32, 32]` tiles, in order (bfloat16 or float32 tiles read in place)."""
    return to_pages(blocks.reshape(-1, TILE), emu_types.bfloat4_b, emu_types.TILE_LAYOUT)


def place_shards(chip, shards: list[bytes], bank_of_shard: list[int]) -> int:
    """Allocates a DRAM buffer on `chip` holding shard i at offset 0 of bank bank_of_shard[i] (a HEIGHT_SHARDED
    tensor of one shard per bank): a buffer of one page per bank, page b on bank b. Returns its address."""
    size = len(shards[0])
    if any(len(s) != size for s in shards) or sorted(bank_of_shard) != list(range(len(shards))):
        raise ValueError("moe_compute weights: shards must be equal and cover every bank once")
    pages = [b""] * len(shards)
    for shard, bank in zip(shards, bank_of_shard):
        pages[bank] = shard
    address = chip.allocate(size * len(shards), size)
    chip.write(address, size, np.frombuffer(b"".join(pages), dtype=np.uint8))
    return address


@dataclass(frozen=True)
class RingWeights:
    """The prepared weights on one device: the W0/W1 and W2 buffers (one shard per DRAM bank, shard i on bank
    banks[i]), their geometry and the experts they hold."""

    w0_w1_address: int
    w2_address: int
    banks: tuple[int, ...]  # ring position -> DRAM bank
    hidden_tiles: int
    intermediate_tiles: int
    experts: int
    w2_blocks_per_expert: int
    tiles_per_txn: int


@dataclass(frozen=True)
class PreparedWeights:
    """One layer's weights prepared for a ring of `len(banks)` cores: the bfloat4_b bytes of each W0/W1 and W2
    shard, to be placed on any number of devices."""

    w0_w1_shards: list[bytes]
    w2_shards: list[bytes]
    experts: int
    geometry: RingGeometry


def prepare_experts(experts: Iterable[tuple[torch.Tensor, torch.Tensor, torch.Tensor]], cores: int) -> PreparedWeights:
    """Prepares one layer's experts for a ring of `cores` cores (one DRAM bank each), one expert at a time:
    `experts` yields (W0 `[H, N]`, W1 `[H, N]`, W2 `[N, H]`) in local-slot order. Each expert's blocks are
    converted to bfloat4_b as it comes and appended to its shards (bfloat4_b tiles are self-contained, so the
    shards are the bytes of `shard_bytes` over the whole layer's blocks): the host holds one expert in torch form
    and the prepared bytes, never the layer in fp32."""
    geom, count = None, 0
    w0_w1_pieces: list[list[np.ndarray]] = [[] for _ in range(cores)]
    w2_pieces: list[list[np.ndarray]] = [[] for _ in range(cores)]
    for w0, w1, w2 in experts:
        geom = geom or _geometry(int(w0.shape[0]), int(w0.shape[-1]), cores)
        hidden, intermediate = geom.ht * TILE, geom.nt * TILE
        for name, w, shape in (("w0", w0, (hidden, intermediate)), ("w1", w1, (hidden, intermediate)),
                               ("w2", w2, (intermediate, hidden))):  # fmt: skip
            if tuple(w.shape) != shape:
                raise ValueError(
                    f"moe_compute weights: expert {count}'s {name} is {list(w.shape)}, expected {list(shape)}"
                )
        for pieces, blocks in (
            (w0_w1_pieces, w0_w1_expert_blocks(_tiles(w0), _tiles(w1), geom, cores)),
            (w2_pieces, w2_expert_blocks(_tiles(w2), geom)),
        ):
            for shard, piece in zip(pieces, _tile_bytes(blocks).reshape(cores, -1)):
                shard.append(piece)
        count += 1
    if geom is None:
        raise ValueError("moe_compute weights: no experts to prepare")
    return PreparedWeights([b"".join(p) for p in w0_w1_pieces], [b"".join(p) for p in w2_pieces], count, geom)


def prepare_ring_weights(w0: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, cores: int) -> PreparedWeights:
    """Prepares one layer's `[1, E, H, N]` W0, W1 and `[1, E, N, H]` W2 for a ring of `cores` cores."""
    if w0.shape[0] != 1:
        raise ValueError(f"moe_compute weights: one layer at a time, got {w0.shape[0]} layers")
    return prepare_experts(zip(w0[0], w1[0], w2[0]), cores)


def place_prepared(chip, prepared: PreparedWeights, banks) -> RingWeights:
    """Places prepared weights on `chip`, shard (ring position) i on DRAM bank banks[i]."""
    geom, experts = prepared.geometry, prepared.experts
    banks = tuple(banks)
    return RingWeights(
        place_shards(chip, prepared.w0_w1_shards, banks),
        place_shards(chip, prepared.w2_shards, banks),
        banks,
        geom.ht,
        geom.nt,
        experts,
        geom.w2_blocks_per_expert,
        geom.tiles_per_txn,
    )
