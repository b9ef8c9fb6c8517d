#include "runtime/kernel_keys.hpp"

#include "cunumpy_kernels/error.hpp"

#include "compilers/cuda_compiler.hpp"
#include "compilers/nvcc_compiler.hpp"
#include "compilers/tool_probe.hpp"

#include <cstdlib>

namespace ck {

namespace fs = std::filesystem;

namespace {

constexpr const char* key_record_variable = "CUNUMPY_KERNELS_KEY_RECORD";

// The key record's question for `kernel` at `target`, as `planner` plans it.
std::string key_question_prefix(const std::string& target)
{
    return "cuda-key/1 " + std::to_string(target.size()) + ":" + target;
}

std::string key_question(const KernelSource& kernel, const std::string& target, const CudaPlanner& planner)
{
    return key_question_prefix(target) + planner.key_question(kernel);
}

// By module and source: the question names the kernel by its paths.
std::string reading_name_of(const KernelSource& kernel)
{
    return kernel.module + "\n" + kernel.cuda_file.value_or(fs::path()).string();
}

std::string job_name_of(const KernelSource& kernel, const std::string& target)
{
    return reading_name_of(kernel) + "@" + target;
}

// The runtime never starts nvcc: only an identity `build` recorded.
KeyCompiler recorded_nvcc(const Config& config, const ToolProbe& probe)
{
    NvccCompiler nvcc(cuda_root_of(config), &probe);
    auto host = nvcc.host_compiler_identity(host_compiler_option(config, nvcc.environment()), false);
    auto identity = nvcc.remembered_identity();
    return {identity && host ? with_host_compiler(*identity, *host) : "", compiler_facts(nvcc)};
}

}  // namespace

KeyRecordMode key_record_mode_from_environment()
{
    const char* value = std::getenv(key_record_variable);
    std::string v = value ? value : "";
    if (v.empty() || v == "on") return KeyRecordMode::on;
    if (v == "off") return KeyRecordMode::off;
    if (v == "check") return KeyRecordMode::check;
    throw UsageError(std::string(key_record_variable) + "=" + v + ": expected on, off or check");
}

KeyCompiler key_compiler(const Config& config, const ToolProbe& probe, const CudaCompiler& nvrtc)
{
    try {
        if (config.compiler == CudaCompilerKind::nvrtc) return {nvrtc.identity(), compiler_facts(nvrtc)};
        return recorded_nvcc(config, probe);
    } catch (const ToolchainError&) {
        // No compiler here: entries are matched by their sources (EntryLookup).
    } catch (const UsageError&) {
        // Options nvcc cannot take: the planner reports them when a kernel is planned.
    }
    return {};
}

KernelKeys::KernelKeys(Config config, KeyCompiler compiler, const ToolProbe& probe, const CacheLocation& location,
                       KeyRecordMode mode, bool read_only, ClearedFolders* cleared, std::chrono::nanoseconds margin)
    : config_(std::move(config)),
      compiler_(std::move(compiler)),
      probe_(probe),
      mode_(mode),
      read_only_(read_only),
      key_record_(location.root, margin, cleared)
{
    if (location.fallback) also_read_keys_.emplace(location.preferred, margin, cleared);
}

KernelKeys::ReadKernel& KernelKeys::reading_of(const KernelSource& kernel)
{
    std::string name = reading_name_of(kernel);
    if (auto read = read_kernels_.find(name); read != read_kernels_.end()) return read->second;
    // A planner of its own: its header readings are of this moment, not of
    // when another kernel was first loaded. Targets are asked one at a time
    // (CudaPlanner::job): the config's list plays no part.
    Config config = config_;
    config.architectures.clear();
    config.ptx = false;
    auto planner = std::make_unique<CudaPlanner>(config, compiler_.identity,
                                                 cunumpy_dir_resolver(config, probe_, false), compiler_.facts);
    planner->use_record_for_includes(&includes_record_);
    planner->share_lexing(&lexed_);
    planner->use_declarations(&declarations_);
    return read_kernels_.emplace(name, ReadKernel{std::move(planner), std::nullopt, {}, {}}).first->second;
}

const CudaJob& KernelKeys::job(const KernelSource& kernel, const std::string& target)
{
    std::lock_guard lock(mutex_);
    std::string name = job_name_of(kernel, target);
    if (auto it = jobs_.find(name); it != jobs_.end()) return it->second;
    ReadKernel& reading = reading_of(kernel);
    // Without the compiler's identity no key is looked up (EntryLookup).
    bool recorded = identity_known() && mode_ != KeyRecordMode::off;
    std::string question = recorded ? key_question(kernel, target, *reading.planner) : "";
    if (question == key_question_prefix(target)) question.clear();  // a kernel no question can name
    std::optional<KeptKey> kept = question.empty() || reading.planned ? std::nullopt : kept_key(question);
    if (kept && kept->manifest)
        kept_manifests_.try_emplace(kept->key, std::move(*kept->manifest));
    else if (kept && !read_only_)
        keys_to_keep_[name] = {question, std::nullopt, {}};  // the reading is added
    if (kept && mode_ == KeyRecordMode::on) {
        // Only what a lookup asks of a job: a miss plans afresh (MissBuild).
        CudaJob job;
        job.kernel = &kernel;
        job.target = target;
        job.key = std::move(kept->key);
        ++keys_from_record_;
        return jobs_.emplace(name, std::move(job)).first->second;
    }
    return planned_job(kernel, target, reading, question, kept);
}

const CudaJob& KernelKeys::planned_job(const KernelSource& kernel, const std::string& target, ReadKernel& reading,
                                       const std::string& question, const std::optional<KeptKey>& kept)
{
    if (!reading.planned) {
        reading.planned_at = std::chrono::system_clock::now();
        if (kernel.cuda_file) reading.source_seen = util::regular_file_stat(kernel.cuda_file->c_str());
        reading.planned = reading.planner->read_kernel(kernel);
    }
    CudaJob job = reading.planner->job(*reading.planned, target);
    std::string name = job_name_of(kernel, target);
    if (kept) {
        if (kept->key != job.key)
            throw ArtifactError("kernel '" + kernel.name + "' for " + target + ": the key record's key " + kept->key +
                                " differs from a fresh plan's " + job.key + " (" + key_record_variable +
                                "=check); a witness was missed: please report it");
        ++keys_from_record_;
    } else if (!question.empty() && !read_only_) {
        // Kept once the lookup has read the entry's manifest (keep).
        keys_to_keep_[name] = {question, reading.planner->witnesses(*reading.planned, reading.source_seen),
                               reading.planned_at};
    }
    return jobs_.emplace(name, std::move(job)).first->second;
}

void KernelKeys::keep(const CudaJob& job, const ManifestReading* manifest,
                      std::chrono::system_clock::time_point looked_up_at)
{
    std::optional<KeyToKeep> to_keep;
    {
        std::lock_guard lock(mutex_);
        auto it = keys_to_keep_.find(job_name_of(*job.kernel, job.target));
        if (it == keys_to_keep_.end()) return;
        to_keep = std::move(it->second);
        keys_to_keep_.erase(it);
    }
    if (to_keep->witnesses)
        key_record_.keep(to_keep->question, job.key, *to_keep->witnesses, to_keep->planned_at, manifest);
    else if (manifest)
        key_record_.add_manifest(to_keep->question, job.key, *manifest, looked_up_at);
}

const ManifestReading* KernelKeys::kept_manifest(const std::string& key) const
{
    std::lock_guard lock(mutex_);
    auto it = kept_manifests_.find(key);
    return it == kept_manifests_.end() ? nullptr : &it->second;
}

std::optional<KeptKey> KernelKeys::kept_key(const std::string& question) const
{
    auto late_dir = cunumpy_dir_resolver(config_, probe_, false);
    if (auto key = key_record_.find(question, late_dir)) return key;
    return also_read_keys_ ? also_read_keys_->find(question, late_dir) : std::nullopt;
}

std::size_t KernelKeys::keys_from_record() const
{
    std::lock_guard lock(mutex_);
    return keys_from_record_;
}

}  // namespace ck
