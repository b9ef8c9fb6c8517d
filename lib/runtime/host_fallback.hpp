// The fallback of a kernel without CUDA version (missing_cuda = fallback):
// device arrays are copied to host buffers, the host kernel runs on them, and
// the outputs are copied back. Every copy is counted.
#pragma once

#include "cunumpy_kernels/gpu.hpp"
#include "cunumpy_kernels/kernel.hpp"

#include <atomic>
#include <optional>
#include <span>
#include <vector>

namespace ck {

/// TransferCounts that several threads add to.
struct AtomicTransferCounts {
    std::atomic<std::uint64_t> fallbacks{0};
    std::atomic<std::uint64_t> to_host{0};
    std::atomic<std::uint64_t> to_host_bytes{0};
    std::atomic<std::uint64_t> to_device{0};
    std::atomic<std::uint64_t> to_device_bytes{0};

    TransferCounts snapshot() const;
};

/// Runs `host` on host copies of the device arrays of `args`. Waits for the
/// context first (the arrays may be written by kernels still running), copies
/// back the arguments at `outputs` (every device array when nullopt), and
/// counts each copy in `counts`. Host arguments are passed as they are.
/// Throws CudaError when a copy fails.
void run_with_host_copies(const HostKernel& host, std::span<const Argument> args,
                          const std::optional<std::vector<int>>& outputs, const Gpu& gpu, AtomicTransferCounts& counts);

}  // namespace ck
