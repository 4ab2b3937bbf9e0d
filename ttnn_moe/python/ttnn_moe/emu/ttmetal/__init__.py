"""Tenstorrent's own ttnn 0.81.1 ops on the emulator, their kernels unmodified.

On a Tenstorrent machine the real `ttnn` has these ops. Here each module of this
package reproduces what one tt-metal program factory builds (the wheel's kernels,
their compile-time, named and runtime args, defines, CBs, semaphores and fabric
connections) as a ProgramDescriptor and runs it through `generic_op`, so model
code written against ttnn (tt-metal's DeepSeek-V3 MoE paths) runs here unchanged.
The factories are compiled into the wheel's library; these descriptions are our
own, written from tt-metal's sources and checked against torch goldens.

Kernel sources are read from an unpacked ttnn 0.81.1 wheel named by `use_wheel`
(`tools/tt_wheel.ensure_ttnn_wheel()` downloads one); nothing from it is copied
into this repository.
"""

from ttnn_moe.emu.ttmetal.wheel import use_wheel, wheel_kernel_path, wheel_root

__all__ = ["use_wheel", "wheel_kernel_path", "wheel_root"]
