"""Checks of the ops' scalar arguments: ValueError/TypeError naming the argument and its value,
before anything reaches the C++ bindings (whose words are 32-bit)."""

from __future__ import annotations

from typing import Any

_U32_MAX = 0xFFFFFFFF


def require_int(op: str, name: str, value: Any, *, minimum: int, maximum: int = _U32_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{op}: {name} must be an int, got {value!r}")
    if not minimum <= value <= maximum:
        raise ValueError(f"{op}: {name} must be in [{minimum}, {maximum}], got {value}")
    return value


def require_bool(op: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{op}: {name} must be a bool, got {value!r}")
    return value
