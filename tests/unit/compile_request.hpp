// A one-kernel compile request in a temporary tree, for the compiler tests.
#pragma once

#include "compilers/cuda_compiler.hpp"
#include "temp_tree.hpp"

#include <string>

namespace ck::test {

/// `source` written as `k/push_cuda.cu`, entry `push`, its folder the one `-I`.
inline CudaCompileRequest request(const TempTree& tree, const std::string& source, const std::string& target)
{
    auto file = tree.write("k/push_cuda.cu", source);
    CudaCompileRequest request;
    request.source_file = file;
    request.source = source;
    request.kernel = "push";
    request.target = target;
    request.include_dirs = {file.parent_path()};
    return request;
}

inline const std::string extern_c_kernel =
    "extern \"C\" __global__ void push(double* x, long long n)\n"
    "{ long long i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1; }\n";

}  // namespace ck::test
