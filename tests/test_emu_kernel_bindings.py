"""Metal 2.0 kernels on the emulator: the JIT generates `args::` accessors and `dfb::` / `sem::` /
`tensor::` binding tokens from a kernel's bindings, and the Semaphore object moves values between cores."""

import numpy as np
import pytest
import torch
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

PAGE = 64
RESULT_PAGE = 32

READER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"
#include "experimental/kernel_args.h"

void kernel_main() {
    const uint32_t first_page = get_arg(args::first_page);
    constexpr uint32_t pages = get_arg(args::pages_per_core);  // a compile-time value stays constexpr
    DataflowBuffer buffer(dfb::pages);
    const auto src = TensorAccessor(tensor::src);
    const Noc noc;
    for (uint32_t page = first_page; page < first_page + pages; ++page) {
        buffer.reserve_back(1);
        noc.async_read(src, buffer, buffer.get_entry_size(), {.page_id = page}, {.offset_bytes = 0});
        noc.async_read_barrier();
        buffer.push_back(1);
    }
}
"""

# Copies its pages to dst shifted by a common arg, then a semaphore handshake: core B raises core A's
# `ready`; A takes it back with down(), sets `flag` VALID and multicasts it to B; each core writes what it saw.
WRITER = r"""
#include <cstdint>
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc_semaphore.h"
#include "hostdevcommon/common_values.hpp"
#include "experimental/kernel_args.h"

void kernel_main() {
    const uint32_t first_page = get_arg(args::first_page);
    const uint32_t page_shift = get_arg(args::page_shift);
    constexpr uint32_t pages = get_arg(args::pages_per_core);
    constexpr uint32_t pages_id = dfb::pages;
    const auto dst = TensorAccessor(tensor::dst);
    for (uint32_t page = first_page; page < first_page + pages; ++page) {
        cb_wait_front(pages_id, 1);
        noc_async_write(get_read_ptr(pages_id), dst.get_noc_addr(page + page_shift), dst.get_aligned_page_size());
        noc_async_write_barrier();
        cb_pop_front(pages_id, 1);
    }

    const uint32_t role = get_vararg(0);
    const uint32_t peer_x = get_vararg(1);
    const uint32_t peer_y = get_vararg(2);
    const Noc noc;
    Semaphore ready(sem::ready);
    Semaphore flag(sem::flag);
    uint32_t seen[2];
    if (role == 0) {
        ready.wait_min(1);
        ready.down(1);
        flag.set(VALID);
        flag.set_multicast(noc, peer_x, peer_y, peer_x, peer_y, 1);
        seen[0] = ready.value();
        seen[1] = flag.value();
    } else {
        ready.up(noc, peer_x, peer_y, 1);
        flag.wait(VALID);
        seen[0] = flag.value();
        seen[1] = ready.value();
    }
    cb_reserve_back(dfb::result, 1);
    auto* out = reinterpret_cast<volatile uint32_t*>(get_write_ptr(dfb::result));
    for (uint32_t i = 0; i < 8; ++i) out[i] = i < 2 ? seen[i] : 0;
    const auto result = TensorAccessor(tensor::result);
    noc_async_write(get_write_ptr(dfb::result), result.get_noc_addr(role), result.get_aligned_page_size());
    noc_async_write_barrier();
}
"""


def _one(x, y):
    return pd.CoreRange(pd.CoreCoord(x, y), pd.CoreCoord(x, y))


def _program(dev, src, dst, result, pages_per_core, page_shift, bindings=None):
    a, b = (0, 0), (3, 2)
    both = pd.CoreRangeSet([_one(*a), _one(*b)])
    peer = {a: dev.worker_core_from_logical_core(*b), b: dev.worker_core_from_logical_core(*a)}
    accessor = emu.tensor_accessor_args(PAGE, True)
    result_accessor = emu.tensor_accessor_args(RESULT_PAGE, True)
    ct = list(accessor) + list(accessor) + list(result_accessor)
    common = [page_shift, src, dst, result]
    bindings = bindings or pd.KernelBindingsDescriptor(
        runtime_args=["first_page"],
        common_runtime_args=["page_shift"],
        compile_time_values=[("pages_per_core", pages_per_core)],
        dataflow_buffers=[("pages", 0), ("result", 1)],
        semaphores=[("ready", 0), ("flag", 1)],
        tensors=[
            pd.TensorBindingDescriptor("src", 0, 1),
            pd.TensorBindingDescriptor("dst", len(accessor), 2),
            pd.TensorBindingDescriptor("result", 2 * len(accessor), 3),
        ],
    )
    rt = [
        (pd.CoreCoord(*core), [i * pages_per_core, i, *peer[core]])  # first_page, then varargs
        for i, core in enumerate((a, b))
    ]

    def kernel(code, config):
        return pd.KernelDescriptor(
            kernel_source=code,
            source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
            core_ranges=both,
            compile_time_args=ct,
            runtime_args=rt,
            common_runtime_args=common,
            config=config,
            bindings=bindings,
        )

    return pd.ProgramDescriptor(
        kernels=[kernel(READER, pd.ReaderConfigDescriptor()), kernel(WRITER, pd.WriterConfigDescriptor())],
        semaphores=[pd.SemaphoreDescriptor(id=i, core_ranges=both, initial_value=0) for i in range(2)],
        cbs=[
            pd.CBDescriptor(
                total_size=2 * PAGE,
                core_ranges=both,
                format_descriptors=[
                    pd.CBFormatDescriptor(buffer_index=0, data_format=pd.DataFormat.UInt32, page_size=PAGE)
                ],
            ),
            pd.CBDescriptor(
                total_size=RESULT_PAGE,
                core_ranges=both,
                format_descriptors=[
                    pd.CBFormatDescriptor(buffer_index=1, data_format=pd.DataFormat.UInt32, page_size=RESULT_PAGE)
                ],
            ),
        ],
    )


def test_named_args_tokens_and_semaphore_object_run_a_metal2_program():
    dev = emu.open_device()
    pages_per_core, page_shift = 3, 2
    total = 2 * pages_per_core
    data = torch.randint(0, 2**31, (total, PAGE // 4), dtype=torch.int32, generator=torch.Generator().manual_seed(5))
    src = dev.allocate(total * PAGE, PAGE)
    dev.write(src, PAGE, data.numpy().view(np.uint8).reshape(-1))
    dst = dev.allocate((total + page_shift) * PAGE, PAGE)
    dev.write(dst, PAGE, np.zeros((total + page_shift) * PAGE, dtype=np.uint8))
    result = dev.allocate(2 * RESULT_PAGE, RESULT_PAGE)

    emu.run_program(dev, _program(dev, src, dst, result, pages_per_core, page_shift))

    copied = torch.from_numpy(dev.read(dst, PAGE, (total + page_shift) * PAGE).view(np.int32).copy())
    expected = torch.zeros(total + page_shift, PAGE // 4, dtype=torch.int32)
    expected[page_shift:] = data
    assert torch.equal(copied.reshape(total + page_shift, PAGE // 4), expected)
    seen = dev.read(result, RESULT_PAGE, 2 * RESULT_PAGE).view(np.uint32).reshape(2, 8)[:, :2]
    # Core A: ready taken back to 0, flag VALID (1). Core B: flag VALID via the multicast, its own ready untouched.
    assert seen.tolist() == [[0, 1], [1, 0]]


def test_a_missing_binding_fails_the_build_naming_it():
    dev = emu.open_device()
    bindings = pd.KernelBindingsDescriptor(
        runtime_args=["first_page"],
        common_runtime_args=["page_shift"],
        compile_time_values=[("pages_per_core", 1)],
        dataflow_buffers=[("pages", 0), ("result", 1)],
        semaphores=[("ready", 0)],  # no sem::flag
        tensors=[pd.TensorBindingDescriptor("src", 0, 1), pd.TensorBindingDescriptor("dst", 2, 2)],
    )
    buf = dev.allocate(4 * PAGE, PAGE)
    with pytest.raises(emu.EmulatorError, match=r"flag"):
        emu.run_program(dev, _program(dev, buf, buf, buf, 1, 0, bindings))


@pytest.mark.parametrize(
    ("bindings", "message"),
    [
        (pd.KernelBindingsDescriptor(runtime_args=["a", "a"]), r"args::a is declared twice"),
        (pd.KernelBindingsDescriptor(dataflow_buffers=[("in-0", 0)]), r"dfb::in-0 is not a C\+\+ identifier"),
        (
            pd.KernelBindingsDescriptor(
                common_runtime_args=["shift"], tensors=[pd.TensorBindingDescriptor("src", 0, 0)]
            ),
            r"tensor::src puts its address in common runtime arg 0, which the named common arg shift occupies",
        ),
    ],
)
def test_malformed_bindings_are_rejected_naming_the_binding(bindings, message):
    dev = emu.open_device()
    k = pd.KernelDescriptor(
        kernel_source="void kernel_main() {}",
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=pd.CoreRangeSet([_one(0, 0)]),
        config=pd.WriterConfigDescriptor(),
        bindings=bindings,
    )
    with pytest.raises(emu.EmulatorError, match=message):
        emu.run_program(dev, pd.ProgramDescriptor(kernels=[k]))
