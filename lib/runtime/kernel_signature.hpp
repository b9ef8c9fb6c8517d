// Minimal readers of a kernel's parameter lists: the `__global__` signature of
// the CUDA kernel (names and types, for argument checks) and the `def` of the
// Python host kernel (names, for check_signatures).
//
// Scoped to what the runtime needs, following cunumpy's parse_cuda_signature:
// C scalar types, pointers to them, `void*`, cunumpy's Array<N>D<T> and
// CArray<N>D<T> views, and structs by value. To be replaced by the full
// signature readers of lib/signatures/ once that branch is merged.
#pragma once

#include "cunumpy_kernels/arguments.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

enum class ParameterKind {
    scalar,        ///< `double dt`
    pointer,       ///< `double* x`: a C-contiguous device array of that element type
    void_pointer,  ///< `void* p`: any device array
    array_view,    ///< `Array2D<double> a`: pointer, shape, strides
    carray_view,   ///< `CArray2D<double> a`: pointer, shape (C-contiguous only)
    structure,     ///< `Markers m`: a struct by value, size checked by the driver
};

struct KernelParameter {
    std::string name;
    std::string ctype;                         ///< "double", "Array2D<double>", "Markers"
    ParameterKind kind = ParameterKind::scalar;
    ElementType element = ElementType::float64;  ///< scalar, pointee or view element type
    int view_ndim = 0;

    /// Bytes the parameter takes in the launch (for structs: 0, the driver knows).
    std::size_t packed_size() const;
};

/// "argument 3 (double dt)", "argument 0 (double* x)": how errors name it.
std::string describe_parameter(const KernelParameter& parameter, std::size_t index);

struct GlobalSignature {
    std::vector<KernelParameter> parameters;
    int line = 0;  ///< of `__global__`
};

/// Reads `__global__ void <name>(...)` of `source` (the text of `file`), the
/// definition when there are several declarations. Throws SourceError
/// "file:line: ..." when there is no such function, it is a template, or a
/// parameter type cannot be checked (a macro, `double**`, a pointer to a
/// struct).
GlobalSignature read_global_signature(const std::string& source, const std::string& name,
                                      const std::filesystem::path& file);

/// The positional parameter names of `def <name>(...)` at the top level of a
/// Python module; nullopt when there is no such function.
std::optional<std::vector<std::string>> read_python_parameters(const std::string& source, const std::string& name);

}  // namespace ck
