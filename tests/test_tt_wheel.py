"""The ttnn wheel fetcher: layout of the unpacked tree, idempotence, clear failures."""

from __future__ import annotations

import pytest

from tools import tt_wheel


def test_unpacked_wheel_holds_device_headers_and_tenstorrent_kernels():
    root = tt_wheel.ensure_ttnn_wheel("0.81.1")
    assert root == tt_wheel.cache_root() / "ttnn-0.81.1"
    assert (root / "tt_metal/hw/inc/api/dataflow/dataflow_api.h").is_file()
    assert (root / "tt_metal/hw/inc/api/compute/matmul.h").is_file()
    assert (root / "ttnn/cpp/ttnn/operations/matmul/device/kernels/compute/bmm.cpp").is_file()
    # Only the two kept prefixes: no Python package or host libraries.
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["tt_metal", "ttnn"]
    assert sorted(p.name for p in (root / "ttnn").iterdir()) == ["cpp"]


def test_second_call_reuses_the_unpacked_tree(monkeypatch):
    first = tt_wheel.ensure_ttnn_wheel()

    def no_download(*args):
        raise AssertionError("the wheel was downloaded again")

    monkeypatch.setattr(tt_wheel, "download_wheel", no_download)
    assert tt_wheel.ensure_ttnn_wheel() == first


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TTNN_MOE_CACHE", str(tmp_path))
    assert tt_wheel.cache_root() == tmp_path
    monkeypatch.delenv("TTNN_MOE_CACHE")
    assert tt_wheel.cache_root().name == "ttnn_moe"


@pytest.mark.parametrize("version", ["", "latest", "0.81.1; rm -rf /", "0.81.1 --pre", 81])
def test_malformed_version_is_rejected(version):
    with pytest.raises(ValueError, match="version"):
        tt_wheel.ensure_ttnn_wheel(version)


def test_failed_download_says_which_command_to_run(monkeypatch, tmp_path):
    monkeypatch.setenv("TTNN_MOE_CACHE", str(tmp_path))
    with pytest.raises(RuntimeError) as failure:
        tt_wheel.ensure_ttnn_wheel("0.0.0")  # no such release on PyPI
    message = str(failure.value)
    assert "pip download --no-deps --only-binary=:all: --python-version 3.12" in message
    assert "ttnn==0.0.0" in message
    # Nothing half-done is left behind to be trusted later.
    assert not (tmp_path / "ttnn-0.0.0").exists()
    assert list(tmp_path.iterdir()) == []


def test_publish_renames_a_marked_tree_into_place_and_replaces_a_stale_one(tmp_path):
    target = tmp_path / "tree"
    target.mkdir()
    (target / "half_written.h").write_text("interrupted")  # unmarked: an earlier run died here
    assert not tt_wheel.is_published(target)
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    (unpacked / "api.h").write_text("complete")
    tt_wheel.publish(unpacked, target, "test tree")
    assert tt_wheel.is_published(target)
    assert not unpacked.exists()
    assert sorted(p.name for p in target.iterdir() if not p.name.startswith(".")) == ["api.h"]
    assert (target / "api.h").read_text() == "complete"
