// Argument values and cunumpy's scalar conversion rules.
#include "cunumpy_kernels/arguments.hpp"
#include "cunumpy_kernels/error.hpp"

#include "runtime/scalar_conversion.hpp"

#include <cstring>
#include <limits>

namespace ck {

namespace {

__extension__ typedef __int128 Int128;

struct Range {
    Int128 low;
    Int128 high;
};

template <typename T>
Range range_of()
{
    return {static_cast<Int128>(std::numeric_limits<T>::min()), static_cast<Int128>(std::numeric_limits<T>::max())};
}

Range integer_range(ElementType type)
{
    switch (type) {
        case ElementType::int8:
            return range_of<std::int8_t>();
        case ElementType::uint8:
            return range_of<std::uint8_t>();
        case ElementType::int16:
            return range_of<std::int16_t>();
        case ElementType::uint16:
            return range_of<std::uint16_t>();
        case ElementType::int32:
            return range_of<std::int32_t>();
        case ElementType::uint32:
            return range_of<std::uint32_t>();
        case ElementType::int64:
            return range_of<std::int64_t>();
        default:
            return range_of<std::uint64_t>();
    }
}

bool is_float(ElementType type) { return type == ElementType::float32 || type == ElementType::float64; }

bool is_complex(ElementType type) { return type == ElementType::complex64 || type == ElementType::complex128; }

bool is_signed_integer(ElementType type)
{
    return type == ElementType::int8 || type == ElementType::int16 || type == ElementType::int32 ||
           type == ElementType::int64;
}

template <typename T>
void put(void* out, T value)
{
    std::memcpy(out, &value, sizeof value);
}

void put_integer(void* out, ElementType to, Int128 value)
{
    switch (to) {
        case ElementType::int8:
            put(out, static_cast<std::int8_t>(value));
            break;
        case ElementType::uint8:
            put(out, static_cast<std::uint8_t>(value));
            break;
        case ElementType::int16:
            put(out, static_cast<std::int16_t>(value));
            break;
        case ElementType::uint16:
            put(out, static_cast<std::uint16_t>(value));
            break;
        case ElementType::int32:
            put(out, static_cast<std::int32_t>(value));
            break;
        case ElementType::uint32:
            put(out, static_cast<std::uint32_t>(value));
            break;
        case ElementType::int64:
            put(out, static_cast<std::int64_t>(value));
            break;
        default:
            put(out, static_cast<std::uint64_t>(value));
            break;
    }
}

void put_number(void* out, ElementType to, double real, double imag)
{
    switch (to) {
        case ElementType::float32:
            put(out, static_cast<float>(real));
            break;
        case ElementType::float64:
            put(out, real);
            break;
        case ElementType::complex64:
            put(out, std::complex<float>(static_cast<float>(real), static_cast<float>(imag)));
            break;
        default:
            put(out, std::complex<double>(real, imag));
            break;
    }
}

std::string int_text(Int128 value)
{
    if (value < 0) return "-" + std::to_string(static_cast<std::uint64_t>(-value));
    return std::to_string(static_cast<std::uint64_t>(value));
}

}  // namespace

const char* to_string(ElementType type)
{
    static const char* const names[] = {"bool",  "int8",   "uint8",   "int16",   "uint16",    "int32",     "uint32",
                                        "int64", "uint64", "float32", "float64", "complex64", "complex128"};
    return names[static_cast<int>(type)];
}

std::size_t size_of(ElementType type)
{
    static const std::size_t sizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16};
    return sizes[static_cast<int>(type)];
}

bool is_integer(ElementType type) { return type != ElementType::boolean && !is_float(type) && !is_complex(type); }

std::int64_t ArrayView::size() const
{
    std::int64_t n = 1;
    for (int axis = 0; axis < ndim; ++axis) n *= shape[axis];
    return n;
}

bool ArrayView::c_contiguous() const
{
    if (size() == 0) return true;
    std::int64_t expected = 1;
    for (int axis = ndim - 1; axis >= 0; --axis) {
        if (shape[axis] != 1 && strides[axis] != expected) return false;
        expected *= shape[axis];
    }
    return true;
}

std::pair<std::int64_t, std::int64_t> ArrayView::element_span() const
{
    if (size() == 0) return {0, 0};
    std::int64_t low = 0, high = 0;
    for (int axis = 0; axis < ndim; ++axis) {
        std::int64_t reach = (shape[axis] - 1) * strides[axis];
        (reach < 0 ? low : high) += reach;
    }
    return {low, high + 1};
}

ArrayView make_strided_view(void* data, ElementType type, std::span<const std::int64_t> shape,
                            std::span<const std::int64_t> strides, Memory memory)
{
    if (shape.size() > static_cast<std::size_t>(max_array_dims))
        throw ArgumentError("an array view has at most " + std::to_string(max_array_dims) + " dimensions, got " +
                            std::to_string(shape.size()));
    if (strides.size() != shape.size())
        throw ArgumentError("an array view needs one stride per axis: " + std::to_string(shape.size()) + " axes, " +
                            std::to_string(strides.size()) + " strides");
    ArrayView view;
    view.data = data;
    view.type = type;
    view.memory = memory;
    view.ndim = static_cast<int>(shape.size());
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        if (shape[axis] < 0) throw ArgumentError("an array view's shape must be non-negative");
        view.shape[axis] = shape[axis];
        view.strides[axis] = strides[axis];
    }
    return view;
}

ArrayView make_array_view(void* data, ElementType type, std::span<const std::int64_t> shape, Memory memory)
{
    if (shape.size() > static_cast<std::size_t>(max_array_dims))
        return make_strided_view(data, type, shape, shape, memory);  // throws: too many axes
    std::int64_t strides[max_array_dims] = {};
    std::int64_t step = 1;
    for (std::size_t axis = shape.size(); axis-- > 0;) {
        strides[axis] = step;
        step *= shape[axis];
    }
    return make_strided_view(data, type, shape, std::span<const std::int64_t>(strides, shape.size()), memory);
}

Argument::Argument(std::complex<float> value) : kind_(Kind::scalar), type_(ElementType::complex64)
{
    payload_.scalar.value.f = value.real();
    payload_.scalar.imag = value.imag();
}

Argument::Argument(std::complex<double> value) : kind_(Kind::scalar), type_(ElementType::complex128)
{
    payload_.scalar.value.f = value.real();
    payload_.scalar.imag = value.imag();
}

void Argument::throw_view_rank(int ndim)
{
    throw ArgumentError("an array view has 0 to " + std::to_string(max_array_dims) + " dimensions, got ndim = " +
                        std::to_string(ndim) + "; make views with make_array_view or make_strided_view");
}

void Argument::throw_not_an_array() const
{
    throw ArgumentError("array() of " + describe() + ": only an array argument holds a view to change");
}

std::string Argument::describe() const
{
    switch (kind_) {
        case Kind::scalar:
            return std::string("a ") + to_string(type_) + " scalar";
        case Kind::array:
            return "a " + std::to_string(payload_.array.ndim) + "D " + to_string(type_) +
                   (payload_.array.memory == Memory::device ? " device array" : " host array");
        case Kind::structure:
            return std::string("a struct (") +
                   (payload_.structure.type_name ? std::string(payload_.structure.type_name) + ", " : "") +
                   std::to_string(payload_.structure.size) + " bytes)";
    }
    return "?";
}

std::string try_convert_scalar(const Argument& argument, ElementType to, void* out)
{
    if (!argument.is_scalar()) return "not a scalar";
    ElementType from = argument.type();
    if (from == ElementType::boolean) {
        if (to == ElementType::boolean) return put(out, argument.as_bool()), "";
        if (is_integer(to)) return put_integer(out, to, argument.as_bool() ? 1 : 0), "";
        return "a bool converts to bool and integer types only";
    }
    if (is_integer(from)) {
        Int128 value = is_signed_integer(from) ? Int128(argument.as_int()) : Int128(argument.as_uint());
        if (is_integer(to)) {
            Range range = integer_range(to);
            if (value < range.low || value > range.high)
                return int_text(value) + " is out of range [" + int_text(range.low) + ", " + int_text(range.high) + "]";
            return put_integer(out, to, value), "";
        }
        if (is_float(to) || is_complex(to)) return put_number(out, to, static_cast<double>(value), 0.0), "";
        return "an integer does not convert to bool";
    }
    if (is_float(from)) {
        if (is_float(to) || is_complex(to)) return put_number(out, to, argument.as_double(), 0.0), "";
        return "a float would lose information";
    }
    if (is_complex(to)) return put_number(out, to, argument.as_double(), argument.as_complex().imag()), "";
    return "a complex would lose information";
}

void convert_scalar(const Argument& argument, ElementType to, void* out, const std::string& what)
{
    std::string why = try_convert_scalar(argument, to, out);
    if (!why.empty())
        throw ArgumentError(what + " expects a " + to_string(to) + " scalar: " + why + " (got " + argument.describe() +
                            ")");
}

}  // namespace ck
