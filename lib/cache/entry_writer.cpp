// Publishing an entry: write everything into a private folder inside the
// root, fsync, then one rename(2). Readers see the whole entry or none.
#include "cache/cache.hpp"
#include "util/json_text.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cache/entry_removal.hpp"
#include "util/temporary_name.hpp"
#include "util/file_util.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace ck {

namespace fs = std::filesystem;

EntryWriter::EntryWriter(const fs::path& root, std::string kind, std::string key)
    : root_(root), kind_(std::move(kind)), key_(std::move(key))
{
    fs::path temporaries = root_ / temporary_folder_name;
    std::error_code error;
    fs::create_directories(temporaries, error);
    staging_ = temporaries / unique_temporary_name();
    if (error || !fs::create_directory(staging_, error) || error)
        throw CacheError("cannot create " + staging_.string() + ": " + (error ? error.message() : "it exists"));
}

EntryWriter::~EntryWriter()
{
    if (committed_) return;
    std::error_code ignored;
    fs::remove_all(staging_, ignored);
}

Artifact EntryWriter::add_file(const std::string& name, const std::string& target, const std::string& bytes)
{
    util::write_file_synced(staging_ / name, bytes);
    return Artifact{name, target, sha256_hex(bytes), bytes.size()};
}

fs::path EntryWriter::commit(const Manifest& manifest)
{
    // Who published it, for a builder that waited for this one on another
    // node and finds the entry (its report names the publisher).
    Manifest published = manifest;
    if (published.published_by.empty())
        published.published_by = host_name() + ":" + std::to_string(static_cast<long>(::getpid()));
    util::write_file_synced(staging_ / "manifest.json", util::json_text(published.to_json(), 2) + "\n");
    util::fsync_dir(staging_);
    fs::path final_dir = EntryStore(root_).entry_dir(kind_, key_);
    std::error_code error;
    fs::create_directories(final_dir.parent_path(), error);
    if (error) throw CacheError("cannot create " + final_dir.parent_path().string() + ": " + error.message());
    if (std::rename(staging_.c_str(), final_dir.c_str()) != 0) {
        if (errno != ENOTEMPTY && errno != EEXIST)
            throw CacheError("cannot publish " + final_dir.string() + ": " + util::errno_message(errno));
        // Another builder won the race: its entry, with the same key, stays and
        // ours is dropped by the destructor. A damaged entry (a file deleted by
        // hand, a broken manifest) is moved out and replaced by ours.
        EntryStore store(root_);
        if (store.find(kind_, key_)) return final_dir;
        remove_entry_atomically(store, final_dir);
        if (std::rename(staging_.c_str(), final_dir.c_str()) != 0) {
            if ((errno == ENOTEMPTY || errno == EEXIST) && store.find(kind_, key_)) return final_dir;
            throw CacheError("cannot publish " + final_dir.string() + ": " + util::errno_message(errno));
        }
    }
    committed_ = true;
    util::fsync_dir(final_dir.parent_path());
    return final_dir;
}

}  // namespace ck
