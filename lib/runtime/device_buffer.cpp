#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"

#include "runtime/gpu_state.hpp"

namespace ck {

DeviceBuffer::DeviceBuffer(std::shared_ptr<const Gpu> gpu, std::uint64_t address, std::size_t bytes)
    : gpu_(std::move(gpu)), address_(address), bytes_(bytes)
{
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : gpu_(std::move(other.gpu_)), address_(other.address_), bytes_(other.bytes_)
{
    other.address_ = 0;
    other.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept
{
    if (this != &other) {
        release();
        gpu_ = std::move(other.gpu_);
        address_ = other.address_;
        bytes_ = other.bytes_;
        other.address_ = 0;
        other.bytes_ = 0;
    }
    return *this;
}

void DeviceBuffer::release() noexcept
{
    // A free that fails (context destroyed at exit) has nothing left to free.
    if (gpu_ && address_) {
        try {
            GpuAccess::driver(*gpu_).mem_free(address_);
        } catch (const Error&) {
            // The driver was usable when the memory was allocated; nothing to free otherwise.
        }
    }
    address_ = 0;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes)
{
    if (bytes > bytes_)
        throw UsageError("upload of " + std::to_string(bytes) + " bytes into a device buffer of " +
                         std::to_string(bytes_));
    gpu_->copy_to_device(address_, host, bytes);
}

void DeviceBuffer::download(void* host, std::size_t bytes) const
{
    if (bytes > bytes_)
        throw UsageError("download of " + std::to_string(bytes) + " bytes from a device buffer of " +
                         std::to_string(bytes_));
    gpu_->copy_to_host(host, address_, bytes);
}

ArrayView DeviceBuffer::checked_view(ElementType type, std::span<const std::int64_t> shape) const
{
    ArrayView view =
        make_array_view(reinterpret_cast<void*>(static_cast<std::uintptr_t>(address_)), type, shape, Memory::device);
    auto needed = static_cast<std::uint64_t>(view.size()) * size_of(type);
    if (needed > bytes_)
        throw ArgumentError("a view of " + std::to_string(needed) + " bytes does not fit a device buffer of " +
                            std::to_string(bytes_) + " bytes");
    return view;
}

}  // namespace ck
