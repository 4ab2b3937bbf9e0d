"""Suite-wide test settings.

torch's intra-op thread pool spins while it waits for its workers. The tests
use small tensors, and CI shares few cores between processes, so a second
torch thread only waits: one thread per process runs the suite many times faster.
"""

import torch

torch.set_num_threads(1)
