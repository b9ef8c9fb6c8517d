// export and import: a cache as one tar.zst (libarchive), for moving warm
// caches between machines (a login node to a cluster without compilers).
#include "cache_admin/cache_maintenance.hpp"
#include "util/json_text.hpp"
#include "cache_admin/archive_library.hpp"
#include "cunumpy_kernels/error.hpp"

#include "cache_admin/entry_check.hpp"
#include "compilers/artifact_check.hpp"
#include "cuda_job/cuda_job.hpp"
#include "util/temporary_name.hpp"
#include "cache/write_access.hpp"
#include "util/atomic_file.hpp"
#include "util/file_util.hpp"
#include "util/text.hpp"

#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <regex>
#include <set>

namespace ck {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t max_member_bytes = 256ull << 20;
constexpr std::uint64_t max_archive_bytes = 4ull << 30;

const ArchiveLibrary& libarchive() { return ArchiveLibrary::get(); }

struct ArchiveEntryDeleter {
    void operator()(archive_entry* entry) const { libarchive().archive_entry_free(entry); }
};
using ArchiveEntryPtr = std::unique_ptr<archive_entry, ArchiveEntryDeleter>;

// A libarchive handle for writing, freed once; close() reports late errors.
class ArchiveWriter {
public:
    explicit ArchiveWriter(const fs::path& path) : handle_(libarchive().archive_write_new()), path_(path)
    {
        if (!handle_ || libarchive().archive_write_set_format_pax_restricted(handle_) != ARCHIVE_OK ||
            libarchive().archive_write_add_filter_zstd(handle_) != ARCHIVE_OK ||
            libarchive().archive_write_open_filename(handle_, path.c_str()) != ARCHIVE_OK) {
            std::string reason = describe("cannot create");
            libarchive().archive_write_free(handle_);  // the destructor does not run when the constructor throws
            throw CacheError(reason);
        }
    }
    ~ArchiveWriter() { libarchive().archive_write_free(handle_); }
    ArchiveWriter(const ArchiveWriter&) = delete;
    ArchiveWriter& operator=(const ArchiveWriter&) = delete;

    void add(const std::string& name, const std::string& bytes)
    {
        ArchiveEntryPtr entry(libarchive().archive_entry_new());
        libarchive().archive_entry_set_pathname(entry.get(), name.c_str());
        libarchive().archive_entry_set_size(entry.get(), static_cast<la_int64_t>(bytes.size()));
        libarchive().archive_entry_set_filetype(entry.get(), AE_IFREG);
        libarchive().archive_entry_set_perm(entry.get(), 0644);
        libarchive().archive_entry_set_mtime(entry.get(), std::time(nullptr), 0);
        if (libarchive().archive_write_header(handle_, entry.get()) != ARCHIVE_OK) fail("cannot write " + name + " to");
        if (!bytes.empty() && libarchive().archive_write_data(handle_, bytes.data(), bytes.size()) < 0)
            fail("cannot write " + name + " to");
    }

    void close()
    {
        if (libarchive().archive_write_close(handle_) != ARCHIVE_OK) fail("cannot finish");
    }

private:
    std::string describe(const std::string& what) const
    {
        const char* reason = handle_ ? libarchive().archive_error_string(handle_) : nullptr;
        return what + " " + path_.string() + ": " + (reason ? reason : "libarchive error");
    }

    [[noreturn]] void fail(const std::string& what) { throw CacheError(describe(what)); }

    archive* handle_;
    fs::path path_;
};

// A libarchive handle for reading untrusted archives: tar only, zstd or none.
class ArchiveReader {
public:
    explicit ArchiveReader(const fs::path& path) : handle_(libarchive().archive_read_new()), path_(path)
    {
        if (!handle_ || libarchive().archive_read_support_format_tar(handle_) != ARCHIVE_OK ||
            libarchive().archive_read_support_filter_zstd(handle_) != ARCHIVE_OK ||
            libarchive().archive_read_support_filter_none(handle_) != ARCHIVE_OK ||
            libarchive().archive_read_open_filename(handle_, path.c_str(), 1 << 16) != ARCHIVE_OK) {
            std::string reason = describe("cannot open");
            libarchive().archive_read_free(handle_);  // the destructor does not run when the constructor throws
            throw CacheError(reason);
        }
    }
    ~ArchiveReader() { libarchive().archive_read_free(handle_); }
    ArchiveReader(const ArchiveReader&) = delete;
    ArchiveReader& operator=(const ArchiveReader&) = delete;

    /// The next member, or null at the end.
    archive_entry* next()
    {
        archive_entry* entry = nullptr;
        int status = libarchive().archive_read_next_header(handle_, &entry);
        if (status == ARCHIVE_EOF) return nullptr;
        if (status != ARCHIVE_OK) fail("cannot read");
        return entry;
    }

    std::string data(const std::string& member, std::uint64_t size)
    {
        std::string bytes(size, '\0');
        std::size_t done = 0;
        while (done < size) {
            la_ssize_t n = libarchive().archive_read_data(handle_, bytes.data() + done, size - done);
            if (n < 0) fail("cannot read " + member + " in");
            if (n == 0) break;
            done += static_cast<std::size_t>(n);
        }
        if (done != size) throw CacheError(path_.string() + ": " + member + " is truncated");
        return bytes;
    }

private:
    std::string describe(const std::string& what) const
    {
        const char* reason = handle_ ? libarchive().archive_error_string(handle_) : nullptr;
        return what + " " + path_.string() + ": " + (reason ? reason : "not a tar archive");
    }

    [[noreturn]] void fail(const std::string& what) { throw CacheError(describe(what)); }

    archive* handle_;
    fs::path path_;
};

using EntryFiles = std::map<std::string, std::string>;  // file name -> bytes

std::map<std::pair<std::string, std::string>, EntryFiles> read_members(const fs::path& path)
{
    static const std::regex member("(cuda)/([0-9a-f]{2})/([0-9a-f]{64})/([A-Za-z0-9_][A-Za-z0-9._-]*)");
    static const std::regex folder("(cuda)(/[0-9a-f]{2}(/[0-9a-f]{64})?)?/?");
    std::map<std::pair<std::string, std::string>, EntryFiles> entries;
    ArchiveReader reader(path);
    std::uint64_t total = 0;
    while (archive_entry* entry = reader.next()) {
        std::string name = libarchive().archive_entry_pathname(entry) ? libarchive().archive_entry_pathname(entry) : "";
        auto type = libarchive().archive_entry_filetype(entry);
        std::smatch match;
        if (type == AE_IFDIR && std::regex_match(name, folder)) continue;
        if (type != AE_IFREG || !std::regex_match(name, match, member))
            throw CacheError(path.string() + ": member '" + name +
                             "' is not a cache file (only regular files at cuda/<kk>/<key>/<name> are accepted); "
                             "nothing was imported");
        if (match[2] != match[3].str().substr(0, 2))
            throw CacheError(path.string() + ": member '" + name + "' is in the wrong shard; nothing was imported");
        auto size = static_cast<std::uint64_t>(libarchive().archive_entry_size(entry));
        total += size;
        if (size > max_member_bytes || total > max_archive_bytes)
            throw CacheError(path.string() + ": member '" + name + "' exceeds the size limits; nothing was imported");
        entries[{match[1], match[3]}][match[4]] = reader.data(name, size);
    }
    return entries;
}

Manifest checked_manifest(const fs::path& archive, const std::string& key, const EntryFiles& files)
{
    std::string where = archive.string() + ": entry " + key;
    auto manifest_file = files.find("manifest.json");
    if (manifest_file == files.end()) throw CacheError(where + " has no manifest.json; nothing was imported");
    Manifest manifest;
    try {
        manifest = Manifest::from_json(util::parse_json(manifest_file->second), where);
    } catch (const nlohmann::json::exception&) {
        throw CacheError(where + ": manifest.json is not JSON; nothing was imported");
    }
    if (manifest.key != key || cache_key(manifest.inputs) != key)
        throw CacheError(where + ": the key does not match the recorded inputs; nothing was imported");
    if (manifest.kind == "cuda")
        if (std::string problem = manifest_identity_problem(manifest); !problem.empty())
            throw CacheError(where + ": " + problem + "; nothing was imported");
    // Each fault in its own words: an entry missing its cubin is not one with a file too many.
    std::set<std::string> named{"manifest.json"};
    for (const auto& artifact : manifest.artifacts) named.insert(artifact.file);
    std::vector<std::string> unnamed;
    for (const auto& [name, bytes] : files)
        if (!named.count(name)) unnamed.push_back(name);
    if (!unnamed.empty())
        throw CacheError(where + " holds files its manifest does not name (" + util::comma_list(unnamed) +
                         "); nothing was imported");
    for (const auto& artifact : manifest.artifacts) {
        auto file = files.find(artifact.file);
        if (file == files.end())
            throw CacheError(where + ": " + artifact.file +
                             ", which its manifest names, is not in the archive; nothing was imported");
        if (file->second.size() != artifact.size || sha256_hex(file->second) != artifact.sha256)
            throw CacheError(where + ": " + artifact.file + " does not match its checksum; nothing was imported");
        // An archive is untrusted: what it carries passes the checks a build's
        // artifacts pass before they are published (loadable, the right target, the entry).
        try {
            check_artifact(file->second, ArtifactExpectation{artifact.file, artifact.target, manifest.entry_symbol});
        } catch (const ArtifactCheckError& error) {
            // A compile's advice (options, --arch) does not apply: the archive's
            // bytes are not what its manifest says they are.
            throw CacheError(
                where + ": " + artifact.file + " for " + artifact.target + ": check '" + to_string(error.check()) +
                "' failed: " + error.finding() +
                "; nothing was imported: the archive does not hold what its manifest describes (made "
                "by another tool, or altered). Export the entries again from a cache that `cunumpy-kernels "
                "cache verify` passes, or build them here with `cunumpy-kernels build`");
        }
    }
    return manifest;
}

// Why `entry` cannot travel in an archive, or "" when it can.
std::string why_not_exported(const EntryInfo& entry, const fs::path& root)
{
    if (entry.kind == "host")
        return "host (Pyccel) build" + (entry.manifest ? " of " + entry.manifest->module : std::string()) +
               ": it holds absolute paths into " + root.string() +
               ", so it could not load from another root; run `cunumpy-kernels build` where it is used";
    std::string problem = entry_problem(entry);
    if (!problem.empty()) return "unsound (" + problem + "); `cunumpy-kernels cache verify --fix` removes it";
    return "";
}

}  // namespace

ArchiveSummary export_entries(const EntryStore& store, const fs::path& archive)
{
    ArchiveSummary summary;
    util::AtomicFile file(archive);
    {
        ArchiveWriter writer(file.temporary());
        for (const auto& entry : list_entries(store)) {
            std::string reason = why_not_exported(entry, store.root());
            if (!reason.empty()) {
                summary.left_out.push_back({entry.dir, reason});
                ++summary.skipped;
                continue;
            }
            std::string prefix = entry.kind + "/" + entry.key.substr(0, 2) + "/" + entry.key + "/";
            EntryFiles files;
            for (const auto& artifact : entry.manifest->artifacts)
                files[artifact.file] = util::read_file(entry.dir / artifact.file);
            for (const auto& [name, bytes] : files) {
                writer.add(prefix + name, bytes);
                summary.bytes += bytes.size();
            }
            writer.add(prefix + "manifest.json", util::read_file(entry.dir / "manifest.json"));
            ++summary.entries;
        }
        writer.close();
    }
    file.commit();
    return summary;
}

CheckedArchive read_archive(const fs::path& archive)
{
    CheckedArchive checked;
    for (auto& [kind_key, files] : read_members(archive)) {
        Manifest manifest = checked_manifest(archive, kind_key.second, files);
        checked.entries.push_back({kind_key.first, std::move(manifest), std::move(files)});
    }
    return checked;
}

ArchiveSummary import_entries(const EntryStore& store, const CheckedArchive& archive)
{
    // Entries published where anyone can write would be refused by every reader.
    if (std::string problem = other_writable_problem(store.root()); !problem.empty()) throw CacheError(problem);
    ArchiveSummary summary;
    store.ensure_tagged();
    for (const auto& [kind, manifest, files] : archive.entries) {
        if (store.find(kind, manifest.key)) {
            ++summary.skipped;
            continue;
        }
        EntryWriter writer(store.root(), kind, manifest.key);
        for (const auto& artifact : manifest.artifacts) {
            writer.add_file(artifact.file, artifact.target, files.at(artifact.file));
            summary.bytes += artifact.size;
        }
        writer.commit(manifest);
        // An import adds entries; which one is current stays the local builds'
        // word, or prune would take the entries the tree still hits for superseded.
        if (!store.latest(kind, manifest.module, manifest.target))
            store.remember_latest(kind, manifest.module, manifest.target, manifest.key);
        ++summary.entries;
    }
    return summary;
}

ArchiveSummary import_entries(const EntryStore& store, const fs::path& archive)
{
    return import_entries(store, read_archive(archive));
}

}  // namespace ck
