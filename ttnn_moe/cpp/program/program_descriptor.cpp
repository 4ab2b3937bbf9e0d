#include "program/program_descriptor.hpp"

#include <functional>
#include <stdexcept>
#include <string>

namespace ttnn_moe::program {

bool CoreRangeSet::contains(const CoreCoord& c) const {
    for (const auto& r : ranges) {
        if (r.contains(c)) return true;
    }
    return false;
}

uint32_t CoreRangeSet::num_cores() const {
    uint32_t n = 0;
    for (const auto& r : ranges) n += r.num_cores();
    return n;
}

std::vector<CoreCoord> CoreRangeSet::cores() const {
    std::vector<CoreCoord> out;
    for (const auto& r : ranges) {
        for (uint32_t y = r.start.y; y <= r.end.y; ++y) {
            for (uint32_t x = r.start.x; x <= r.end.x; ++x) out.push_back({x, y});
        }
    }
    return out;
}

const KernelDescriptor::CoreRuntimeArgs* KernelDescriptor::runtime_args_of(const CoreCoord& core) const {
    for (const auto& [c, args] : runtime_args) {
        if (c == core) return &args;
    }
    return nullptr;
}

namespace {
struct Hasher {
    uint64_t h = 0xcbf29ce484222325ull;
    void add(uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); }
    void add(const std::string& s) { add(std::hash<std::string>{}(s)); }
    void add(const CoreRangeSet& set) {
        add(set.ranges.size());
        for (const auto& r : set.ranges) {
            add(r.start.x), add(r.start.y), add(r.end.x), add(r.end.y);
        }
    }
};
}  // namespace

uint64_t structural_hash(const ProgramDescriptor& program) {
    if (program.custom_program_hash) return *program.custom_program_hash;
    Hasher h;
    for (const auto& k : program.kernels) {
        h.add(k.kernel_source);
        h.add(static_cast<uint64_t>(k.source_type));
        h.add(k.core_ranges);
        for (auto v : k.compile_time_args) h.add(v);
        for (const auto& [name, v] : k.named_compile_time_args) h.add(name), h.add(v);
        for (const auto& [name, v] : k.defines) h.add(name), h.add(v);
        if (k.bindings) {
            const KernelBindingsDescriptor& b = *k.bindings;
            for (const auto& name : b.runtime_args) h.add(name);
            h.add(b.runtime_args.size());
            for (const auto& name : b.common_runtime_args) h.add(name);
            h.add(b.common_runtime_args.size());
            for (const auto* values : {&b.compile_time_values, &b.dataflow_buffers, &b.semaphores}) {
                for (const auto& [name, v] : *values) h.add(name), h.add(v);
                h.add(values->size());
            }
            for (const auto& t : b.tensors) h.add(t.name), h.add(t.accessor_cta_offset), h.add(t.address_crta_index);
        }
        h.add(k.runtime_args.size());
        h.add(k.common_runtime_args.size());
        h.add(k.config.index());
        if (const auto* c = std::get_if<ComputeConfigDescriptor>(&k.config)) {
            h.add(static_cast<uint64_t>(c->math_fidelity));
            h.add(c->fp32_dest_acc_en), h.add(c->dst_full_sync_en), h.add(c->math_approx_mode);
        }
    }
    for (const auto& s : program.semaphores) {
        h.add(s.id), h.add(s.initial_value), h.add(s.core_ranges);
    }
    for (const auto& cb : program.cbs) {
        h.add(cb.total_size), h.add(cb.core_ranges);
        for (const auto& f : cb.format_descriptors) {
            h.add(f.buffer_index), h.add(static_cast<uint64_t>(f.data_format)), h.add(f.page_size);
        }
    }
    return h.h;
}

uint32_t tile_size_bytes(DataFormat format) {
    switch (format) {
        case DataFormat::Float32:
        case DataFormat::Int32:
        case DataFormat::UInt32:
            return 4096;
        case DataFormat::Float16:
        case DataFormat::Float16_b:
        case DataFormat::UInt16:
            return 2048;
        case DataFormat::Bfp8:
        case DataFormat::Bfp8_b:
            return 1024 + 64;
        case DataFormat::Bfp4:
        case DataFormat::Bfp4_b:
            return 512 + 64;
        case DataFormat::Int8:
        case DataFormat::UInt8:
            return 1024;
        default:
            throw std::invalid_argument("tile_size_bytes: unsupported data format " +
                                        std::to_string(static_cast<int>(format)));
    }
}

}  // namespace ttnn_moe::program
