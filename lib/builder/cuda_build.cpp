#include "builder/cuda_build.hpp"

#include "compilers/artifact_check.hpp"
#include "cuda_job/cuda_commit.hpp"
#include "cunumpy_kernels/error.hpp"
#include "explain/input_change.hpp"
#include "struct_headers/cubin_layout_check.hpp"
#include "util/elapsed.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

namespace ck {

namespace {

std::string with_line(const std::string& log, const std::string& line)
{
    return log + (log.empty() ? "" : "\n") + line;
}

JobResult base_result(const CudaJob& job)
{
    JobResult result;
    result.module = job.kernel->module;
    result.kernel = job.kernel->name;
    result.target = job.target;
    result.key = job.key;
    return result;
}

// A target that built but is not published because `failed`, another target
// of its kernel, did not: a kernel is published whole or not at all, so that
// no GPU loads a cubin whose siblings were never checked.
void fail_with_sibling(CompiledCudaJob& target, const CompiledCudaJob& failed)
{
    target.failure = "not published";
    target.result.state = JobState::failed;
    target.result.log = with_line(target.result.log, "not published: " + failed.job->target + " of kernel " +
                                                         failed.job->kernel->module + " failed (" + failed.failure +
                                                         "), and a kernel publishes all its targets or none");
}

// Stages every entry before the first rename, so that an I/O error while
// writing publishes nothing; a rename that fails after others succeeded
// leaves those entries, each whole and checked.
void publish_all(std::vector<CompiledCudaJob>& targets, const EntryStore& store)
{
    std::vector<std::unique_ptr<CudaCommit>> commits;
    try {
        for (auto& target : targets)
            commits.push_back(std::make_unique<CudaCommit>(store, *target.job, target.output, target.result.seconds));
        for (std::size_t i = 0; i < targets.size(); ++i) {
            const CudaJob& job = *targets[i].job;
            JobResult& result = targets[i].result;
            result.entry = commits[i]->publish();
            store.record_use("cuda", job.key);  // so the next build's first hit changes no folder it rests on
            store.forget_failure("cuda", job.kernel->module, job.target);
            for (const auto& artifact : commits[i]->manifest().artifacts)
                result.artifacts.push_back(result.entry / artifact.file);
        }
    } catch (const Error& error) {
        for (auto& target : targets) {
            if (!target.result.entry.empty()) continue;
            target.failure = error.what();
            target.result.state = JobState::failed;
            target.result.log = with_line(target.result.log, error.what());
        }
    }
}

}  // namespace

JobResult hit_result(const CudaJob& job, const EntryStore& store)
{
    JobResult result = base_result(job);
    result.state = JobState::hit;
    result.entry = store.entry_dir("cuda", job.key);
    result.artifacts.push_back(result.entry / job.artifact_file());
    return result;
}

namespace {

bool same_but_target(const CudaCompileRequest& a, const CudaCompileRequest& b)
{
    return a.source_file == b.source_file && a.source == b.source && a.kernel == b.kernel && a.options == b.options &&
           a.include_dirs == b.include_dirs && a.system_include_dirs == b.system_include_dirs &&
           a.pre_includes == b.pre_includes && a.headers == b.headers && a.entry == b.entry;
}

// Checks one target's output; its result's state and log say how it went.
void check_compiled(CompiledCudaJob& compiled)
{
    JobResult& result = compiled.result;
    result.log = compiled.output.log;
    result.phases = compiled.output.phases;
    try {
        if (!compiled.output.ok)
            compiled.failure = "it did not compile";
        else
            check_cuda_output(*compiled.job, compiled.output);
    } catch (const ArtifactCheckError& error) {
        compiled.failure = std::string("check '") + to_string(error.check()) + "' failed";
        result.log = with_line(result.log, error.what());
    } catch (const Error& error) {
        compiled.failure = error.what();
        result.log = with_line(result.log, error.what());
    }
    result.state = compiled.failure.empty() ? JobState::built : JobState::failed;
}

}  // namespace

void fail_compiled(CompiledCudaJob& compiled, const std::string& failure, const std::string& log_line)
{
    compiled.failure = failure;
    compiled.result.state = JobState::failed;
    compiled.result.log = with_line(compiled.result.log, log_line);
}

void check_parameter_layouts(std::vector<CompiledCudaJob>& targets, const KernelLayout& layout)
{
    for (auto& compiled : targets) {
        if (compiled.result.state != JobState::built) continue;
        const CudaJob& job = *compiled.job;
        std::string what = job.artifact_file() + " of " + job.kernel->cuda_file->string();
        try {
            check_cubin_layout(compiled.output.artifact, job.target, compiled.output.entry_symbol, what, layout);
        } catch (const ArtifactCheckError& error) {
            fail_compiled(compiled, std::string("check '") + to_string(error.check()) + "' failed", error.what());
        } catch (const Error& error) {
            fail_compiled(compiled, error.what(), error.what());
        }
    }
}

CompiledCudaJob compile_cuda_job(const CudaJob& job, const CudaCompiler& compiler)
{
    return compile_cuda_jobs({&job}, compiler).front();
}

std::vector<std::vector<std::size_t>> cuda_compile_groups(const std::vector<const CudaJob*>& jobs,
                                                          const CudaCompiler& compiler)
{
    // Jobs whose requests agree but for the target, as the compiler would group them.
    std::vector<CudaCompileRequest> requests;  // each holds the source's text: made once a job
    for (const CudaJob* job : jobs) requests.push_back(compile_request(*job));
    std::vector<std::vector<std::size_t>> alike;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        auto same = std::find_if(alike.begin(), alike.end(), [&](const std::vector<std::size_t>& group) {
            return same_but_target(requests[group.front()], requests[i]);
        });
        if (same == alike.end())
            alike.push_back({i});
        else
            same->push_back(i);
    }
    std::vector<std::vector<std::size_t>> groups;
    for (const auto& members : alike) {
        std::vector<std::string> targets;
        for (std::size_t i : members) targets.push_back(jobs[i]->target);
        for (const auto& group : compiler.target_groups(requests[members.front()], targets)) {
            groups.emplace_back();
            for (const auto& target : group)
                for (std::size_t i : members)
                    if (jobs[i]->target == target) groups.back().push_back(i);
        }
    }
    return groups;
}

std::vector<CompiledCudaJob> compile_cuda_jobs(const std::vector<const CudaJob*>& jobs, const CudaCompiler& compiler)
{
    auto start = std::chrono::steady_clock::now();
    std::vector<CompiledCudaJob> compiled;
    std::vector<std::string> targets;
    for (const CudaJob* job : jobs) {
        compiled.push_back({job, base_result(*job), {}, {}});
        targets.push_back(job->target);
    }
    try {
        std::vector<CudaCompileOutput> outputs = compiler.compile_targets(compile_request(*jobs.front()), targets);
        for (std::size_t i = 0; i < compiled.size(); ++i) {
            compiled[i].output = std::move(outputs.at(i));
            check_compiled(compiled[i]);
        }
    } catch (const Error& error) {
        for (auto& target : compiled) {
            target.failure = error.what();
            target.result.log = with_line(target.result.log, error.what());
            target.result.state = JobState::failed;
        }
    }
    double seconds = util::seconds_since(start);
    for (auto& target : compiled) target.result.seconds = seconds;
    return compiled;
}

std::string inputs_changed_since(const CudaPlanner& planner, const CudaJob& job)
{
    try {
        return describe_input_change(job.inputs, planner.rescanned_inputs(job));
    } catch (const SourceError& error) {
        return std::string("an included header changed (") + error.what() + ")";
    }
}

void refuse_if_inputs_changed(std::vector<CompiledCudaJob>& targets, const std::string& changed)
{
    if (changed.empty() || targets.empty()) return;
    std::string message = changed + " while kernel " + targets.front().job->kernel->name +
                          " compiled; its entries are not published: run the build again";
    for (auto& target : targets) {
        target.result.state = JobState::failed;
        target.result.log = with_line(target.result.log, message);
        if (target.failure.empty()) target.failure = "an input changed during the compile";
        target.remembered = false;
    }
}

std::vector<JobResult> publish_cuda_kernel(std::vector<CompiledCudaJob> targets, const EntryStore& store)
{
    auto failed = std::find_if(targets.begin(), targets.end(), [](auto& t) { return !t.failure.empty(); });
    if (failed != targets.end()) {
        for (auto& target : targets)
            if (target.failure.empty()) fail_with_sibling(target, *failed);
    } else {
        publish_all(targets, store);
    }
    std::vector<JobResult> results;
    for (auto& target : targets) {
        const CudaJob& job = *target.job;
        if (target.result.state == JobState::failed && target.remembered)
            store.remember_failure("cuda", job.kernel->module, job.target, job.key, target.result.log);
        results.push_back(std::move(target.result));
    }
    return results;
}

}  // namespace ck
