// One layout check for every command that reads a built cubin (`build` on a
// hit and after a compile, `status`): the cubin's parameter layout against
// what the runtime packs, with the configured struct headers' layouts.
//
// An entry's key covers the kernel's source, every header it includes and
// its template arguments, but not the struct headers it does not include (a
// kernel with its own copy of a struct): so a hit is checked as a fresh
// compile is. The outcome is remembered in the source record under the
// kernel source's digest, asking about the entry's key, its target and the
// structs' layouts, so a warm run reads no cubin again.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "scheduler/job_result.hpp"
#include "source/source_record.hpp"
#include "struct_headers/cubin_layout_check.hpp"

#include <optional>
#include <string>

namespace ck {

/// Checks the cubins of finished jobs (hits and builds) of one tree. Not
/// thread-safe: one caller at a time.
class CubinLayoutChecker {
public:
    CubinLayoutChecker(const Config& config, SourceRecord& record) : config_(config), record_(record) {}

    /// "" when `job` (of `kernel`) has nothing to check (a PTX target, no
    /// artifact, a kernel without a CUDA file) or its cubin lays out the
    /// parameters as the runtime packs them; else why not, naming the
    /// kernel, the parameter and both layouts (or the struct headers'
    /// problem, such as a struct defined by two headers). Never throws.
    std::string problem(const KernelSource& kernel, const JobResult& job);

private:
    std::string question(const std::string& key, const std::string& target) const;
    std::string cubin_problem(const KernelSource& kernel, const JobResult& job);

    const Config& config_;
    SourceRecord& record_;
    std::optional<StructLayouts> structs_;
    std::string structs_error_;
    std::optional<KernelLayout> layout_;
    std::string module_;
};

}  // namespace ck
