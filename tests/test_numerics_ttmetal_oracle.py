"""Bfp8_b against tt-metal itself: the per-value converters of the real 0.81.1 host library.

`libtt_metal.so` from the `ttnn==0.81.1` wheel exports `convert_u32_to_bfp<Bfp8_b, false>` (value ->
sign|magnitude byte given the shared exponent) and `convert_bfp_to_u32` (byte + shared exponent -> fp32
bits), the functions its tile packer applies to every value. We call them through ctypes in a subprocess
(the library pulls in MPI and friends; the test process stays clean) and require our tiles to agree byte
for byte. The shared exponent of a face row (the maximum fp32 exponent field) is computed here, as the
library's own helper for it is not exported.

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
from pathlib import Path

import numpy as np
import pytest
from ttnn_moe._C import numerics
from ttnn_moe._C.program import DataFormat

from tools import tt_wheel

VERSION = "0.81.1"
_LIBRARY_MEMBERS = ("ttnn/build/lib/", "ttnn.libs/")
_BFP8_B = 6  # tt::DataFormat::Bfp8_b


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
    encode = lib["_Z18convert_u32_to_bfpILN2tt10DataFormatE6ELb0EEhjjb"]  # convert_u32_to_bfp<Bfp8_b, false>
    encode.restype, encode.argtypes = ctypes.c_uint8, [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_bool]
    decode = lib["_Z18convert_bfp_to_u32N2tt10DataFormatEhhb"]  # convert_bfp_to_u32
    decode.restype = ctypes.c_uint32
    decode.argtypes = [ctypes.c_uint8, ctypes.c_uint8, ctypes.c_uint8, ctypes.c_bool]
    inputs = np.load(data)
    bits, shared = inputs["bits"], inputs["shared"]
    codes = np.array([[encode(int(b), int(s), False) for b in row] for row, s in zip(bits, shared)], np.uint8)
    in_codes, in_shared = inputs["codes"], inputs["code_shared"]
    values = np.array(
        [[decode(BFP8_B, int(c), int(s), False) for c in row] for row, s in zip(in_codes, in_shared)], np.uint32
    )
    np.savez(data, codes=codes, values=values)
    """
).replace("BFP8_B", str(_BFP8_B))


def _run_oracle(tmp_path: Path, bits, shared, codes, code_shared):
    data = tmp_path / "oracle.npz"
    np.savez(data, bits=bits, shared=shared, codes=codes, code_shared=code_shared)
    completed = subprocess.run(
        [sys.executable, "-c", _ORACLE_SCRIPT, str(_host_library()), str(data)], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = np.load(data)
    return result["codes"], result["values"]


def _face_rows(tile: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(tile).reshape(2, 16, 2, 16).transpose(0, 2, 1, 3).reshape(64, 16)


def _test_tiles() -> list[np.ndarray]:
    rng = np.random.default_rng(21)
    tiles = []
    for spread in (0.0, 4.0, 24.0, 80.0):
        scale = np.exp2(rng.uniform(-spread, spread, (32, 32)))
        tiles.append((rng.standard_normal((32, 32)) * scale).astype(np.float32))
    # Exact ties at several alignments, saturation, zeros/subnormals, inf/NaN and raw random bit patterns.
    ties = np.ones((32, 32), dtype=np.float32)
    ties[:, 1:] = 1 + (2 * np.arange(31) + 1) / 128
    ties[1::2, 1:] *= np.float32(0.5) ** np.arange(1, 32).astype(np.float32)
    tiles.append(ties.astype(np.float32))
    special = rng.standard_normal((32, 32)).astype(np.float32)
    special[0, :6] = [1.999, -1.999, 0.0, -0.0, 1e-40, -1e-42]
    special[1, :3] = [np.inf, -np.inf, np.nan]
    special[2, :2] = [3e38, 1e-38]
    tiles.append(special)
    tiles.append(rng.integers(0, 2**32, size=(32, 32), dtype=np.uint64).astype(np.uint32).view(np.float32))
    return tiles


def test_bfp8_tiles_match_tt_metal_converters(tmp_path):
    tiles = _test_tiles()
    ours = [numerics.tilize(DataFormat.Bfp8_b, tile) for tile in tiles]
    bits = np.concatenate([_face_rows(tile).view(np.uint32) for tile in tiles])
    shared = ((bits >> 23) & 0xFF).max(axis=1).astype(np.uint8)
    # Decode inputs: our own encodings, plus arbitrary bytes (including malformed rows).
    rng = np.random.default_rng(22)
    arbitrary = np.empty(1088, dtype=np.uint8)
    arbitrary[:64] = rng.integers(0, 256, size=64)
    arbitrary[64:] = rng.integers(0, 256, size=1024)
    decoded_pages = ours + [arbitrary]
    codes = np.concatenate([page[64:].reshape(64, 16) for page in decoded_pages])
    code_shared = np.concatenate([page[:64] for page in decoded_pages])

    their_codes, their_values = _run_oracle(tmp_path, bits, shared, codes, code_shared)

    np.testing.assert_array_equal(np.concatenate([page[:64] for page in ours]), shared)
    np.testing.assert_array_equal(np.concatenate([page[64:].reshape(64, 16) for page in ours]), their_codes)
    our_values = np.concatenate(
        [_face_rows(numerics.untilize(DataFormat.Bfp8_b, page, 32, 32)).view(np.uint32) for page in decoded_pages]
    )
    np.testing.assert_array_equal(our_values, their_values)


@pytest.fixture(autouse=True)
def _only_on_x86_64():
    # Not a skip: on another host this oracle cannot run, and the suite says so.
    if os.uname().machine != "x86_64":
        pytest.fail(f"the ttnn {VERSION} wheel ships x86_64 libraries only, this host is {os.uname().machine}")
