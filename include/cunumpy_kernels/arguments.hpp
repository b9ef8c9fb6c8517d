// Kernel arguments: scalars, array views and structs passed by value.
//
// Kernels take positional arguments only, as in the cunumpy kernels guide.
// An array is passed as a view (data pointer, element type, shape, strides,
// host or device memory); nothing is ever copied implicitly except by the
// documented fallback of a kernel without CUDA version. Arguments refer to
// the caller's memory: a view or struct value must outlive the call it is
// passed to.
#pragma once

#include "cunumpy_kernels/export.hpp"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

namespace ck {

/// Element types of arrays and scalars, named as NumPy names its dtypes.
/// C types map as on Linux (LP64): `int` is int32, `long` and `long long` int64.
enum class ElementType : std::uint8_t {
    boolean,
    int8,
    uint8,
    int16,
    uint16,
    int32,
    uint32,
    int64,
    uint64,
    float32,
    float64,
    complex64,
    complex128,
};

/// "bool", "int8", ..., "float64", "complex128".
CK_API const char* to_string(ElementType type);

/// Size of one element in bytes.
CK_API std::size_t size_of(ElementType type);

/// Whether a type is a (signed or unsigned) integer, not bool.
CK_API bool is_integer(ElementType type);

/// The ElementType of a C++ arithmetic type (or std::complex<float|double>).
template <typename T>
constexpr ElementType element_type_of()
{
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, bool>)
        return ElementType::boolean;
    else if constexpr (std::is_same_v<U, float>)
        return ElementType::float32;
    else if constexpr (std::is_same_v<U, double>)
        return ElementType::float64;
    else if constexpr (std::is_same_v<U, std::complex<float>>)
        return ElementType::complex64;
    else if constexpr (std::is_same_v<U, std::complex<double>>)
        return ElementType::complex128;
    else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) {
        if constexpr (sizeof(U) == 1)
            return ElementType::int8;
        else if constexpr (sizeof(U) == 2)
            return ElementType::int16;
        else if constexpr (sizeof(U) == 4)
            return ElementType::int32;
        else
            return ElementType::int64;
    } else {
        static_assert(std::is_integral_v<U> && std::is_unsigned_v<U>, "no ElementType for this type");
        if constexpr (sizeof(U) == 1)
            return ElementType::uint8;
        else if constexpr (sizeof(U) == 2)
            return ElementType::uint16;
        else if constexpr (sizeof(U) == 4)
            return ElementType::uint32;
        else
            return ElementType::uint64;
    }
}

/// Where an array's memory is: in host memory or on the current CUDA device.
enum class Memory : std::uint8_t { host, device };

/// The most dimensions an ArrayView holds. cunumpy's Array views go to 16;
/// views of more than 8 dimensions are not supported here.
inline constexpr int max_array_dims = 8;

/// A view of an array the caller owns: what cunumpy's Array<N>D<T> and
/// CArray<N>D<T> (cunumpy/array_view.cuh) carry, plus where it lives.
struct CK_API ArrayView {
    void* data = nullptr;  ///< first element (host pointer or device address)
    ElementType type = ElementType::float64;
    Memory memory = Memory::host;
    int ndim = 0;                               ///< 0 to max_array_dims
    std::int64_t shape[max_array_dims] = {};    ///< elements per axis
    std::int64_t strides[max_array_dims] = {};  ///< in elements, not bytes (as array_view.cuh)

    /// Number of elements (1 for ndim 0).
    std::int64_t size() const;
    /// Row-major without gaps (an empty array counts as contiguous).
    bool c_contiguous() const;
    /// Element offsets of the lowest and one past the highest element the
    /// view reaches (negative strides allowed): the span a copy must cover.
    std::pair<std::int64_t, std::int64_t> element_span() const;
};

/// A C-ordered view of `data` with `shape`. Throws ArgumentError when the
/// shape has more than max_array_dims axes or a negative extent.
CK_API ArrayView make_array_view(void* data, ElementType type, std::span<const std::int64_t> shape, Memory memory);

/// A view with explicit strides (in elements), e.g. `storage[:, :n]`.
CK_API ArrayView make_strided_view(void* data, ElementType type, std::span<const std::int64_t> shape,
                                   std::span<const std::int64_t> strides, Memory memory);

/// A C-ordered view of host memory: `host_array(x.data(), {n})`.
template <typename T>
ArrayView host_array(T* data, std::initializer_list<std::int64_t> shape)
{
    return make_array_view(const_cast<std::remove_cv_t<T>*>(data), element_type_of<T>(),
                           std::span<const std::int64_t>(shape.begin(), shape.size()), Memory::host);
}

/// A C-ordered view of device memory at `address` holding elements of T.
template <typename T>
ArrayView device_array(std::uint64_t address, std::initializer_list<std::int64_t> shape)
{
    return make_array_view(reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), element_type_of<T>(),
                           std::span<const std::int64_t>(shape.begin(), shape.size()), Memory::device);
}

/// The bytes of a struct passed by value (Struphy's marker and domain
/// structs). Refers to the caller's object; `type_name` (optional) is
/// compared with the type the kernel declares.
struct StructValue {
    const void* data = nullptr;
    std::size_t size = 0;
    const char* type_name = nullptr;
};

/// A struct value of `value`, whose type the kernel declares as `type_name`.
template <typename T>
StructValue struct_value(const T& value, const char* type_name = nullptr)
{
    static_assert(std::is_trivially_copyable_v<T>, "structs are passed by value: the type must be trivially copyable");
    return StructValue{&value, sizeof(T), type_name};
}

/// One positional argument: a scalar, an array view or a struct value.
/// Built implicitly from C++ arithmetic values, ArrayView and StructValue, so
/// that `kernel(x_view, v_view, 0.1, n)` reads like the Python call. Raw
/// pointers are rejected at compile time: wrap them in a view so that the
/// element type and memory are known.
class CK_API Argument {
public:
    enum class Kind : std::uint8_t { scalar, array, structure };

    template <typename T>
    requires(std::is_arithmetic_v<T>) Argument(T value) : kind_(Kind::scalar), type_(element_type_of<T>())
    {
        if constexpr (std::is_same_v<T, bool>)
            payload_.scalar.value.b = value;
        else if constexpr (std::is_floating_point_v<T>)
            payload_.scalar.value.f = static_cast<double>(value);
        else if constexpr (std::is_signed_v<T>)
            payload_.scalar.value.i = static_cast<std::int64_t>(value);
        else
            payload_.scalar.value.u = static_cast<std::uint64_t>(value);
    }
    Argument(std::complex<float> value);
    Argument(std::complex<double> value);
    /// Throws ArgumentError when `view.ndim` is outside 0 to max_array_dims
    /// (a view filled in by hand): nothing reads past its shape and strides.
    Argument(const ArrayView& view) : kind_(Kind::array), type_(view.type), payload_(view)
    {
        if (static_cast<unsigned>(view.ndim) > static_cast<unsigned>(max_array_dims)) [[unlikely]]
            throw_view_rank(view.ndim);
    }
    Argument(const StructValue& value) : kind_(Kind::structure), type_(ElementType::uint8), payload_(value) {}
    Argument(const void*) = delete;  // a raw pointer has no element type, shape or memory

    Kind kind() const { return kind_; }
    /// The scalar's type, or the array's element type.
    ElementType type() const { return type_; }
    bool is_scalar() const { return kind_ == Kind::scalar; }
    bool is_array() const { return kind_ == Kind::array; }
    bool is_struct() const { return kind_ == Kind::structure; }
    /// An array in device memory.
    bool on_device() const { return kind_ == Kind::array && payload_.array.memory == Memory::device; }

    /// The view of an array argument; an empty view (ndim 0, no data) for a
    /// scalar or a struct. An argument holds one of a scalar, a view and a
    /// struct value.
    const ArrayView& array() const { return kind_ == Kind::array ? payload_.array : no_array; }
    /// The view to change (the fallback points it at a host copy). Throws
    /// ArgumentError for a scalar or a struct, which hold no view.
    ArrayView& array()
    {
        if (kind_ != Kind::array) [[unlikely]]
            throw_not_an_array();
        return payload_.array;
    }
    /// The value of a struct argument; an empty one (no data, 0 bytes) for a
    /// scalar or an array.
    const StructValue& structure() const { return kind_ == Kind::structure ? payload_.structure : no_struct; }

    /// The scalar's value, read by type: `as_int` for signed integers,
    /// `as_uint` for unsigned ones, `as_double` for floats (and the real part
    /// of a complex), `as_complex` for complex values, `as_bool`. Another
    /// type's accessor reads the value's bits as that type. 0 (or false) for
    /// an array or a struct.
    std::int64_t as_int() const { return kind_ == Kind::scalar ? payload_.scalar.value.i : 0; }
    std::uint64_t as_uint() const { return kind_ == Kind::scalar ? payload_.scalar.value.u : 0; }
    double as_double() const { return kind_ == Kind::scalar ? payload_.scalar.value.f : 0.0; }
    bool as_bool() const { return kind_ == Kind::scalar && payload_.scalar.value.b; }
    std::complex<double> as_complex() const
    {
        if (kind_ != Kind::scalar) return {};
        return {payload_.scalar.value.f, payload_.scalar.imag};
    }

    /// "a float64 scalar", "a 2D float64 device array", "a struct (Markers, 48 bytes)".
    std::string describe() const;

private:
    [[noreturn]] static void throw_view_rank(int ndim);
    [[noreturn]] void throw_not_an_array() const;
    static constexpr ArrayView no_array{};
    static constexpr StructValue no_struct{};

    struct Scalar {
        union {
            std::int64_t i;
            std::uint64_t u;
            double f;
            bool b;
        } value{};
        double imag = 0;
    };
    // One of the three, as kind_ says: a call builds an Argument for every
    // parameter, and a scalar then writes 16 bytes, not a zeroed 144-byte view.
    union Payload {
        Payload() : scalar() {}
        explicit Payload(const ArrayView& view) : array(view) {}
        explicit Payload(const StructValue& value) : structure(value) {}
        Scalar scalar;
        ArrayView array;
        StructValue structure;
    };
    static_assert(std::is_trivially_copyable_v<ArrayView> && std::is_trivially_copyable_v<StructValue>,
                  "Argument copies its payload as bytes");

    Kind kind_;
    ElementType type_;
    Payload payload_;
};

/// Converts a scalar argument to `to` as cunumpy casts Python and NumPy
/// scalars: an integer fits any integer type whose range holds it, and any
/// float or complex type; a float any float or complex type; a bool bool and
/// the integer types; a complex only complex types. Writes size_of(to) bytes
/// to `out`. Throws ArgumentError with `what` ("kernel 'push': argument 3
/// (double dt)") and the reason: an array or struct, a value out of range, a
/// type that would lose information.
CK_API void convert_scalar(const Argument& argument, ElementType to, void* out, const std::string& what);

}  // namespace ck
