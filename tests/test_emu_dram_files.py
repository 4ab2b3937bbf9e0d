"""File-backed emulated DRAM (ttnn_moe/cpp/emu/README.md, "DRAM"): large buffers are shared mappings
of unnamed files, their resident pages are dropped past a budget of accessed bytes, the data and
an op's results and modeled time stay bitwise the same, disk blocks are reserved as bytes are first
written (within an optional budget), and a directory that cannot take the file is named with the
bytes."""

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe._C import emu

import ttnn_moe

MiB = 1 << 20
CHUNK = 64 << 10  # the disk a backing file reserves at once
PAGE = 2048


@pytest.fixture
def dram_files(tmp_path):
    """File backing on, threshold 16 MiB, backing files in tmp_path; the settings restored after."""
    was = emu.dram_files()
    emu.set_dram_files(enabled=True, threshold_bytes=16 * MiB, resident_budget_bytes=1 << 30, directory=str(tmp_path))
    yield tmp_path
    emu.set_dram_files(
        enabled=was["enabled"],
        threshold_bytes=was["threshold_bytes"],
        resident_budget_bytes=was["resident_budget_bytes"],
        directory=was["directory"],
    )


def mapped_bytes(size, page):
    """What a buffer occupies over the 12 banks: whole 32-byte-aligned pages, the same rows in each bank."""
    pages = math.ceil(size / page)
    return 12 * math.ceil(pages / 12) * (math.ceil(page / 32) * 32)


def file_mappings(directory):
    """{(start, end): smaps fields in kB} of this process's mappings of files in `directory`."""
    found, current = {}, None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
                current = None
                path = " ".join(fields[5:])
                if path.startswith(str(directory) + "/"):
                    assert path.endswith("(deleted)"), path  # unnamed: no directory entry
                    start, end = (int(v, 16) for v in fields[0].split("-"))
                    current = found.setdefault((start, end), {})
            elif current is not None and fields[0].endswith(":") and len(fields) == 3:
                current[fields[0][:-1]] = int(fields[1])
    return found


def test_a_large_buffer_is_a_mapped_file_without_a_name_and_a_small_one_is_not(dram_files):
    dev = emu.open_device()
    before = emu.dram_files()["buffers"]
    small = dev.allocate(MiB, PAGE)
    assert emu.dram_files()["buffers"] == before
    assert file_mappings(dram_files) == {}
    size = 32 * MiB + 1000  # not a whole number of pages or bank rows
    large = dev.allocate(size, PAGE)
    assert emu.dram_files()["buffers"] == before + 1
    (start, end), _ = file_mappings(dram_files).popitem()
    assert end - start == mapped_bytes(size, PAGE)
    assert os.listdir(dram_files) == []  # nothing to clean up, whatever happens to the process
    dev.deallocate(large)
    assert file_mappings(dram_files) == {}
    assert emu.dram_files()["buffers"] == before
    dev.deallocate(small)


def test_resident_pages_are_dropped_past_the_budget_and_the_data_survives(dram_files):
    dev = emu.open_device()
    size = 32 * MiB
    addr = dev.allocate(size, PAGE)
    data = np.random.default_rng(0).integers(0, 256, size, dtype=np.uint8)
    emu.release_dram_files()  # the budget counts from here
    dev.write(addr, PAGE, data)
    [mapping] = file_mappings(dram_files).values()
    assert mapping["Rss"] * 1024 >= size  # every page written, all resident (budget 1 GiB)

    releases = emu.dram_files()["releases"]
    emu.release_dram_files()
    [mapping] = file_mappings(dram_files).values()
    assert mapping["Rss"] == 0
    assert emu.dram_files()["releases"] == releases + 1
    np.testing.assert_array_equal(dev.read(addr, PAGE, size), data)  # back from the file's pages

    budget = 4 * MiB
    emu.set_dram_files(resident_budget_bytes=budget)
    emu.release_dram_files()
    flipped = 255 - data
    dev.write(addr, PAGE, flipped)
    [mapping] = file_mappings(dram_files).values()
    # Dropped every 4 MiB of the 32 MiB written; consecutive pages lie in the 12 banks, so the 4 MiB
    # touch up to two partly written 4 KiB memory pages more per bank.
    assert mapping["Rss"] * 1024 <= budget + 12 * 2 * 4096
    assert emu.dram_files()["releases"] >= releases + 2 + size // budget - 1  # the explicit two and the writes'
    np.testing.assert_array_equal(dev.read(addr, PAGE, size), flipped)
    dev.deallocate(addr)


def run_moe_bmm():
    """A bfloat8_b moe_bmm on a fresh device: its output (host tensor), the device's counters and the
    drops of resident file-backed pages while the op ran."""
    gen = torch.Generator().manual_seed(7)
    experts, tokens, kd, n = 4, 64, 256, 128
    x = torch.randn(experts, tokens, kd, generator=gen).bfloat16()
    w = (torch.randn(experts, kd, n, generator=gen) / math.sqrt(kd)).bfloat16()
    counts = torch.tensor([64, 17, 0, 33], dtype=torch.int32).reshape(-1, 1)
    device = ttnn.open_device(grid=(4, 4))
    try:
        inputs = (
            ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device),
            ttnn.from_torch(w, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT, device=device),
            ttnn.from_torch(counts, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device),
        )
        releases = emu.dram_files()["releases"]
        out = ttnn_moe.moe_bmm(*inputs)
        counters = device.counters()
        for jit in ("kernel_builds", "kernel_cache_hits"):  # the build cache's state, not the op's
            del counters[0][jit]
        return ttnn.to_torch(out), counters, emu.dram_files()["releases"] - releases

    finally:
        ttnn.close_device(device)


def test_an_op_gives_bitwise_the_same_output_and_counters_from_files_dropped_every_16_kib(dram_files):
    emu.set_dram_files(enabled=False)
    out_memory, counters_memory, releases = run_moe_bmm()
    assert releases == 0
    files_before = emu.dram_files()["bytes"]
    # Every buffer file-backed, resident pages dropped after every 16 KiB the op's kernels move.
    budget = 16 * 1024
    emu.set_dram_files(enabled=True, threshold_bytes=1, resident_budget_bytes=budget)
    out_files, counters_files, releases = run_moe_bmm()
    moved = counters_files[0]["noc_bytes_read_dram"] + counters_files[0]["noc_bytes_written_dram"]
    assert moved > 200_000 and releases >= moved // budget
    assert emu.dram_files()["bytes"] == files_before  # all unmapped with the device
    assert torch.equal(out_files.view(torch.int16), out_memory.view(torch.int16))
    assert counters_files == counters_memory  # the modeled time included
    assert counters_memory[0]["timing"]["total_cycles"] > 0


def run_python(code, env_extra, preexec=None):
    env = dict(os.environ, **env_extra)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, preexec_fn=preexec
    )


def test_a_directory_that_cannot_be_used_or_cannot_hold_the_file_is_named_with_the_bytes(dram_files):
    missing = dram_files / "missing"
    emu.set_dram_files(directory=str(missing))
    dev = emu.open_device()
    size = 16 * MiB
    with pytest.raises(emu.EmulatorError) as err:
        dev.allocate(size, PAGE)
    message = str(err.value)
    assert f"cannot create a {mapped_bytes(size, PAGE)}-byte backing file in '{missing}'" in message, message
    assert "No such file or directory" in message and "TTNN_MOE_DRAM_FILES=0" in message, message
    assert dev.dram_buffers == 0

    # A file-size limit of 1 MiB stands in for a full disk: reserving the file's blocks fails.
    def limit_file_size():
        import resource  # noqa: PLC0415  (runs in the child)
        import signal  # noqa: PLC0415

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (MiB, MiB))

    done = run_python(
        f"""
        from ttnn_moe._C import emu
        try:
            emu.open_device().allocate({size}, {PAGE})
        except emu.EmulatorError as e:
            print(e)
        """,
        {"TTNN_MOE_DRAM_DIR": str(dram_files)},
        limit_file_size,
    )
    assert done.returncode == 0, done.stderr
    expected = f"cannot size a {mapped_bytes(size, PAGE)}-byte backing file in '{dram_files}': File too large"
    assert expected in done.stdout, done.stdout
    assert os.listdir(dram_files) == []


def disk_blocks(dram_files) -> int:
    """Bytes of disk the process's backing files in `dram_files` hold (their allocated blocks)."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith(str(dram_files)):
            total += os.fstat(int(fd)).st_blocks * 512
    return total


def test_disk_blocks_are_reserved_as_bytes_are_first_written(dram_files):
    """A large buffer takes no disk until written; each first write reserves its 64 KiB chunks, before
    the bytes land; unwritten bytes read as zeros."""
    dev = emu.open_device()
    size = 64 * MiB
    addr = dev.allocate(size, PAGE)
    assert emu.dram_files()["reserved_bytes"] == 0 and disk_blocks(dram_files) == 0
    page = np.full(PAGE, 7, dtype=np.uint8)
    dev.write(addr, PAGE, page)  # page 0, in bank 0
    assert emu.dram_files()["reserved_bytes"] == CHUNK
    assert disk_blocks(dram_files) >= CHUNK
    read = dev.read(addr, PAGE, 4 * PAGE)
    np.testing.assert_array_equal(read[:PAGE], page)
    assert not read[PAGE:].any()
    dev.deallocate(addr)
    assert emu.dram_files()["reserved_bytes"] == 0


def test_a_write_past_the_disk_budget_fails_naming_the_budget(dram_files):
    """The disk budget stands in for a full disk: a host write or a kernel's NOC write that would need
    a chunk past it is an error naming the budget and the directory."""
    emu.set_dram_files(threshold_bytes=MiB, disk_budget_bytes=3 * MiB // 2)
    try:
        device = ttnn.open_device(grid=(2, 2))
        rows = torch.ones(512, 1024)  # 1 MiB of bfloat16, 1 MiB + 8 KiB over the banks: 17 chunks
        big = ttnn.from_torch(rows, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        assert emu.dram_files()["reserved_bytes"] == mapped_bytes(rows.numel() * 2, PAGE)
        with pytest.raises(emu.EmulatorError, match=r"past their disk budget of 1572864 bytes") as err:
            ttnn.from_torch(rows, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
        assert str(dram_files) in str(err.value) and "TTNN_MOE_DRAM_DISK_BUDGET" in str(err.value)
        # A kernel's write: to_layout's untilize program writes the ROW_MAJOR output through the NOC.
        with pytest.raises(Exception, match=r"past their disk budget"):
            ttnn.to_layout(big, ttnn.ROW_MAJOR_LAYOUT)
        ttnn.close_device(device)
    finally:
        emu.set_dram_files(disk_budget_bytes=0)
