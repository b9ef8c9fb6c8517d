// Checking a call's arguments against the `__global__` signature and packing
// them into the parameter array cuLaunchKernel takes, without allocating in
// the common case (a few dozen parameters of a few bytes each).
#pragma once

#include "cunumpy_kernels/arguments.hpp"

#include "runtime/kernel_signature.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ck {

/// Storage for one launch's packed parameters and the pointer array to them.
class PackedArguments {
public:
    PackedArguments() = default;
    PackedArguments(const PackedArguments&) = delete;
    PackedArguments& operator=(const PackedArguments&) = delete;

    /// Room for `size` bytes aligned to 8 (16 for larger values), stable
    /// until this object dies. Inline: the launch path calls it for every
    /// parameter of every call, and the inline storage almost always fits.
    void* reserve(std::size_t size)
    {
        std::size_t align = size > 8 ? 16 : 8;
        std::size_t at = (used_ + align - 1) & ~(align - 1);
        if (at + size <= inline_bytes) [[likely]] {
            used_ = at + size;
            return storage_.data() + at;
        }
        return reserve_overflow(size);
    }
    /// Appends the address of the next parameter's value.
    void push(const void* value)
    {
        if (count_ < inline_count) [[likely]] {
            inline_pointers_[count_++] = const_cast<void*>(value);
            return;
        }
        push_overflow(value);
    }
    void** pointers() { return count_ <= inline_count ? inline_pointers_.data() : heap_pointers_.data(); }
    std::size_t count() const { return count_; }

    static constexpr std::size_t inline_bytes = 2048;
    static constexpr std::size_t inline_count = 64;

private:
    friend class ArgumentPacker;  // its fixed layout writes the inline storage directly

    void* reserve_overflow(std::size_t size);
    void push_overflow(const void* value);

    alignas(16) std::array<std::byte, inline_bytes> storage_;  // not zeroed: written before read
    std::size_t used_ = 0;
    std::vector<std::vector<std::byte>> overflow_;
    std::array<void*, inline_count> inline_pointers_;
    std::vector<void*> heap_pointers_;
    std::size_t count_ = 0;
};

/// The checks and packing of one kernel's parameters.
class ArgumentPacker {
public:
    ArgumentPacker(std::string kernel, std::vector<KernelParameter> parameters);

    const std::vector<KernelParameter>& parameters() const { return parameters_; }

    /// Checks every argument as cunumpy's CudaKernel.prepare_args does and
    /// packs it into `out`. `struct_sizes[i]`, when not 0, is the size the
    /// driver reports for parameter i: a struct argument must have it.
    /// Throws ArgumentError naming the kernel, the argument's position and
    /// name, and what was expected.
    void pack(std::span<const Argument> args, std::span<const std::size_t> struct_sizes, PackedArguments& out) const
    {
        check_count(args);
        bool empty = out.count_ == 0 && out.used_ == 0;
        if (fixed_ && empty && pack_fixed(args, struct_sizes, out)) [[likely]]
            return;
        pack_each(args, struct_sizes, out);
    }

    /// pack() one argument at a time, through PackedArguments::reserve and
    /// push: what pack() does when its fixed layout does not apply (a layout
    /// past the inline storage, an `out` in use) and when an argument is
    /// refused (to name it). Both write each value through the same code and
    /// give the same bytes at the same offsets.
    void pack_each(std::span<const Argument> args, std::span<const std::size_t> struct_sizes,
                   PackedArguments& out) const;

    /// The same checks without packing (for a launch with an empty grid).
    void check(std::span<const Argument> args) const;

private:
    // A parameter as a call reads it: its kind and type, its size and its
    // offset in PackedArguments' inline storage (the layout reserve() gives),
    // in 12 bytes, so that one cache line holds a small kernel's table.
    struct Slot {
        std::uint32_t offset = 0;
        std::uint32_t size = 0;  ///< 0 for a struct, passed from the caller's object
        ParameterKind kind = ParameterKind::scalar;
        ElementType element = ElementType::float64;
        std::uint8_t view_ndim = 0;
    };

    /// Packs every argument at its slot's offset; false, with what `out`
    /// tells through pointers() and count() unchanged, when one is refused.
    bool pack_fixed(std::span<const Argument> args, std::span<const std::size_t> struct_sizes,
                    PackedArguments& out) const;
    /// Writes argument `index` at `at` (a struct: sets `at` to its value),
    /// when it is what the slot takes; false, writing nothing, when not.
    bool place(const Argument& arg, const Slot& slot, std::size_t index, std::size_t struct_size, void*& at) const;
    /// The ArgumentError of an argument place() refused.
    [[noreturn, gnu::cold]] void refuse(const Argument& arg, std::size_t index, std::size_t struct_size) const;
    void check_count(std::span<const Argument> args) const
    {
        if (args.size() != parameters_.size()) [[unlikely]]
            count_error(args);
    }
    [[noreturn, gnu::cold]] void count_error(std::span<const Argument> args) const;
    const ArrayView& device_array(const Argument& arg, std::size_t index, bool any_type) const;
    [[noreturn]] void fail(std::size_t index, const std::string& expected, const Argument& arg,
                           const std::string& hint = "") const;

    std::string kernel_;
    std::vector<KernelParameter> parameters_;
    std::vector<Slot> slots_;  ///< one per parameter
    bool fixed_ = false;       ///< the slots' offsets fit PackedArguments' inline storage
    std::size_t fixed_bytes_ = 0;
};

}  // namespace ck
