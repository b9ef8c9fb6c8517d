// One reader of `__global__` declarations for the whole library: the
// check-signatures path (read_cuda_signature, names only) and the runtime's
// launch checks (which also need each parameter's type) both go through
// read_cuda_declaration, so they cannot read different declarations from one
// file (a stale prototype in `#if 0`, a declaration inside a string).
#pragma once

#include "cunumpy_kernels/signature_read.hpp"
#include "signatures/cuda_declaration_scanner.hpp"
#include "source/project_headers.hpp"

#include <string_view>
#include <vector>

namespace ck::signatures {

/// Every declaration of one `__global__` function and what they say together.
struct CudaKernelDeclaration {
    SignatureRead read;  ///< exactly what read_cuda_signature reports
    /// read.status == found: the declarations that count (prototypes without
    /// parameter names dropped), in line order; all take the same names.
    std::vector<CudaDeclaration> declarations;
    std::size_t chosen = 0;  ///< found: the one `read` reports (the definition, else the first)
    /// Explicit instantiations of the name (`template __global__ void k<double>(...);`), in source order.
    std::vector<ExplicitInstantiation> instantiations;
};

/// Reads `__global__ ... <name>(...)` of CUDA C++ `source` as
/// read_cuda_signature documents it; with `includes`, the object-like
/// macros of the project headers it includes count too (ProjectHeaders).
/// Never throws; linear in the input (headers bounded by ProjectHeaders).
CudaKernelDeclaration read_cuda_declaration(std::string_view source, std::string_view name,
                                            IncludeSource* includes = nullptr);

/// read_cuda_declaration of the source whose LexScope::all lex is `tokens`.
CudaKernelDeclaration read_cuda_declaration_of_tokens(const std::vector<CppToken>& tokens, std::string_view name,
                                                      IncludeSource* includes = nullptr);

/// read_cuda_declaration(...).read, for check-signatures.
SignatureRead read_cuda_signature_with(std::string_view source, std::string_view name, IncludeSource* includes);

}  // namespace ck::signatures
