// The part of the LLK's ckernel_defs.h that kernels name: the RISC-V thread ids of a Tensix core,
// as the mailboxes (ckernel.h) address them.
#pragma once

namespace ckernel {

enum ThreadId { BriscThreadId = 0, UnpackThreadId = 1, MathThreadId = 2, PackThreadId = 3 };

}  // namespace ckernel
