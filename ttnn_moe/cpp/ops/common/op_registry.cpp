#include "ops/common/op_registry.hpp"

namespace ttnn_moe::ops {
std::vector<OpBinder>& registered_op_binders() {
    static std::vector<OpBinder> binders;
    return binders;
}
}  // namespace ttnn_moe::ops
