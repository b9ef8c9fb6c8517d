// The types of a `__global__` kernel's parameters, for argument checks.
//
// The declaration is read by lib/signatures (read_cuda_declaration), the
// reader check-signatures uses: one lexer and one preprocessor model, so the
// launch checks the declaration the compiler compiles (not a stale one in
// `#if 0` or in a string) and reads what check-signatures reads (macros for
// `__global__` and `__restrict__`, attributes, `__launch_bounds__`). This
// file only types each parameter, within what cunumpy's
// parse_cuda_signature accepts: C scalar types, pointers to them, `void*`,
// cunumpy's Array<N>D<T> and CArray<N>D<T> views, and structs by value; a
// declaration it cannot type is an error at the first CUDA call. The
// parameter count and sizes are checked against the loaded module
// (cuFuncGetParamInfo, or the cubin's own records on older drivers:
// compilers/cubin_parameters.hpp).
#pragma once

#include "cunumpy_kernels/arguments.hpp"
#include "signatures/cuda_signature_reader.hpp"
#include "source/project_headers.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ck {

enum class ParameterKind : std::uint8_t {
    scalar,        ///< `double dt`
    pointer,       ///< `double* x`: a C-contiguous device array of that element type
    void_pointer,  ///< `void* p`: any device array
    array_view,    ///< `Array2D<double> a`: pointer, shape, strides
    carray_view,   ///< `CArray2D<double> a`: pointer, shape (C-contiguous only)
    structure,     ///< `Markers m`: a struct by value, size checked by the driver
};

struct KernelParameter {
    std::string name;
    std::string ctype;  ///< "double", "Array2D<double>", "Markers"
    ParameterKind kind = ParameterKind::scalar;
    ElementType element = ElementType::float64;  ///< scalar, pointee or view element type
    int view_ndim = 0;

    /// Bytes the parameter takes in the launch (for structs: 0, the driver knows).
    std::size_t packed_size() const;
};

/// Types one parameter (or a struct's field) from the tokens of its type
/// without its name. Throws SourceError "<where>: ..." for a type that cannot
/// be checked, as read_global_signature does.
KernelParameter type_kernel_parameter(const std::string& name, const std::vector<signatures::CppToken>& type,
                                      const std::string& where);

/// "argument 3 (double dt)", "argument 0 (double* x)": how errors name it.
std::string describe_parameter(const KernelParameter& parameter, std::size_t index);

struct GlobalSignature {
    std::vector<KernelParameter> parameters;
    int line = 0;  ///< of the kernel's name, as check-signatures reports it
};

/// Reads `__global__ void <name>(...)` of `source` (the text of `file`) as
/// read_cuda_signature does, the definition when there are several
/// declarations, and types its parameters. For a template, `template_args`
/// (kernel_entry's, one per template parameter) replace the type
/// parameters' names in the parameter types, as cunumpy's
/// parse_cuda_signature does. Throws SourceError "file:line: ..." when there
/// is no such function or check-signatures could not read it (its reason),
/// it is a template and `template_args` is empty, two definitions (in `#if`
/// branches) take other types, or a parameter type cannot be checked
/// (`double**`, a pointer to a struct, a reference, a function pointer).
/// `includes`: the project headers whose macros count, as for check-signatures.
GlobalSignature read_global_signature(const std::string& source, const std::string& name,
                                      const std::filesystem::path& file,
                                      const std::vector<std::string>& template_args = {},
                                      signatures::IncludeSource* includes = nullptr);

/// read_global_signature from a reading of the declaration made already
/// (`found`, read_cuda_declaration of `name`). Throws as read_global_signature.
GlobalSignature global_signature_of(const signatures::CudaKernelDeclaration& found, const std::string& name,
                                    const std::filesystem::path& file, const std::vector<std::string>& template_args);

}  // namespace ck
