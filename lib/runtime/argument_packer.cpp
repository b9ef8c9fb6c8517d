#include "runtime/argument_packer.hpp"

#include "cunumpy_kernels/error.hpp"
#include "runtime/scalar_conversion.hpp"

#include <cstring>

namespace ck {

namespace {

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

/// A scalar of the 8-byte type `to` needs no conversion: its bits are the value.
bool same_eight_byte_scalar(const Argument& arg, ElementType to)
{
    bool eight = to == ElementType::float64 || to == ElementType::int64 || to == ElementType::uint64;
    return eight && arg.is_scalar() && arg.type() == to;
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
    std::size_t used = 0;
    for (const auto& p : parameters_) {
        std::size_t size = p.kind == ParameterKind::scalar ? scalar_bytes(p.element) : p.packed_size();
        Slot slot{0, static_cast<std::uint32_t>(size), p.kind, p.element, static_cast<std::uint8_t>(p.view_ndim)};
        if (size > 0) {
            std::size_t align = size > 8 ? 16 : 8;  // as PackedArguments::reserve
            std::size_t at = (used + align - 1) & ~(align - 1);
            slot.offset = static_cast<std::uint32_t>(at);
            used = at + size;
        }
        slots_.push_back(slot);
    }
    fixed_ = parameters_.size() <= PackedArguments::inline_count && used <= PackedArguments::inline_bytes;
    fixed_bytes_ = used;
}

void ArgumentPacker::fail(std::size_t index, const std::string& expected, const Argument& arg,
                          const std::string& hint) const
{
    throw ArgumentError("kernel '" + kernel_ + "': " + describe_parameter(parameters_[index], index) + " must be " +
                        expected + ", got " + arg.describe() + (hint.empty() ? "" : "; " + hint));
}

void ArgumentPacker::count_error(std::span<const Argument> args) const
{
    std::string names;
    for (const auto& p : parameters_) names += (names.empty() ? "" : ", ") + p.name;
    throw ArgumentError("kernel '" + kernel_ + "' takes " + std::to_string(parameters_.size()) + " arguments (" +
                        names + "), got " + std::to_string(args.size()));
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

// Inlined into both loops: a call spends most of its own time here.
[[gnu::always_inline]] inline bool ArgumentPacker::place(const Argument& arg, const Slot& slot, std::size_t index,
                                                         std::size_t struct_size, void*& at) const
{
    switch (slot.kind) {
        case ParameterKind::scalar:
            if (same_eight_byte_scalar(arg, slot.element)) {
                std::uint64_t bits = arg.as_uint();  // the same bits as as_int() and as_double()
                std::memcpy(at, &bits, sizeof bits);
                return true;
            }
            return try_convert_scalar(arg, slot.element, at).empty();
        case ParameterKind::pointer:
        case ParameterKind::void_pointer: {
            if (!arg.on_device()) return false;
            const ArrayView& view = arg.array();
            if ((slot.kind == ParameterKind::pointer && arg.type() != slot.element) || !contiguous(view)) return false;
            std::memcpy(at, &view.data, sizeof(void*));
            return true;
        }
        case ParameterKind::array_view:
        case ParameterKind::carray_view: {
            if (!arg.on_device()) return false;
            const ArrayView& view = arg.array();
            bool strided = slot.kind == ParameterKind::array_view;
            if (arg.type() != slot.element || view.ndim != slot.view_ndim || (!strided && !view.c_contiguous()))
                return false;
            auto* words = static_cast<std::int64_t*>(at);
            auto ndim = static_cast<std::size_t>(view.ndim);
            std::memcpy(words, &view.data, sizeof(void*));
            std::memcpy(words + 1, view.shape, sizeof(std::int64_t) * ndim);
            if (strided) std::memcpy(words + 1 + ndim, view.strides, sizeof(std::int64_t) * ndim);
            return true;
        }
        case ParameterKind::structure: {
            if (!arg.is_struct()) return false;
            const StructValue& value = arg.structure();
            if ((value.type_name && parameters_[index].ctype != value.type_name) ||
                (struct_size != 0 && value.size != struct_size))
                return false;
            at = const_cast<void*>(value.data);  // the driver copies `size` bytes from here at launch
            return true;
        }
    }
    return false;
}

void ArgumentPacker::refuse(const Argument& arg, std::size_t index, std::size_t struct_size) const
{
    const KernelParameter& p = parameters_[index];
    switch (p.kind) {
        case ParameterKind::scalar: {
            std::byte scratch[16];
            std::string why = try_convert_scalar(arg, p.element, scratch);
            fail(index, std::string("a ") + to_string(p.element) + " scalar", arg, why);
        }
        case ParameterKind::pointer:
        case ParameterKind::void_pointer:
            device_array(arg, index, p.kind == ParameterKind::void_pointer);
            fail(index, "C-contiguous", arg,
                 "a pointer parameter reads a flat buffer; declare it as an Array view to take strided views");
        case ParameterKind::array_view:
        case ParameterKind::carray_view: {
            const ArrayView& view = device_array(arg, index, false);
            if (view.ndim != p.view_ndim) fail(index, "a " + std::to_string(p.view_ndim) + "D array", arg);
            fail(index, "C-contiguous", arg,
                 "declare the parameter as Array" + std::to_string(p.view_ndim) + "D to take strided views");
        }
        case ParameterKind::structure: {
            if (!arg.is_struct() || (arg.structure().type_name && p.ctype != arg.structure().type_name))
                fail(index, "a value of struct " + p.ctype, arg);
            fail(index,
                 "a struct of " + std::to_string(struct_size) + " bytes (the size the driver reports for " + p.ctype +
                     ")",
                 arg);
        }
    }
    fail(index, "a supported argument", arg);
}

bool ArgumentPacker::pack_fixed(std::span<const Argument> args, std::span<const std::size_t> struct_sizes,
                                PackedArguments& out) const
{
    std::byte* storage = out.storage_.data();
    void** pointers = out.inline_pointers_.data();
    const Slot* slots = slots_.data();
    std::size_t count = slots_.size();
    for (std::size_t i = 0; i < count; ++i) {
        void* at = storage + slots[i].offset;
        if (!place(args[i], slots[i], i, i < struct_sizes.size() ? struct_sizes[i] : 0, at)) return false;
        pointers[i] = at;
    }
    out.used_ = fixed_bytes_;
    out.count_ = count;
    return true;
}

void ArgumentPacker::pack_each(std::span<const Argument> args, std::span<const std::size_t> struct_sizes,
                               PackedArguments& out) const
{
    check_count(args);
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::size_t struct_size = i < struct_sizes.size() ? struct_sizes[i] : 0;
        std::size_t used = out.used_;
        void* at = slots_[i].size > 0 ? out.reserve(slots_[i].size) : nullptr;
        if (!place(args[i], slots_[i], i, struct_size, at)) {
            out.used_ = used;  // a refused argument takes no room in an `out` that is used again
            refuse(args[i], i, struct_size);
        }
        out.push(at);
    }
}

void ArgumentPacker::check(std::span<const Argument> args) const
{
    PackedArguments scratch;
    pack(args, {}, scratch);
}

}  // namespace ck
