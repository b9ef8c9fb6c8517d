// A kernel tree and its cache in a temporary folder, with the pieces of the
// runtime's first call built over a fake compiler (no toolkit): for the
// tests of the kernel's key, the verified entry and the build on a miss.
#pragma once

#include "cache/cache.hpp"
#include "compilers/tool_probe.hpp"
#include "cuda_job/cuda_commit.hpp"
#include "cunumpy_kernels/package.hpp"
#include "runtime/entry_lookup.hpp"
#include "runtime/kernel_keys.hpp"
#include "runtime/miss_build.hpp"

#include "fake_cuda_compiler.hpp"
#include "runtime_package.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace ck::test {

struct FirstCallTree {
    FirstCallTree()
    {
        tree.write("src/sim/__init__.py", "");
        tree.write("src/sim/kernels/__init__.py", "");
        tree.write("src/sim/kernels/push/push_kernels.py",
                   "def push(x: 'float[:]', e: 'float[:]', dt: float, n: int):\n    pass\n");
        tree.write("src/sim/kernels/push/push_cuda.cu", push_cuda);
        config.cache_dir = tree / "cache";
        config.compiler = CudaCompilerKind::nvrtc;
        std::filesystem::create_directories(tree / "cache");
        location = planned_cache_location("sim", config.cache_dir);
        probe = std::make_unique<ToolProbe>(location.root / ".probes", std::nullopt);
        push = kernel_of_file(source_file(), config).value();
    }

    std::filesystem::path source_file() const { return tree / "src/sim/kernels/push/push_cuda.cu"; }

    /// The keys of a fresh process; no racy margin, as tests cannot date a change back.
    std::unique_ptr<KernelKeys> keys(KeyRecordMode mode = KeyRecordMode::on, bool read_only = false)
    {
        return std::make_unique<KernelKeys>(config, key_compiler(config, *probe, compiler), *probe, location, mode,
                                            read_only, &cleared, std::chrono::nanoseconds{0});
    }

    std::unique_ptr<EntryLookup> entries(bool read_only = false, bool identity_known = true)
    {
        return std::make_unique<EntryLookup>(location, identity_known, read_only, cleared);
    }

    std::unique_ptr<MissBuild> miss_build(const EntryLookup& lookup, bool read_only = false)
    {
        return std::make_unique<MissBuild>(config, location, *probe, compiler, lookup, read_only,
                                           [this](const std::string& warning) { warnings.push_back(warning); });
    }

    /// A planned job of `push` for `target`, as the runtime's first call plans it.
    CudaJob planned_job(const std::string& target = "sm_90") { return keys(KeyRecordMode::off)->job(push, target); }

    /// The fake compiler's output for `job`, as a build would get it.
    CudaCompileOutput output_for(const CudaJob& job) const { return compiler.compile(compile_request(job)); }

    TempTree tree;
    Config config;
    CacheLocation location;
    std::unique_ptr<ToolProbe> probe;
    FakeCudaCompiler compiler;
    ClearedFolders cleared;
    KernelSource push;
    std::vector<std::string> warnings;
};

}  // namespace ck::test
