#include "runtime/artifact_cache.hpp"

#include "cunumpy_kernels/error.hpp"

#include "cuda_job/cuda_planner.hpp"
#include "cache/build_lock.hpp"
#include "runtime/target_ranking.hpp"
#include "cache/cache_stats.hpp"
#include "cache/write_access.hpp"
#include "compilers/artifact_check.hpp"
#include "compilers/cuda_compiler.hpp"
#include "compilers/nvcc_compiler.hpp"
#include "compilers/nvrtc_compiler.hpp"
#include "compilers/tool_probe.hpp"
#include "util/elapsed.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"
#include "util/utc_time.hpp"

#include <algorithm>
#include <tuple>
#include <cstdlib>
#include <chrono>
#include <ctime>
#include <iterator>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

bool same_inputs_but_compiler(nlohmann::json a, nlohmann::json b)
{
    for (const char* name : {"compiler", "environment", "nvcc_profile"}) {
        a.erase(name);
        b.erase(name);
    }
    return a == b;
}

// Every target whose artifact might run on a device of compute capability
// major.minor: its own cubin, the cubins of lower minors, PTX of the known
// architectures, and every target the config builds (`sm_100a`, `sm_100f`,
// their PTX). rank_targets keeps those the driver would load.
std::vector<std::string> serving_targets(const Config& config, int major, int minor)
{
    std::vector<std::string> targets;
    auto add = [&](const std::string& target) {
        if (std::find(targets.begin(), targets.end(), target) == targets.end()) targets.push_back(target);
    };
    for (const auto& target : cuda_targets(config)) add(target);
    for (int m = minor; m >= 0; --m) add("sm_" + std::to_string(major) + std::to_string(m));
    std::set<int> ptx = {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121};
    for (const auto& arch : config.architectures) ptx.insert(parse_target(arch).number);
    for (auto n = ptx.rbegin(); n != ptx.rend(); ++n)
        if (*n > 0) add("compute_" + std::to_string(*n));
    return targets;
}

constexpr const char* key_record_variable = "CUNUMPY_KERNELS_KEY_RECORD";

// CUNUMPY_KERNELS_KEY_RECORD: unset or "on", "off" (plan every first call,
// keep nothing), "check" (plan behind every kept key too, and fail when the
// two differ: for tests of the record itself).
KeyRecordMode key_record_mode()
{
    const char* value = std::getenv(key_record_variable);
    std::string v = value ? value : "";
    if (v.empty() || v == "on") return KeyRecordMode::on;
    if (v == "off") return KeyRecordMode::off;
    if (v == "check") return KeyRecordMode::check;
    throw UsageError(std::string(key_record_variable) + "=" + v + ": expected on, off or check");
}

// The key record's question for `kernel` at `target`, as `planner` plans it.
std::string key_question_prefix(const std::string& target)
{
    return "cuda-key/1 " + std::to_string(target.size()) + ":" + target;
}

std::string key_question(const KernelSource& kernel, const std::string& target, const CudaPlanner& planner)
{
    return key_question_prefix(target) + planner.key_question(kernel);
}

std::string short_key(const std::string& key)
{
    return key.substr(0, 16);
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

// Whether two manifests agree on all that loading reads of them.
bool same_for_loading(const Manifest& a, const Manifest& b)
{
    auto fields = [](const Manifest& m) { return std::tie(m.key, m.kind, m.module, m.kernel, m.entry_symbol, m.target); };
    auto artifact = [](const Artifact& x) { return std::tie(x.file, x.target, x.sha256, x.size); };
    return fields(a) == fields(b) &&
           std::equal(a.artifacts.begin(), a.artifacts.end(), b.artifacts.begin(), b.artifacts.end(),
                      [&](const Artifact& x, const Artifact& y) { return artifact(x) == artifact(y); });
}

}  // namespace

ArtifactCache::ArtifactCache(Config config, const std::string& cache_name, bool read_only, WarningSink warn)
    : config_(std::move(config)),
      location_(planned_cache_location(cache_name, config_.cache_dir)),
      store_(location_.root),
      key_record_(location_.root, KeyRecord::racy_margin, &cleared_folders_),
      key_record_mode_(key_record_mode()),
      probe_(std::make_unique<ToolProbe>(location_.root / ".probes",
                                         location_.fallback ? std::optional(location_.preferred / ".probes")
                                                            : std::nullopt)),
      nvrtc_(std::make_unique<NvrtcCompiler>(cuda_root_of(config_), probe_.get())),
      read_only_(read_only),
      warn_(std::move(warn))
{
    if (location_.fallback) also_read_.emplace(location_.preferred);
    if (location_.fallback) also_read_keys_.emplace(location_.preferred, KeyRecord::racy_margin, &cleared_folders_);
    std::string identity;
    if (config_.compiler == CudaCompilerKind::nvrtc) {
        try {
            identity = nvrtc_->identity();
            facts_ = compiler_facts(*nvrtc_);
        } catch (const ToolchainError&) {
            // No NVRTC here: entries are matched by their sources (see lookup).
        }
    } else {
        // The runtime never starts nvcc: only an identity `build` recorded.
        try {
            NvccCompiler nvcc(cuda_root_of(config_), probe_.get());
            auto host = nvcc.host_compiler_identity(host_compiler_option(config_, nvcc.environment()), false);
            auto nvcc_identity = nvcc.remembered_identity();
            identity = nvcc_identity && host ? with_host_compiler(*nvcc_identity, *host) : "";
            facts_ = compiler_facts(nvcc);
        } catch (const ToolchainError&) {
            // No nvcc here: as without NVRTC.
        } catch (const UsageError&) {
            // Options nvcc cannot take: the planner reports them when a kernel is planned.
        }
    }
    identity_known_ = !identity.empty();
    identity_ = identity;
}

ArtifactCache::~ArtifactCache()
{
    CacheCounters counters;
    counters.load_hits = load_hits_;
    counters.load_misses = load_misses_;
    // A fallback root no build made is not made for counters alone.
    std::error_code error;
    if (!read_only_ && (!location_.fallback || fs::is_directory(location_.root, error)))
        add_counters(location_.root, counters);
}

const CudaJob& ArtifactCache::job_for(const KernelSource& kernel, const std::string& target)
{
    std::lock_guard lock(mutex_);
    std::string reading_name = reading_name_of(kernel);
    std::string name = job_name_of(kernel, target);
    if (auto it = jobs_.find(name); it != jobs_.end()) return it->second;
    auto read = read_kernels_.find(reading_name);
    if (read == read_kernels_.end()) {
        // A planner of its own: its header readings are of this moment, not
        // of when another kernel was first loaded. Targets are asked one at
        // a time (CudaPlanner::job): the config's list plays no part.
        Config config = config_;
        config.architectures.clear();
        config.ptx = false;
        auto planner = std::make_unique<CudaPlanner>(config, identity_, cunumpy_dir_resolver(config, *probe_, false),
                                                     facts_);
        planner->use_record_for_includes(&includes_record_);
        planner->share_lexing(&lexed_);
        planner->use_declarations(&declarations_);
        read = read_kernels_.emplace(reading_name, ReadKernel{std::move(planner), std::nullopt, {}, {}}).first;
    }
    ReadKernel& reading = read->second;
    // Without the compiler's identity no key is looked up (see lookup).
    bool recorded = identity_known_ && key_record_mode_ != KeyRecordMode::off;
    std::string question = recorded ? key_question(kernel, target, *reading.planner) : "";
    if (question == key_question_prefix(target)) question.clear();  // a kernel no question can name
    std::optional<KeptKey> kept = question.empty() || reading.planned ? std::nullopt : kept_key(question);
    if (kept && kept->manifest) kept_manifests_.try_emplace(kept->key, std::move(*kept->manifest));
    else if (kept && !read_only_) keys_to_keep_[name] = {question, std::nullopt, {}};  // the reading is added
    if (kept && key_record_mode_ == KeyRecordMode::on) {
        // Only what lookup asks of a job: a miss plans afresh (nvrtc_job).
        CudaJob job;
        job.kernel = &kernel;
        job.target = target;
        job.key = std::move(kept->key);
        ++keys_from_record_;
        return jobs_.emplace(name, std::move(job)).first->second;
    }
    if (!reading.planned) {
        reading.planned_at = std::chrono::system_clock::now();
        if (kernel.cuda_file) reading.source_seen = util::regular_file_stat(kernel.cuda_file->c_str());
        reading.planned = reading.planner->read_kernel(kernel);
    }
    CudaJob job = reading.planner->job(*reading.planned, target);
    if (kept) {
        if (kept->key != job.key)
            throw ArtifactError("kernel '" + kernel.name + "' for " + target + ": the key record's key " + kept->key +
                                " differs from a fresh plan's " + job.key + " (" + key_record_variable +
                                "=check); a witness was missed: please report it");
        ++keys_from_record_;
    } else if (!question.empty() && !read_only_) {
        // Kept once lookup has read the entry's manifest (write_key_record).
        keys_to_keep_[name] = {question, reading.planner->witnesses(*reading.planned, reading.source_seen),
                               reading.planned_at};
    }
    return jobs_.emplace(name, std::move(job)).first->second;
}

void ArtifactCache::write_key_record(const CudaJob& job, const ManifestReading* manifest,
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

const ManifestReading* ArtifactCache::kept_manifest(const std::string& key) const
{
    std::lock_guard lock(mutex_);
    auto it = kept_manifests_.find(key);
    return it == kept_manifests_.end() ? nullptr : &it->second;
}

std::optional<KeptKey> ArtifactCache::kept_key(const std::string& question) const
{
    auto late_dir = cunumpy_dir_resolver(config_, *probe_, false);
    if (auto key = key_record_.find(question, late_dir)) return key;
    return also_read_keys_ ? also_read_keys_->find(question, late_dir) : std::nullopt;
}

std::size_t ArtifactCache::keys_from_record() const
{
    std::lock_guard lock(mutex_);
    return keys_from_record_;
}

std::vector<ServingTarget> ArtifactCache::serving(int cc_major, int cc_minor) const
{
    std::vector<std::string> targets = serving_targets(config_, cc_major, cc_minor);
    std::vector<ServingTarget> ranked;
    for (const auto& fit : rank_targets(targets, cc_major, cc_minor)) ranked.push_back({targets[fit.index], fit.how});
    return ranked;
}

std::optional<ArtifactCandidate> ArtifactCache::find(const KernelSource& kernel, const ServingTarget& target)
{
    const CudaJob& job = job_for(kernel, target.target);
    std::string problem;
    std::optional<ManifestReading> read;
    auto looked_up_at = std::chrono::system_clock::now();
    auto candidate = lookup(job, problem, read);
    write_key_record(job, read ? &*read : nullptr, looked_up_at);
    if (!problem.empty()) throw ArtifactError(target.target + ": unusable entry: " + problem);
    if (candidate) candidate->how = target.how;
    return candidate;
}

std::vector<const EntryStore*> ArtifactCache::stores() const
{
    std::vector<const EntryStore*> all{&store_};
    if (also_read_) all.push_back(&*also_read_);
    return all;
}

std::optional<ArtifactCandidate> ArtifactCache::lookup(const CudaJob& job, std::string& problem,
                                                      std::optional<ManifestReading>& read) const
{
    const ManifestReading* kept = kept_manifest(job.key);
    // "check" reads every manifest, and compares what the record kept of it.
    bool check = key_record_mode_ == KeyRecordMode::check;
    for (const EntryStore* store : stores()) {
        if (identity_known_) {
            if (auto manifest = store->find_to_load("cuda", job.key, &problem, check ? nullptr : kept, &read)) {
                if (check && kept && read && read->seen == kept->seen && !same_for_loading(read->manifest, kept->manifest))
                    throw ArtifactError(read->file.string() + ": the key record's reading of this manifest differs from "
                                        "the file's (" + key_record_variable + "=check); please report it");
                if (kept && !read) ++manifests_from_record_;
                // Both are key inputs: an entry of another kernel or target
                // here is a damaged or forged cache (or key record).
                if (manifest->kernel != job.kernel->name || manifest->target != job.target) {
                    problem = store->entry_dir("cuda", job.key).string() + " holds kernel '" + manifest->kernel +
                              "' for " + manifest->target + ", not '" + job.kernel->name + "' for " + job.target +
                              ": remove it and run cunumpy-kernels build";
                    return std::nullopt;
                }
                if (!read_only_ && store == &store_) store_.record_use("cuda", job.key);
                return ArtifactCandidate{*manifest, store->entry_dir("cuda", job.key), "", store->root()};
            }
            if (!problem.empty()) return std::nullopt;
            continue;
        }
        // Without the compiler's identity, only the latest build of the kernel
        // for this target can be matched, by all its other inputs.
        auto latest = store->latest("cuda", job.kernel->module, job.target);
        if (latest && same_inputs_but_compiler(latest->inputs, job.inputs))
            return ArtifactCandidate{*latest, store->entry_dir("cuda", latest->key), "", store->root()};
    }
    return std::nullopt;
}

std::vector<std::string> ArtifactCache::held(const KernelSource& kernel) const
{
    std::vector<std::string> lines;
    std::string prefix = kernel.module + "@";
    for (const EntryStore* store : stores()) {
        std::error_code error;
        for (const auto& entry : fs::directory_iterator(store->root() / "cuda-last", error)) {
            std::string name = entry.path().filename().string();
            if (name.rfind(prefix, 0) != 0) continue;
            std::string target = name.substr(prefix.size());
            if (auto manifest = store->latest("cuda", kernel.module, target))
                lines.push_back(target + ": an entry built " + manifest->built_at + " from other inputs (key " +
                                short_key(manifest->key) + "...)");
        }
    }
    if (lines.empty()) lines.push_back("no entry of " + kernel.module + " (run cunumpy-kernels build)");
    std::sort(lines.begin(), lines.end());
    return lines;
}

ModuleImage ArtifactCache::read(const ArtifactCandidate& candidate) const
{
    const Manifest& manifest = candidate.manifest;
    if (manifest.artifacts.empty()) throw ArtifactError(candidate.entry.string() + ": the manifest lists no artifact");
    const Artifact& artifact = manifest.artifacts.front();
    fs::path file = candidate.entry / artifact.file;
    check_write_access(candidate.root, candidate.entry, artifact.file);
    std::string bytes = util::read_file(file);
    std::string digest = sha256_hex(bytes);
    if (bytes.size() != artifact.size || digest != artifact.sha256)
        throw ArtifactError(file.string() + ": checksum mismatch (manifest sha256 " + artifact.sha256 + ", file " +
                            digest + "); the entry is corrupt and was not loaded: remove " + candidate.entry.string() +
                            " and run cunumpy-kernels build");
    ModuleImage image;
    image.bytes = std::move(bytes);
    if (!parse_target(manifest.target).cubin) image.bytes.push_back('\0');  // PTX is loaded as a C string
    image.entry_symbol = manifest.entry_symbol.empty() ? manifest.kernel : manifest.entry_symbol;
    ++load_hits_;
    image.info.how = candidate.how;
    image.info.target = manifest.target;
    image.info.key = manifest.key;
    image.info.artifact = file;
    return image;
}

void ArtifactCache::check_write_access(const fs::path& root, const fs::path& entry, const std::string& artifact) const
{
    // The folders above the entries are kept for the life of the process, as
    // a CLI run keeps them for the run: a folder that the owner (or root)
    // makes writable by others while an application runs is not seen until it
    // starts again.
    if (std::string problem = other_writable_problem(root, entry, {artifact, "manifest.json"}, &cleared_folders_);
        !problem.empty())
        throw ArtifactError(problem);
}

CudaJob ArtifactCache::nvrtc_job(const KernelSource& kernel, const std::string& target)
{
    std::lock_guard lock(mutex_);
    auto it = nvrtc_plans_.find(kernel.module + "@" + target);
    if (it != nvrtc_plans_.end()) return it->second;
    Config config = config_;
    config.architectures = {target};
    config.ptx = false;
    config.compiler = CudaCompilerKind::nvrtc;
    CudaPlanner planner(config, nvrtc_->identity(), cunumpy_dir_resolver(config, *probe_, false),
                        compiler_facts(*nvrtc_));
    CudaJob job = planner.plan(kernel).front();
    return nvrtc_plans_.emplace(kernel.module + "@" + target, std::move(job)).first->second;
}

bool ArtifactCache::publish(const CudaJob& job, const CudaCompileOutput& output, double seconds, fs::path& artifact)
{
    if (read_only_) return false;
    try {
        CacheLocation writable = resolve_cache_location(location_.name, config_.cache_dir, true);
        if (writable.root != location_.root) {
            if (warn_) warn_("cache " + location_.root.string() + " is not writable: kernel '" + job.kernel->name +
                             "' built by NVRTC is kept in memory for this process");
            return false;
        }
        EntryWriter writer(location_.root, "cuda", job.key);
        Manifest manifest = stage_cuda_entry(writer, job, output, seconds);
        fs::path entry = writer.commit(manifest);
        store_.ensure_tagged();
        store_.remember_latest("cuda", job.kernel->module, job.target, job.key);
        artifact = entry / manifest.artifacts.front().file;
        return true;
    } catch (const CacheError& error) {
        if (warn_) warn_(std::string(error.what()) + ": kernel '" + job.kernel->name + "' built by NVRTC is kept in memory");
        return false;
    }
}

std::optional<ModuleImage> ArtifactCache::published_image(const CudaJob& job) const
{
    auto manifest = store_.find("cuda", job.key);
    if (!manifest) return std::nullopt;
    try {
        return read(ArtifactCandidate{*manifest, store_.entry_dir("cuda", job.key), "cubin", store_.root()});
    } catch (const ArtifactError&) {
        return std::nullopt;  // corrupt: built again, in memory if it cannot replace the entry
    }
}

ModuleImage ArtifactCache::build(const KernelSource& kernel, int cc_major, int cc_minor)
{
    std::string target = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
    CudaJob job = nvrtc_job(kernel, target);
    std::lock_guard lock(build_mutex_);
    // Another thread or process may have published it meanwhile.
    if (auto image = published_image(job)) return std::move(*image);
    // Ranks that miss together compile once: the others wait for the entry.
    std::unique_ptr<BuildLock> build_lock;
    if (!read_only_) {
        LockEvents events;
        events.broken = warn_;
        build_lock = BuildLock::acquire(store_.lock_file("cuda", job.key),
                                        [&] { return store_.find("cuda", job.key).has_value(); },
                                        LockTiming::from_environment(), events);
        if (!build_lock)
            if (auto image = published_image(job)) return std::move(*image);
    }
    auto start = std::chrono::steady_clock::now();
    CudaCompileOutput output = nvrtc_->compile(compile_request(job));
    double seconds = util::seconds_since(start);
    if (!output.ok)
        throw ArtifactError("kernel '" + kernel.name + "': NVRTC could not build " + kernel.cuda_file->string() +
                            " for " + target + ":\n" + output.log);
    try {
        check_cuda_output(job, output);
    } catch (const ArtifactCheckError& error) {
        throw ArtifactCheckError(error.check(), error.finding(),
                                 "kernel '" + kernel.name + "': NVRTC built an artifact that cannot be loaded, and it "
                                 "was not published: " + error.what());
    }
    ++load_misses_;
    ModuleImage image;
    image.info.how = "nvrtc";
    image.info.target = target;
    image.info.key = job.key;
    image.info.published = publish(job, output, seconds, image.info.artifact);
    image.bytes = std::move(output.artifact);
    image.entry_symbol = output.entry_symbol;
    return image;
}

}  // namespace ck
