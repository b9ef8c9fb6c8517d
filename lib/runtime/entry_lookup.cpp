#include "runtime/entry_lookup.hpp"

#include "cunumpy_kernels/error.hpp"

#include "runtime/target_ranking.hpp"
#include "util/file_util.hpp"
#include "util/sha256.hpp"

#include <algorithm>
#include <tuple>

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

// Whether two manifests agree on all that loading reads of them.
bool same_for_loading(const Manifest& a, const Manifest& b)
{
    auto fields = [](const Manifest& m) {
        return std::tie(m.key, m.kind, m.module, m.kernel, m.entry_symbol, m.target);
    };
    auto artifact = [](const Artifact& x) { return std::tie(x.file, x.target, x.sha256, x.size); };
    return fields(a) == fields(b) &&
           std::equal(a.artifacts.begin(), a.artifacts.end(), b.artifacts.begin(), b.artifacts.end(),
                      [&](const Artifact& x, const Artifact& y) { return artifact(x) == artifact(y); });
}

std::string short_key(const std::string& key) { return key.substr(0, 16); }

}  // namespace

EntryLookup::EntryLookup(const CacheLocation& location, bool identity_known, bool read_only, ClearedFolders& cleared)
    : store_(location.root), identity_known_(identity_known), read_only_(read_only), cleared_folders_(cleared)
{
    if (location.fallback) also_read_.emplace(location.preferred);
}

std::vector<const EntryStore*> EntryLookup::stores() const
{
    std::vector<const EntryStore*> all{&store_};
    if (also_read_) all.push_back(&*also_read_);
    return all;
}

EntryFound EntryLookup::find(const CudaJob& job, const ManifestReading* kept, bool check_kept) const
{
    for (const EntryStore* store : stores()) {
        if (!identity_known_) {
            if (auto latest = find_latest(*store, job)) return {std::move(latest), "", std::nullopt};
            continue;
        }
        EntryFound found = find_by_key(*store, job, kept, check_kept);
        if (found.candidate || !found.problem.empty()) return found;
    }
    return {};
}

EntryFound EntryLookup::find_by_key(const EntryStore& store, const CudaJob& job, const ManifestReading* kept,
                                    bool check_kept) const
{
    EntryFound found;
    // "check" reads every manifest, and compares what the record kept of it.
    auto manifest = store.find_to_load("cuda", job.key, &found.problem, check_kept ? nullptr : kept, &found.read);
    if (!manifest) return found;
    if (check_kept && kept && found.read && found.read->seen == kept->seen &&
        !same_for_loading(found.read->manifest, kept->manifest))
        throw ArtifactError(found.read->file.string() +
                            ": the key record's reading of this manifest differs from "
                            "the file's (CUNUMPY_KERNELS_KEY_RECORD=check); please report it");
    if (kept && !found.read) ++manifests_from_record_;
    // Both are key inputs: an entry of another kernel or target here is a
    // damaged or forged cache (or key record).
    if (manifest->kernel != job.kernel->name || manifest->target != job.target) {
        found.problem = store.entry_dir("cuda", job.key).string() + " holds kernel '" + manifest->kernel + "' for " +
                        manifest->target + ", not '" + job.kernel->name + "' for " + job.target +
                        ": remove it and run cunumpy-kernels build";
        return found;
    }
    if (!read_only_ && &store == &store_) store_.record_use("cuda", job.key);
    found.candidate = ArtifactCandidate{*manifest, store.entry_dir("cuda", job.key), "", store.root()};
    return found;
}

// Without the compiler's identity, only the latest build of the kernel for
// this target can be matched, by all its other inputs.
std::optional<ArtifactCandidate> EntryLookup::find_latest(const EntryStore& store, const CudaJob& job) const
{
    auto latest = store.latest("cuda", job.kernel->module, job.target);
    if (!latest || !same_inputs_but_compiler(latest->inputs, job.inputs)) return std::nullopt;
    return ArtifactCandidate{*latest, store.entry_dir("cuda", latest->key), "", store.root()};
}

std::vector<std::string> EntryLookup::held(const KernelSource& kernel) const
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

ModuleImage EntryLookup::read(const ArtifactCandidate& candidate) const
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
    ++images_read_;
    image.info.how = candidate.how;
    image.info.target = manifest.target;
    image.info.key = manifest.key;
    image.info.artifact = file;
    return image;
}

void EntryLookup::check_write_access(const fs::path& root, const fs::path& entry, const std::string& artifact) const
{
    // The folders above the entries are kept for the life of the process, as
    // a CLI run keeps them for the run: a folder that the owner (or root)
    // makes writable by others while an application runs is not seen until it
    // starts again.
    if (std::string problem = other_writable_problem(root, entry, {artifact, "manifest.json"}, &cleared_folders_);
        !problem.empty())
        throw ArtifactError(problem);
}

}  // namespace ck
