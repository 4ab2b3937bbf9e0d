#include "emu/binding_headers.hpp"

#include <cctype>
#include <set>
#include <sstream>
#include <string>

#include "emu/error.hpp"

namespace ttnn_moe::emu {
namespace {

// Names become C++ identifiers in a namespace: reject anything else, and duplicates, up front.
void check_names(const std::string& space, const std::vector<std::string>& names) {
    std::set<std::string> seen;
    for (const auto& name : names) {
        bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
        for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
        if (!ok) throw EmuError("kernel binding " + space + "::" + name + " is not a C++ identifier");
        if (!seen.insert(name).second) throw EmuError("kernel binding " + space + "::" + name + " is declared twice");
    }
}

template <typename Pairs>
std::vector<std::string> names_of(const Pairs& pairs) {
    std::vector<std::string> names;
    for (const auto& p : pairs) names.push_back(p.first);
    return names;
}

}  // namespace

std::string kernel_args_header(const program::KernelBindingsDescriptor& b) {
    std::vector<std::string> arg_names = b.runtime_args;
    arg_names.insert(arg_names.end(), b.common_runtime_args.begin(), b.common_runtime_args.end());
    for (const auto& name : names_of(b.compile_time_values)) arg_names.push_back(name);
    check_names("args", arg_names);

    std::ostringstream out;
    out << "// Generated from the kernel's bindings: its named arguments.\n"
        << "#pragma once\n"
        << "#include \"experimental/kernel_args.h\"\n"
        << "namespace args {\n";
    for (size_t i = 0; i < b.runtime_args.size(); ++i) {
        out << "inline constexpr experimental::RtaArg<uint32_t> " << b.runtime_args[i] << "{" << 4 * i << "};\n";
    }
    for (size_t i = 0; i < b.common_runtime_args.size(); ++i) {
        out << "inline constexpr experimental::CrtaArg<uint32_t> " << b.common_runtime_args[i] << "{" << 4 * i
            << "};\n";
    }
    for (const auto& [name, value] : b.compile_time_values) {
        out << "inline constexpr experimental::CtaVal<uint32_t> " << name << "{" << value << "u};\n";
    }
    out << "}  // namespace args\n"
        << "// Positional runtime args follow the named ones.\n"
        << "static FORCE_INLINE uint32_t get_vararg(uint32_t index) {\n"
        << "    return get_arg_val<uint32_t>(static_cast<int>(" << b.runtime_args.size() << "u + index));\n"
        << "}\n";
    return out.str();
}

std::string kernel_bindings_header(const program::KernelBindingsDescriptor& b) {
    check_names("dfb", names_of(b.dataflow_buffers));
    check_names("sem", names_of(b.semaphores));
    std::vector<std::string> tensor_names;
    for (const auto& t : b.tensors) tensor_names.push_back(t.name);
    check_names("tensor", tensor_names);
    for (const auto& t : b.tensors) {
        if (t.address_crta_index < b.common_runtime_args.size()) {
            throw EmuError("kernel binding tensor::" + t.name + " puts its address in common runtime arg " +
                           std::to_string(t.address_crta_index) + ", which the named common arg " +
                           b.common_runtime_args[t.address_crta_index] + " occupies");
        }
    }

    std::ostringstream out;
    out << "// Generated from the kernel's bindings: its dataflow buffers, semaphores and tensors.\n"
        << "#pragma once\n"
        << "#include \"api/dataflow/dfb_binding_token.h\"\n";
    if (!b.semaphores.empty()) out << "#include \"api/dataflow/semaphore_binding_token.h\"\n";
    if (!b.tensors.empty()) out << "#include \"api/tensor/tensor_binding_token.h\"\n";
    out << "namespace dfb {\n";
    for (const auto& [name, id] : b.dataflow_buffers) {
        out << "inline constexpr DFBBindingToken " << name << "{" << id << "};\n";
    }
    out << "}  // namespace dfb\n";
    if (!b.semaphores.empty()) {
        out << "namespace sem {\n";
        for (const auto& [name, id] : b.semaphores) {
            out << "inline constexpr SemaphoreBindingToken " << name << "{" << id << "u, SemScope::LOCAL_NONATOMIC};\n";
        }
        out << "}  // namespace sem\n";
    }
    if (!b.tensors.empty()) {
        out << "namespace tensor {\n";
        for (const auto& t : b.tensors) {
            out << "inline constexpr tensor_accessor::TensorBindingToken<" << t.accessor_cta_offset << "u, "
                << 4 * t.address_crta_index << "u> " << t.name << "{};\n";
        }
        out << "}  // namespace tensor\n";
    }
    return out.str();
}

}  // namespace ttnn_moe::emu
