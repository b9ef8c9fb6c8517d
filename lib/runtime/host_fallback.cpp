#include "runtime/host_fallback.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>

namespace ck {

namespace {

// One device array's host copy: the bytes its view reaches, and where in
// them the view's first element sits.
struct HostCopy {
    std::size_t index = 0;
    std::unique_ptr<std::byte[]> buffer;
    std::uint64_t device_start = 0;  ///< device address of the lowest element reached
    std::size_t bytes = 0;
};

bool copies_back(const std::optional<std::vector<int>>& outputs, std::size_t index)
{
    return !outputs || std::find(outputs->begin(), outputs->end(), static_cast<int>(index)) != outputs->end();
}

}  // namespace

TransferCounts AtomicTransferCounts::snapshot() const
{
    return {fallbacks.load(), to_host.load(), to_host_bytes.load(), to_device.load(), to_device_bytes.load()};
}

void run_with_host_copies(const HostKernel& host, std::span<const Argument> args,
                          const std::optional<std::vector<int>>& outputs, const Gpu& gpu, AtomicTransferCounts& counts)
{
    std::vector<Argument> host_args(args.begin(), args.end());
    std::vector<HostCopy> copies;
    bool synchronized = false;
    for (std::size_t i = 0; i < host_args.size(); ++i) {
        if (!host_args[i].on_device()) continue;
        if (!synchronized) {
            gpu.synchronize();
            synchronized = true;
        }
        ArrayView& view = host_args[i].array();
        auto [low, high] = view.element_span();
        std::size_t element = size_of(view.type);
        HostCopy copy;
        copy.index = i;
        copy.bytes = static_cast<std::size_t>(high - low) * element;
        copy.buffer = std::make_unique<std::byte[]>(std::max<std::size_t>(copy.bytes, 1));
        copy.device_start = reinterpret_cast<std::uintptr_t>(view.data) + static_cast<std::uint64_t>(low) * element;
        gpu.copy_to_host(copy.buffer.get(), copy.device_start, copy.bytes);
        counts.to_host += 1;
        counts.to_host_bytes += copy.bytes;
        view.data = copy.buffer.get() - low * static_cast<std::ptrdiff_t>(element);
        view.memory = Memory::host;
        copies.push_back(std::move(copy));
    }
    host(host_args);
    for (const auto& copy : copies) {
        if (!copies_back(outputs, copy.index)) continue;
        gpu.copy_to_device(copy.device_start, copy.buffer.get(), copy.bytes);
        counts.to_device += 1;
        counts.to_device_bytes += copy.bytes;
    }
}

}  // namespace ck
