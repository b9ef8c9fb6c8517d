// Finding entries, the latest-entry records behind --dry-run's explanations,
// the last-use stamps behind prune, and the removal of dead writers'
// temporary folders.
#include "cache/cache.hpp"
#include "util/json_text.hpp"

#include <functional>

#include "cunumpy_kernels/error.hpp"
#include "cache/build_lock.hpp"
#include "util/temporary_name.hpp"
#include "util/file_util.hpp"
#include "util/stale_retry.hpp"
#include "util/subprocess.hpp"

#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace ck {

namespace fs = std::filesystem;

namespace {

constexpr const char* cachedir_tag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by cunumpy-kernels.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n";

// A `<kind>-last/` record holds the key and a newline.
std::string key_in_record(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

// The key a `<kind>-last/` record names. Throws SourceError when unreadable,
// TransientReadError when it stays stale: for readers that decide by it.
std::string read_key_record(const fs::path& file) { return key_in_record(util::read_file(file)); }

// The same for readers that only explain or save a write: none when unreadable.
std::optional<std::string> key_record_if_readable(const fs::path& file)
{
    auto text = util::read_record(file);
    if (!text) return std::nullopt;
    return key_in_record(std::move(*text));
}

}  // namespace

EntryStore::EntryStore(fs::path root) : root_(std::move(root)) {}

fs::path EntryStore::entry_dir(const std::string& kind, const std::string& key) const
{
    return root_ / kind / key.substr(0, 2) / key;
}

fs::path EntryStore::lock_file(const std::string& kind, const std::string& key) const
{
    return BuildLock::file_of(entry_dir(kind, key));
}

namespace {

// The manifest `read` gives for the entry in `dir` when its artifacts are
// there with their sizes; none when `read` finds no manifest; the problem
// otherwise.
std::optional<Manifest> complete_entry(const fs::path& dir, std::string* problem,
                                       const std::function<std::optional<Manifest>(const fs::path&)>& read)
{
    try {
        std::optional<Manifest> manifest = read(dir / "manifest.json");
        if (!manifest) return std::nullopt;
        std::error_code error;
        for (const auto& artifact : manifest->artifacts) {
            auto size = fs::file_size(dir / artifact.file, error);
            if (error || size != artifact.size)
                throw CacheError(dir.string() + ": artifact " + artifact.file + " is missing or truncated");
        }
        return manifest;
    } catch (const std::exception& e) {  // parse errors, CacheError, SourceError alike: an unusable entry
        if (problem) *problem = e.what();
        return std::nullopt;
    }
}

bool has_manifest(const fs::path& file)
{
    std::error_code error;
    return fs::exists(file, error);
}

// The text of `file` with the stat of the file it came from, taken of the
// open file: the bytes read are those of that file, whatever the path names.
// None when there is no such file (as has_manifest says, without its stat).
std::optional<std::string> read_with_stat(const fs::path& file, std::optional<util::FileStat>& seen)
{
    util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd.valid()) {
        if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
        throw SourceError("cannot read " + file.string() + ": " + util::errno_message(errno));
    }
    seen = util::regular_file_stat(fd.get());
    return util::read_open_file(fd.get(), file);
}

}  // namespace

std::optional<Manifest> EntryStore::find(const std::string& kind, const std::string& key, std::string* problem) const
{
    return complete_entry(entry_dir(kind, key), problem, [](const fs::path& file) -> std::optional<Manifest> {
        if (!has_manifest(file)) return std::nullopt;
        return Manifest::from_json(util::parse_json(util::read_file(file)), file.string());
    });
}

std::optional<Manifest> EntryStore::find_to_load(const std::string& kind, const std::string& key, std::string* problem,
                                                 const ManifestReading* kept,
                                                 std::optional<ManifestReading>* read) const
{
    std::optional<ManifestReading> reading;
    auto found = complete_entry(entry_dir(kind, key), problem, [&](const fs::path& file) -> std::optional<Manifest> {
        if (kept && kept->manifest.key == key && util::regular_file_stat(file.c_str()) == kept->seen)
            return kept->manifest;
        std::optional<util::FileStat> seen;
        std::optional<std::string> text = read_with_stat(file, seen);
        if (!text) return std::nullopt;
        Manifest manifest = Manifest::without_inputs(*text, file.string());
        if (seen) reading = ManifestReading{file, *seen, manifest};
        return manifest;
    });
    if (found && read) *read = std::move(reading);  // only a complete entry's reading is worth keeping
    return found;
}

namespace {

// Whether `file` opens as a regular file. An open by name, not a stat: on NFS
// an open revalidates the name with the server (close-to-open), where a stat
// may answer from the attribute cache for up to actimeo seconds after
// another node removed the entry (`cache clean`, `cache prune`).
bool opens_as_file(const fs::path& file)
{
    return util::read_retrying_stale([&] {
        util::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
        if (!fd.valid()) {
            if (errno == ESTALE) util::throw_read_error(file, errno);
            return false;
        }
        struct stat info {};
        return ::fstat(fd.get(), &info) == 0 && S_ISREG(info.st_mode);
    });
}

}  // namespace

bool EntryStore::has_entry(const std::string& kind, const std::string& key, const std::vector<std::string>& files) const
{
    fs::path dir = entry_dir(kind, key);
    std::error_code error;
    if (!opens_as_file(dir / "manifest.json")) return false;
    for (const auto& file : files)
        if (fs::file_size(dir / file, error) == 0 || error) return false;
    return true;
}

void EntryStore::remember_latest(const std::string& kind, const std::string& module, const std::string& target,
                                 const std::string& key) const
{
    fs::path dir = root_ / (kind + "-last");
    std::error_code error;
    fs::create_directories(dir, error);
    try {
        util::replace_file_atomically(dir / (module + "@" + target), key + "\n");
    } catch (const CacheError&) {
        // Only explanations depend on it.
    }
}

void EntryStore::remember_hit(const std::string& kind, const std::string& module, const std::string& target,
                              const std::string& key) const
{
    record_use(kind, key);
    if (key_record_if_readable(root_ / (kind + "-last") / (module + "@" + target)) == key) return;
    remember_latest(kind, module, target, key);
}

void EntryStore::record_use(const std::string& kind, const std::string& key) const
{
    constexpr std::time_t once_a_day = 24 * 3600;
    fs::path stamp = root_ / (kind + "-used") / key;
    struct stat info {};
    std::time_t now = std::time(nullptr);
    if (::stat(stamp.c_str(), &info) == 0) {
        if (now - info.st_mtime < once_a_day) return;
        ::utimensat(AT_FDCWD, stamp.c_str(), nullptr, 0);
        return;
    }
    std::error_code error;
    fs::create_directories(stamp.parent_path(), error);
    int fd = ::open(stamp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd >= 0) ::close(fd);
}

std::optional<std::time_t> EntryStore::last_use(const std::string& kind, const std::string& key) const
{
    struct stat info {};
    if (::stat((root_ / (kind + "-used") / key).c_str(), &info) != 0) return std::nullopt;
    return info.st_mtime;
}

std::optional<Manifest> EntryStore::latest(const std::string& kind, const std::string& module,
                                           const std::string& target, std::string* problem) const
{
    auto key = key_record_if_readable(root_ / (kind + "-last") / (module + "@" + target));
    if (!key || key->size() < 2) return std::nullopt;
    try {
        return find(kind, *key, problem);
    } catch (const TransientReadError&) {
        return std::nullopt;  // being replaced on another node: it explains nothing now
    }
}

std::set<std::string> EntryStore::latest_keys(const std::string& kind) const
{
    std::set<std::string> keys;
    std::error_code error;
    for (fs::directory_iterator it(root_ / (kind + "-last"), error), end; !error && it != end; it.increment(error)) {
        try {
            keys.insert(read_key_record(it->path()));
        } catch (const SourceError&) {
            // A record removed while listing: it names nothing current.
        }
    }
    return keys;
}

void EntryStore::remember_failure(const std::string& kind, const std::string& module, const std::string& target,
                                  const std::string& key, const std::string& log) const
{
    // A compiler killed because the build is being stopped did not fail.
    if (util::stop_requested()) return;
    fs::path dir = root_ / (kind + "-failed");
    std::error_code error;
    fs::create_directories(dir, error);
    nlohmann::json record = {{"key", key}, {"log", log}, {"at", std::time(nullptr)}};
    try {
        util::replace_file_atomically(dir / (module + "@" + target), util::json_text(record) + "\n");
    } catch (const CacheError&) {
        // Only status reports depend on it.
    }
}

void EntryStore::forget_failure(const std::string& kind, const std::string& module, const std::string& target) const
{
    std::error_code ignored;
    fs::remove(root_ / (kind + "-failed") / (module + "@" + target), ignored);
}

std::optional<nlohmann::json> EntryStore::failure(const std::string& kind, const std::string& module,
                                                  const std::string& target) const
{
    try {
        auto record = util::parse_json(util::read_file(root_ / (kind + "-failed") / (module + "@" + target)));
        if (record.is_object() && record.contains("key") && record["key"].is_string()) return record;
    } catch (const std::exception&) {
        // No record, or an unreadable one: nothing to report.
    }
    return std::nullopt;
}

std::vector<fs::path> EntryStore::entry_dirs(const std::string& kind) const
{
    std::vector<fs::path> dirs;
    std::error_code error;
    for (fs::directory_iterator shard(root_ / kind, error), end; !error && shard != end; shard.increment(error)) {
        std::error_code inner;
        for (fs::directory_iterator entry(shard->path(), inner); !inner && entry != end; entry.increment(inner))
            if (!is_lock_file(entry->path())) dirs.push_back(entry->path());
    }
    std::sort(dirs.begin(), dirs.end());
    return dirs;
}

void EntryStore::ensure_tagged() const
{
    fs::path tag = root_ / "CACHEDIR.TAG";
    std::error_code error;
    if (fs::exists(tag, error)) return;
    fs::create_directories(root_, error);
    util::replace_file_atomically(tag, cachedir_tag);
}

int EntryStore::remove_stale_temporaries(double max_age_seconds) const
{
    int removed = 0;
    std::error_code error;
    for (fs::directory_iterator it(root_ / temporary_folder_name, error), end; !error && it != end;
         it.increment(error)) {
        if (!is_stale_temporary(it->path(), it->path().filename().string(), max_age_seconds)) continue;
        std::error_code ignored;
        if (fs::remove_all(it->path(), ignored) > 0) ++removed;
    }
    return removed;
}

}  // namespace ck
