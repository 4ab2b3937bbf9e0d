// Each op registers its own Python bindings from its own folder, so adding an
// op never touches a shared file: `static OpBindingRegistration reg(&bind_moe_bmm);`
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

namespace ttnn_moe::ops {

using OpBinder = void (*)(pybind11::module_& ops_module);

std::vector<OpBinder>& registered_op_binders();

struct OpBindingRegistration {
    explicit OpBindingRegistration(OpBinder binder) { registered_op_binders().push_back(binder); }
};

}  // namespace ttnn_moe::ops
