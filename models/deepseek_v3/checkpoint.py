"""A safetensors checkpoint directory, read tensor by tensor through memory maps.

A checkpoint is a directory with `config.json` and either `model.safetensors` or the shards
that `model.safetensors.index.json` lists (its "weight_map": tensor name -> shard file), the
layout both the official DeepSeek-V3 release and transformers' `save_pretrained` write.
Every file is opened with `safetensors.safe_open` (a memory map); a tensor, or a slice of one,
is read only when asked for, so opening a checkpoint costs its headers, not its size.

Any problem (missing file, a tensor the index names but its shard lacks, a shape or dtype
other than expected) is a `CheckpointError` naming the tensor and the file.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open

CONFIG_FILE = "config.json"
SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"

# safetensors' dtype names -> torch dtypes (the ones a DeepSeek-V3 checkpoint can hold).
SAFETENSORS_DTYPES = {
    "F8_E4M3": torch.float8_e4m3fn,
    "BF16": torch.bfloat16,
    "F16": torch.float16,
    "F32": torch.float32,
}


class CheckpointError(ValueError):
    """A checkpoint that cannot be read as asked; the message names the tensor and the file."""


class SafetensorsCheckpoint:
    """Tensor names, shapes and dtypes of a checkpoint directory, and reads of single tensors."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.is_dir():
            raise CheckpointError(f"checkpoint {str(self.path)!r} is not a directory")
        self._handles: dict[Path, Any] = {}  # the last file used -> its open safe_open handle
        self.config: dict[str, Any] = self._read_config()
        self._file_of: dict[str, Path] = self._weight_map()

    # --- layout -------------------------------------------------------------------------------
    def _read_config(self) -> dict[str, Any]:
        config_path = self.path / CONFIG_FILE
        if not config_path.is_file():
            raise CheckpointError(f"checkpoint {str(self.path)!r} has no {CONFIG_FILE}")
        try:
            config = json.loads(config_path.read_text())
        except ValueError as error:
            raise CheckpointError(f"{config_path}: not valid JSON ({error})") from None
        if not isinstance(config, dict):
            raise CheckpointError(f"{config_path}: expected a JSON object, got {type(config).__name__}")
        return config

    def _weight_map(self) -> dict[str, Path]:
        index_path = self.path / INDEX_FILE
        if index_path.is_file():
            try:
                weight_map = json.loads(index_path.read_text())["weight_map"]
            except (ValueError, KeyError, TypeError) as error:
                raise CheckpointError(f"{index_path}: no readable 'weight_map' ({error!r})") from None
            return {name: self.path / shard for name, shard in weight_map.items()}
        single = self.path / SINGLE_FILE
        if single.is_file():
            return {name: single for name in self._open(single).keys()}
        raise CheckpointError(f"checkpoint {str(self.path)!r} has neither {INDEX_FILE} nor {SINGLE_FILE}")

    def files(self) -> list[Path]:
        """The safetensors files the checkpoint's tensors live in, sorted."""
        return sorted(set(self._file_of.values()))

    def _open(self, file: Path):
        """The file's safe_open handle. Only the last file used stays open: the pages read through
        a handle's memory map count as this process's resident memory until it is closed, and reads
        come in file order (a layer's experts sit together), so one open file keeps that to a shard."""
        if file not in self._handles:
            if not file.is_file():
                raise CheckpointError(f"shard file {file.name!r} of checkpoint {str(self.path)!r} is missing")
            try:
                handle = safe_open(str(file), framework="pt")
            except Exception as error:  # safetensors raises its own error types for a bad header
                raise CheckpointError(f"{file}: not a readable safetensors file ({error})") from None
            self._handles = {file: handle}
        return self._handles[file]

    # --- tensors ------------------------------------------------------------------------------
    def has(self, name: str) -> bool:
        return name in self._file_of

    def names(self, prefix: str = "") -> list[str]:
        return sorted(name for name in self._file_of if name.startswith(prefix))

    def file_of(self, name: str) -> Path:
        if name not in self._file_of:
            raise CheckpointError(f"tensor {name!r} is not in checkpoint {str(self.path)!r}")
        return self._file_of[name]

    def _slice(self, name: str):
        file = self.file_of(name)
        handle = self._open(file)
        try:
            return handle.get_slice(name)
        except Exception:  # the index names a tensor its shard does not hold
            raise CheckpointError(f"tensor {name!r} is not in {file.name} (the index says it is)") from None

    def shape(self, name: str) -> tuple[int, ...]:
        return tuple(self._slice(name).get_shape())

    def dtype(self, name: str) -> torch.dtype | str:
        """The stored torch dtype, or safetensors' name for a dtype no DeepSeek-V3 weight uses."""
        stored = self._slice(name).get_dtype()
        return SAFETENSORS_DTYPES.get(stored, stored)

    def check(self, name: str, shape: tuple[int, ...], dtypes: tuple[torch.dtype, ...]) -> torch.dtype:
        """The dtype of `name`, after checking its shape and that its dtype is one of `dtypes`."""
        actual_shape, dtype = self.shape(name), self.dtype(name)
        where = f"tensor {name!r} in {self.file_of(name).name}"
        if actual_shape != shape:
            raise CheckpointError(f"{where} has shape {actual_shape}, expected {shape}")
        if dtype not in dtypes:
            raise CheckpointError(f"{where} has dtype {dtype}, expected one of {[str(d) for d in dtypes]}")
        return dtype

    def read(self, name: str, index: Any = None) -> torch.Tensor:
        """The tensor `name`, or only `tensor[index]` (read from the memory map, not the whole tensor)."""
        tensor_slice = self._slice(name)
        return tensor_slice[:] if index is None else tensor_slice[index]

    # --- identity -----------------------------------------------------------------------------
    def fingerprint(self) -> str:
        """A cheap identity of the checkpoint's contents: config.json, and for every tensor file its
        size, modification time and header (the tensor table). Hashes no tensor data."""
        digest = hashlib.sha256((self.path / CONFIG_FILE).read_bytes())
        for file in self.files():
            stat = file.stat()
            digest.update(f"{file.name}:{stat.st_size}:{stat.st_mtime_ns}:".encode())
            digest.update(_safetensors_header(file))
        return digest.hexdigest()


def _safetensors_header(file: Path) -> bytes:
    """The JSON header of a safetensors file: an 8-byte little-endian length, then the header."""
    with open(file, "rb") as f:
        prefix = f.read(8)
        if len(prefix) != 8:
            raise CheckpointError(f"{file}: too short for a safetensors file")
        (length,) = struct.unpack("<Q", prefix)
        return f.read(length)
