// Running CUDA jobs for `build`: compile, check, and publish a kernel's
// targets all or none, as JobResults.
#pragma once

#include "builder/build.hpp"
#include "cuda_job/cuda_job.hpp"
#include "cuda_job/cuda_planner.hpp"
#include "struct_headers/cubin_layout_check.hpp"

#include <string>
#include <vector>

namespace ck {

/// A CUDA job compiled and checked, not published yet.
struct CompiledCudaJob {
    const CudaJob* job = nullptr;
    JobResult result;          ///< failed (the log says why), or built once published
    CudaCompileOutput output;  ///< the artifact and the compiler's log
    std::string failure;       ///< why it failed, in a few words ("check 'architecture' failed"); "" when not
    bool remembered = true;    ///< a failure is recorded for status; not when an input changed during the compile
};

/// What changed in the includes of `job` since `planner` planned it, in the
/// words of describe_input_change ("header <kernel>/common.cuh changed"),
/// from a fresh scan (CudaPlanner::rescanned_inputs); "" when nothing did.
/// Never throws: an include no longer found is a change too.
std::string inputs_changed_since(const CudaPlanner& planner, const CudaJob& job);

/// The compiler reads the headers from disk: one saved while it ran went into
/// the artifacts under the key of the old content. When `changed` (what
/// inputs_changed_since says after the compile) is not empty, every target of
/// the compile fails with it, unremembered (not a failure of these inputs),
/// and the next build compiles the new content.
void refuse_if_inputs_changed(std::vector<CompiledCudaJob>& targets, const std::string& changed);

/// Compiles `job` and checks the artifact. A compile error, a failed check or
/// a toolchain error is a failed result with the log, never an exception.
CompiledCudaJob compile_cuda_job(const CudaJob& job, const CudaCompiler& compiler);

/// Fails `compiled` with `failure` (in a few words) and `log_line` added to its log.
void fail_compiled(CompiledCudaJob& compiled, const std::string& failure, const std::string& log_line);

/// Compares each built cubin of `targets` (one kernel's) with the layout the
/// runtime packs (check_cubin_layout): a cubin that disagrees, or whose
/// layout cannot be read, fails as a failed artifact check does.
void check_parameter_layouts(std::vector<CompiledCudaJob>& targets, const KernelLayout& layout);

/// Splits `jobs` (targets of one kernel) into the groups that
/// compile_cuda_jobs compiles in one compiler run: the compiler's
/// target_groups among jobs whose compile requests differ only in target.
/// Indices into `jobs`; each job in one group, order kept.
std::vector<std::vector<std::size_t>> cuda_compile_groups(const std::vector<const CudaJob*>& jobs,
                                                          const CudaCompiler& compiler);

/// Compiles a group of cuda_compile_groups in one run
/// (CudaCompiler::compile_targets) and checks each artifact, as
/// compile_cuda_job does; each result's `seconds` is the run's wall time and
/// its `phases` the compiler's phase times for that target.
std::vector<CompiledCudaJob> compile_cuda_jobs(const std::vector<const CudaJob*>& jobs, const CudaCompiler& compiler);

/// Publishes the compiled targets of one kernel in `store`, all or none: when
/// any failed, no entry is published and the others fail too, their log
/// naming the target that failed. Entries published earlier are untouched.
/// Records the latest entries, or the failures, for `status`. Returns one
/// result per target, in order.
std::vector<JobResult> publish_cuda_kernel(std::vector<CompiledCudaJob> targets, const EntryStore& store);

/// The JobResult of a job found in the cache.
JobResult hit_result(const CudaJob& job, const EntryStore& store);

}  // namespace ck
