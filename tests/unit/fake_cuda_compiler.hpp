// A CUDA compiler that needs no toolkit: it answers every compile with fixed
// cubin bytes (crafted_cubin.hpp) and counts its compiles, for tests of the
// runtime's key, lookup and build on a miss.
#pragma once

#include "compilers/cuda_compiler.hpp"

#include "crafted_cubin.hpp"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace ck::test {

class FakeCudaCompiler : public CudaCompiler {
public:
    std::string identity() const override { return "fake-nvrtc 1.0"; }
    std::vector<std::filesystem::path> toolkit_include_dirs() const override { return {}; }
    const CompilerEnvironment& environment() const override { return environment_; }

    CudaCompileOutput compile(const CudaCompileRequest& request) const override
    {
        ++compiles;
        std::this_thread::sleep_for(delay);
        CudaCompileOutput output;
        output.ok = ok;
        output.log = log;
        if (ok) output.artifact = cubin;
        output.entry_symbol = request.entry_expression();
        return output;
    }

    /// What every compile returns: an sm_90 cubin whose entry is `push`.
    std::string cubin = craft({});
    bool ok = true;  ///< false: the source "does not compile", with `log`
    std::string log;
    std::chrono::milliseconds delay{0};  ///< how long a compile takes
    mutable std::atomic<int> compiles{0};

private:
    CompilerEnvironment environment_;
};

}  // namespace ck::test
