#include "runtime/argument_packer.hpp"

#include "cunumpy_kernels/error.hpp"
#include "runtime/scalar_conversion.hpp"

#include <cstring>

namespace ck {

namespace {

// The common cases of the launch path, inline; anything else (and every
// error) goes through the general code below, so results and messages are
// unchanged.

/// ArrayView::c_contiguous() without its two loops for the usual 1-D view.
bool contiguous(const ArrayView& view)
{
    if (view.ndim == 1) return view.shape[0] == 0 || view.shape[0] == 1 || view.strides[0] == 1;
    return view.c_contiguous();
}

/// size_of() for the usual scalar types.
std::size_t scalar_bytes(ElementType type)
{
    switch (type) {
    case ElementType::float64:
    case ElementType::int64:
    case ElementType::uint64:
        return 8;
    default:
        return size_of(type);
    }
}

/// write_same_type_scalar() for the 8-byte types, which need no conversion.
bool write_same_type_scalar_fast(const Argument& arg, ElementType to, void* out)
{
    if (!arg.is_scalar() || arg.type() != to) return false;
    switch (to) {
    case ElementType::float64: {
        double value = arg.as_double();
        std::memcpy(out, &value, sizeof value);
        return true;
    }
    case ElementType::int64: {
        std::int64_t value = arg.as_int();
        std::memcpy(out, &value, sizeof value);
        return true;
    }
    case ElementType::uint64: {
        std::uint64_t value = arg.as_uint();
        std::memcpy(out, &value, sizeof value);
        return true;
    }
    default:
        return write_same_type_scalar(arg, to, out);
    }
}

}  // namespace

void* PackedArguments::reserve_overflow(std::size_t size)
{
    overflow_.emplace_back(size + 16);
    auto address = reinterpret_cast<std::uintptr_t>(overflow_.back().data());
    return reinterpret_cast<void*>((address + 15) / 16 * 16);
}

void PackedArguments::push_overflow(const void* value)
{
    void* pointer = const_cast<void*>(value);
    if (heap_pointers_.empty()) heap_pointers_.assign(inline_pointers_.begin(), inline_pointers_.end());
    heap_pointers_.push_back(pointer);
    ++count_;
}

ArgumentPacker::ArgumentPacker(std::string kernel, std::vector<KernelParameter> parameters)
    : kernel_(std::move(kernel)), parameters_(std::move(parameters))
{
}

void ArgumentPacker::fail(std::size_t index, const std::string& expected, const Argument& arg, const std::string& hint) const
{
    throw ArgumentError("kernel '" + kernel_ + "': " + describe_parameter(parameters_[index], index) + " must be " +
                        expected + ", got " + arg.describe() + (hint.empty() ? "" : "; " + hint));
}

void ArgumentPacker::check_count(std::span<const Argument> args) const
{
    if (args.size() == parameters_.size()) return;
    std::string names;
    for (const auto& p : parameters_) names += (names.empty() ? "" : ", ") + p.name;
    throw ArgumentError("kernel '" + kernel_ + "' takes " + std::to_string(parameters_.size()) + " arguments (" + names +
                        "), got " + std::to_string(args.size()));
}

const ArrayView& ArgumentPacker::device_array(const Argument& arg, std::size_t index, bool any_type) const
{
    const KernelParameter& p = parameters_[index];
    bool fits = arg.is_array() && arg.array().memory == Memory::device && (any_type || arg.type() == p.element);
    if (fits) return arg.array();
    std::string expected = any_type ? "a device array" : std::string("a device array of ") + to_string(p.element);
    bool host = arg.is_array() && arg.array().memory == Memory::host;
    fail(index, expected, arg, host ? "arrays are never copied to the device implicitly" : "");
}

const void* ArgumentPacker::pack_one(const Argument& arg, std::size_t index, std::size_t struct_size,
                                     PackedArguments& out) const
{
    const KernelParameter& p = parameters_[index];
    switch (p.kind) {
    case ParameterKind::scalar: {
        void* slot = out.reserve(scalar_bytes(p.element));
        if (write_same_type_scalar_fast(arg, p.element, slot)) return slot;
        std::string why = try_convert_scalar(arg, p.element, slot);
        if (!why.empty()) fail(index, std::string("a ") + to_string(p.element) + " scalar", arg, why);
        return slot;
    }
    case ParameterKind::pointer:
    case ParameterKind::void_pointer: {
        bool any_type = p.kind == ParameterKind::void_pointer;
        // device_array()'s test inline; it is called for the error.
        const ArrayView& view = arg.is_array() && arg.array().memory == Memory::device &&
                                        (any_type || arg.type() == p.element)
                                    ? arg.array()
                                    : device_array(arg, index, any_type);
        if (!contiguous(view))
            fail(index, "C-contiguous", arg, "a pointer parameter reads a flat buffer; declare it as an Array view to take strided views");
        auto* slot = static_cast<void**>(out.reserve(sizeof(void*)));
        *slot = view.data;
        return slot;
    }
    case ParameterKind::array_view:
    case ParameterKind::carray_view: {
        const ArrayView& view = device_array(arg, index, false);
        if (view.ndim != p.view_ndim) fail(index, "a " + std::to_string(p.view_ndim) + "D array", arg);
        bool contiguous = p.kind == ParameterKind::carray_view;
        if (contiguous && !view.c_contiguous())
            fail(index, "C-contiguous", arg, "declare the parameter as Array" + std::to_string(p.view_ndim) + "D to take strided views");
        auto* slot = static_cast<std::int64_t*>(out.reserve(p.packed_size()));
        std::memcpy(slot, &view.data, sizeof(void*));
        std::memcpy(slot + 1, view.shape, sizeof(std::int64_t) * static_cast<std::size_t>(view.ndim));
        if (!contiguous)
            std::memcpy(slot + 1 + view.ndim, view.strides, sizeof(std::int64_t) * static_cast<std::size_t>(view.ndim));
        return slot;
    }
    case ParameterKind::structure: {
        if (!arg.is_struct()) fail(index, "a value of struct " + p.ctype, arg);
        const StructValue& value = arg.structure();
        if (value.type_name && p.ctype != value.type_name) fail(index, "a value of struct " + p.ctype, arg);
        if (struct_size != 0 && value.size != struct_size)
            fail(index, "a struct of " + std::to_string(struct_size) + " bytes (the size the driver reports for " + p.ctype + ")", arg);
        return value.data;  // the driver copies `size` bytes from here at launch
    }
    }
    return nullptr;
}

void ArgumentPacker::pack(std::span<const Argument> args, std::span<const std::size_t> struct_sizes,
                          PackedArguments& out) const
{
    check_count(args);
    for (std::size_t i = 0; i < args.size(); ++i)
        out.push(pack_one(args[i], i, i < struct_sizes.size() ? struct_sizes[i] : 0, out));
}

void ArgumentPacker::check(std::span<const Argument> args) const
{
    PackedArguments scratch;
    pack(args, {}, scratch);
}

}  // namespace ck
