"""Block floats (Bfp8_b, Bfp4_b) against tt-metal itself: the converters of the real 0.81.1 host library.

`libtt_metal.so` from the `ttnn==0.81.1` wheel exports, per format, the per-value converters
`convert_u32_to_bfp<format, false>` (value -> sign|magnitude code given the shared exponent) and
`convert_bfp_to_u32` (code + shared exponent -> fp32 bits), and the whole-tile packer and unpacker
`pack_as_bfp{8,4}_tiles<float>` / `unpack_bfp{8,4}_tiles_into_float_vec` that ttnn's host tensor
conversion runs. We call them through ctypes in a subprocess (the library pulls in MPI and friends;
the test process stays clean) and require our codes, our tile bytes (exponent section, code order,
two 4-bit codes per byte) and our decoded values to agree bit for bit. The tile functions ask the
runtime for the L1 alignment, so that subprocess opens a mocked n150 (no hardware): the runtime root
is the unpacked wheel and the cluster descriptor the one the real-runtime tests use. The shared
exponent of a face row (the maximum fp32 exponent field) is computed here for the per-value calls,
as the library's own helper for it is not exported.

The wheel is downloaded once with pip (about 100 MB) and only the host libraries are kept, under
`$TTNN_MOE_CACHE/ttnn-0.81.1-hostlib` (default ~/.cache/ttnn_moe).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from ttnn_moe._C import numerics
from ttnn_moe._C.program import DataFormat

from tools import tt_wheel

VERSION = "0.81.1"
_LIBRARY_MEMBERS = ("ttnn/build/lib/", "ttnn.libs/")
MOCK_N150 = Path(__file__).resolve().parent / "data" / "mock_clusters" / "wormhole_n150.yaml"


def _find_or_download_wheel(workdir: Path) -> Path:
    cached = sorted(tt_wheel.cache_root().glob(f"**/ttnn-{VERSION}-*.whl"))
    return cached[0] if cached else tt_wheel.download_wheel(VERSION, workdir)


def _host_library() -> Path:
    """Path of libtt_metal.so, next to its dependencies as the wheel lays them out (RPATH $ORIGIN/...)."""
    target = tt_wheel.cache_root() / f"ttnn-{VERSION}-hostlib"
    library = target / "ttnn" / "build" / "lib" / "libtt_metal.so"
    if tt_wheel.is_published(target):
        return library
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".ttnn-{VERSION}-hostlib-", dir=target.parent) as tmp:
        wheel = _find_or_download_wheel(Path(tmp) / "download")
        unpacked = Path(tmp) / "unpacked"
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.infolist():
                # The 65 MB op library and the Python extension are not needed.
                if member.filename.startswith(_LIBRARY_MEMBERS) and "_ttnncpp" not in member.filename:
                    archive.extract(member, unpacked)
        tt_wheel.publish(unpacked, target, f"host libraries of {wheel.name}")
    return library


_ORACLE_SCRIPT = textwrap.dedent(
    """
    import ctypes, sys
    import numpy as np

    library, data = sys.argv[1], sys.argv[2]
    lib = ctypes.CDLL(library)
    inputs = np.load(data)
    format_id, name = int(inputs["format_id"]), str(inputs["name"])

    encode = lib[f"_Z18convert_u32_to_bfpILN2tt10DataFormatE{format_id}ELb0EEhjjb"]  # convert_u32_to_bfp<F, false>
    encode.restype, encode.argtypes = ctypes.c_uint8, [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_bool]
    decode = lib["_Z18convert_bfp_to_u32N2tt10DataFormatEhhb"]  # convert_bfp_to_u32
    decode.restype = ctypes.c_uint32
    decode.argtypes = [ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint8, ctypes.c_bool]
    bits, shared = inputs["bits"], inputs["shared"]
    codes = np.array([[encode(int(b), int(s), False) for b in row] for row, s in zip(bits, shared)], np.uint8)
    in_codes, in_shared = inputs["codes"], inputs["code_shared"]
    values = np.array(
        [[decode(format_id, int(c), int(s), False) for c in row] for row, s in zip(in_codes, in_shared)], np.uint32
    )

    # Whole tiles. Both functions return a std::vector (through a hidden result pointer, the first
    # argument) and take a std::span (pointer, size), row_major, is_exp_a and an optional<Tile>
    # (here all-zero bytes: disengaged, the default 32x32 tile).
    # Mangled tail: std::span<const T> (dynamic extent), bool, bool, const std::optional<tt::tt_metal::Tile>&.
    tail = "Lm18446744073709551615EEbbRKSt8optionalIN2tt8tt_metal4TileEE"
    no_tile = ctypes.create_string_buffer(1024)
    args = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_bool, ctypes.c_bool, ctypes.c_void_p]

    def call(symbol, array):
        function = lib[symbol]
        function.restype, function.argtypes = ctypes.c_void_p, args
        result = (ctypes.c_uint64 * 3)()  # begin, end, capacity
        function(ctypes.addressof(result), array.ctypes.data, array.size, True, False, ctypes.addressof(no_tile))
        count = (result[1] - result[0]) // 4  # uint32 or float elements
        return np.ctypeslib.as_array((ctypes.c_uint32 * count).from_address(result[0])).copy()

    matrices = np.ascontiguousarray(inputs["matrices"], np.float32)
    pages = call(f"_Z18pack_as_{name}_tilesIfESt6vectorIjSaIjEESt4spanIKT_{tail}", matrices).view(np.uint8)
    in_pages = np.ascontiguousarray(inputs["pages"]).view(np.uint32)
    unpacked = call(f"_Z32unpack_{name}_tiles_into_float_vecSt4spanIKj{tail}", in_pages)
    np.savez(data, codes=codes, values=values, pages=pages, unpacked=unpacked)
    """
)


@dataclass(frozen=True)
class BlockFormat:
    data_format: DataFormat
    format_id: int  # tt::DataFormat's value
    name: str  # in the library's symbol names
    magnitude_bits: int

    @property
    def tile_bytes(self) -> int:
        return 64 + 1024 * (self.magnitude_bits + 1) // 8

    def codes(self, page: np.ndarray) -> np.ndarray:
        """(64, 16) sign|magnitude codes of a tile page, face rows in tilized order."""
        data = page[64:]
        if self.magnitude_bits == 3:  # two codes per byte, the earlier element in the low nibble
            data = np.stack([data & 0xF, data >> 4], axis=1)
        return data.reshape(64, 16)


BFP8_B = BlockFormat(DataFormat.Bfp8_b, 6, "bfp8", 7)
BFP4_B = BlockFormat(DataFormat.Bfp4_b, 7, "bfp4", 3)


def _run_oracle(tmp_path: Path, fmt: BlockFormat, **arrays) -> dict[str, np.ndarray]:
    data = tmp_path / "oracle.npz"
    np.savez(data, format_id=fmt.format_id, name=fmt.name, **arrays)
    env = dict(
        os.environ,
        TT_METAL_RUNTIME_ROOT=str(tt_wheel.ensure_ttnn_wheel(VERSION)),
        TT_METAL_MOCK_CLUSTER_DESC_PATH=str(MOCK_N150),
        TT_METAL_CACHE=str(tmp_path / "tt-metal-cache"),
    )
    completed = subprocess.run(
        [sys.executable, "-c", _ORACLE_SCRIPT, str(_host_library()), str(data)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return dict(np.load(data))


def _face_rows(tile: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(tile).reshape(2, 16, 2, 16).transpose(0, 2, 1, 3).reshape(64, 16)


def _from_face_rows(rows: np.ndarray) -> np.ndarray:
    return rows.reshape(2, 2, 16, 16).transpose(0, 2, 1, 3).reshape(32, 32).copy()


def _test_tiles(magnitude_bits: int) -> list[np.ndarray]:
    rng = np.random.default_rng(21)
    tiles = []
    for spread in (0.0, 4.0, 24.0, 80.0):
        scale = np.exp2(rng.uniform(-spread, spread, (32, 32)))
        tiles.append((rng.standard_normal((32, 32)) * scale).astype(np.float32))
    # Exact ties of the format's last magnitude bit at several alignments.
    step = 2.0 ** -(magnitude_bits - 1)
    ties = np.ones((32, 32), dtype=np.float32)
    ties[:, 1:] = 1 + (np.arange(31) % (2 ** (magnitude_bits - 1)) + 0.5) * step
    ties[1::2, 1:] *= np.float32(0.5) ** np.arange(1, 32).astype(np.float32)
    tiles.append(ties.astype(np.float32))
    special = rng.standard_normal((32, 32)).astype(np.float32)
    rows = _face_rows(special)
    # Saturation, signed zeros, subnormals beside a normal value, inf/NaN, the exponent extremes.
    rows[0, :6] = [1.999, -1.999, 0.0, -0.0, 1e-40, -1e-42]
    rows[1, :3] = [np.inf, -np.inf, np.nan]
    rows[2, :2] = [3e38, 1e-38]
    # Values below half a step of the shared exponent vanish (positive and negative: no -0 codes);
    # exactly half a step is a tie that rounds to the even code 0; just above it rounds up.
    half = np.float32(step / 2)
    rows[3] = [1.0, half, -half, half * 0.99, -half * 0.99, half * 1.01, -half * 1.01, half / 8] + [-1e-3] * 8
    # Face rows of subnormals only (the shared exponent is 0), and subnormals beside the smallest normal.
    rows[4] = rng.integers(1, 1 << 23, 16, dtype=np.uint32).view(np.float32)
    rows[5] = (rng.integers(1, 1 << 23, 16, dtype=np.uint32) | np.uint32(1 << 31)).view(np.float32)
    rows[6] = np.concatenate([[np.float32(1.2e-38)], rng.integers(1, 1 << 23, 15, dtype=np.uint32).view(np.float32)])
    # A whole face row of zeros, and one of -0.
    rows[7], rows[8] = 0.0, -0.0
    tiles.append(_from_face_rows(rows))
    tiles.append(rng.integers(0, 2**32, size=(32, 32), dtype=np.uint64).astype(np.uint32).view(np.float32))
    return tiles


@pytest.mark.parametrize("fmt", [BFP8_B, BFP4_B], ids=["bfp8_b", "bfp4_b"])
def test_block_float_tiles_match_tt_metal_converters(tmp_path, fmt):
    tiles = _test_tiles(fmt.magnitude_bits)
    ours = [numerics.tilize(fmt.data_format, tile) for tile in tiles]
    assert all(page.size == fmt.tile_bytes for page in ours)
    bits = np.concatenate([_face_rows(tile).view(np.uint32) for tile in tiles])
    shared = ((bits >> 23) & 0xFF).max(axis=1).astype(np.uint8)
    # Tile unpacker inputs: our own encodings, plus arbitrary bytes (including malformed rows, where a
    # code's normalizing shift exceeds the shared exponent: the per-value converter wraps the exponent
    # there and the tile unpacker, which ttnn.to_torch runs, returns 0; we follow the tile unpacker).
    rng = np.random.default_rng(22)
    arbitrary = rng.integers(0, 256, size=fmt.tile_bytes, dtype=np.uint8)
    decoded_pages = ours + [arbitrary]

    theirs = _run_oracle(
        tmp_path,
        fmt,
        bits=bits,
        shared=shared,
        codes=np.concatenate([fmt.codes(page) for page in ours]),
        code_shared=np.concatenate([page[:64] for page in ours]),
        matrices=np.stack(tiles),
        pages=np.concatenate(decoded_pages),
    )

    # Per value: the shared exponents, every code, every decoded value.
    np.testing.assert_array_equal(np.concatenate([page[:64] for page in ours]), shared)
    np.testing.assert_array_equal(np.concatenate([fmt.codes(page) for page in ours]), theirs["codes"])
    our_values = [numerics.untilize(fmt.data_format, page, 32, 32) for page in decoded_pages]
    np.testing.assert_array_equal(
        np.concatenate([_face_rows(v).view(np.uint32) for v in our_values[: len(ours)]]), theirs["values"]
    )
    # Whole tiles: the library's own tile bytes and its row-major unpacking.
    np.testing.assert_array_equal(np.concatenate(ours), theirs["pages"])
    np.testing.assert_array_equal(np.stack(our_values).reshape(-1).view(np.uint32), theirs["unpacked"])


@pytest.fixture(autouse=True)
def _only_on_x86_64():
    # Not a skip: on another host this oracle cannot run, and the suite says so.
    if os.uname().machine != "x86_64":
        pytest.fail(f"the ttnn {VERSION} wheel ships x86_64 libraries only, this host is {os.uname().machine}")
