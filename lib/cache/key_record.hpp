// The cache keys of the runtime's kernels, kept with what planning them
// looked at, so that a later process takes a kernel's key after a stat of
// each of those files instead of planning it again. This is ccache's direct
// mode (a manifest of the headers a compile read, checked by their stat) for
// the runtime's first call: planning the key was about half of the runtime's
// own work in a first call from a warm cache (bench/RESULTS.md, issue 14).
//
// Trust, as SourceRecord gives it ("racy git"): a key is taken only when
// every witness is as it was. Each path the planning asked "is this a
// regular file?" answers the same, a regular one with the same device,
// inode, size, modification and change times; cunumpy's folder, when a
// search reached it, is the same answer again. A record is kept only when
// every file's times are at least the racy margin older than the start of
// the planning that read it, so a change within one timestamp tick, or
// during the planning, cannot hide. Everything else that decides a key is in
// the question the record is kept under (CudaPlanner::key_question and the
// target), and a key is taken only from a record the same build of this code
// kept (util::code_identity: another build may plan otherwise). Records live
// in `<cache root>/.keys/`, one file per question, checksummed; one that
// users other than the owner and the group may write is ignored, as such
// entries are.
//
// A record also keeps, when it can, the manifest of the entry the key led
// to as loading read it, with the stat of the manifest file (ManifestReading):
// a later first call takes those fields when its stat of the manifest is the
// same, and reads the file otherwise. The same racy margin applies: a
// manifest changed less than the margin before the planning is not kept.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/cache.hpp"
#include "cache/write_access.hpp"
#include "util/regular_files.hpp"

namespace ck {

/// One file a planning looked at, as it saw it.
struct KeyWitness {
    std::string path;
    /// Its stat when the planning asked (links followed); none when it was
    /// not a regular file then.
    std::optional<util::FileStat> seen;
    /// The SHA-256 of the content the planning read from it, when it read it.
    std::string sha256;
};

/// What a planning looked at besides its question.
struct KeyWitnesses {
    /// Each path asked "is this a regular file?": the headers found, the
    /// candidates missed before them, the source.
    std::vector<KeyWitness> files;
    /// Set when a search reached cunumpy's header folder: the answer it got
    /// (none: the folder was unknown).
    std::optional<std::optional<std::string>> late_dir;
};

/// What a record gives back.
struct KeptKey {
    std::string key;
    /// The entry's manifest as loading read it when the record was kept, its
    /// `file` left empty (the stat names it); none when none was kept.
    std::optional<ManifestReading> manifest;
};

class KeyRecord {
public:
    /// Files changed less than this before a planning started keep no record.
    static constexpr std::chrono::seconds racy_margin{2};

    /// The records of the cache at `root` (in `root/.keys`). `margin`
    /// replaces racy_margin (tests, which cannot date a change time back).
    /// `cleared`, when given, is the memo of folders found not writable by
    /// others that the reader of the cache's entries keeps (the root is
    /// checked once for both); it must outlive this object.
    explicit KeyRecord(std::filesystem::path root, std::chrono::nanoseconds margin = racy_margin,
                       ClearedFolders* cleared = nullptr);

    /// The key kept for `question` when every witness still holds, with the
    /// manifest reading kept beside it; `late_dir` gives cunumpy's folder as
    /// it is now, asked only when the kept planning asked for it. None when
    /// there is no record, a damaged or foreign one, one other users may
    /// write, or a witness that changed. The manifest reading is not checked
    /// here: its reader compares its stat (EntryStore::find_to_load). Never
    /// throws.
    std::optional<KeptKey> find(const std::string& question,
                                const std::function<std::optional<std::filesystem::path>()>& late_dir) const;

    /// Keeps `key` for `question` with `witnesses`, for a planning that
    /// started at `planned_at`. Keeps nothing when a witness is no longer
    /// what the planning saw (its stat now, and the digest of its content
    /// now when the planning read it: a link re-pointed or a folder renamed
    /// since, whatever its files' times), a file changed within the margin
    /// before `planned_at` or later, a path holds a newline, or the cache
    /// root does not exist; and when a record of `question` was written since
    /// `planned_at` (of the ranks of a job that plan together, the first
    /// to finish writes it). Replaces the file atomically; best effort (a folder that
    /// cannot be written keeps nothing). Never throws.
    ///
    /// `manifest`, the reading of the entry `key` names, is kept beside the
    /// key when it is of that key, its file's times are the margin older than
    /// `planned_at`, its file's stat now is the one it was read with, and no
    /// field it keeps holds a newline; the key is kept without it otherwise.
    void keep(const std::string& question, const std::string& key, const KeyWitnesses& witnesses,
              std::chrono::system_clock::time_point planned_at,
              const ManifestReading* manifest = nullptr) const noexcept;

    /// Adds `manifest`, a reading of the entry `key` names, to the record of
    /// `question` that gave `key` without one (the manifest was too new, or
    /// the entry missing, when the key was planned), on keep's terms: its
    /// file's times the margin older than `looked_up_at`, when the lookup that
    /// read it started, and its stat now the one it was read with. Leaves the
    /// record as it is when it no longer gives `key`, already keeps a reading,
    /// or was written since `looked_up_at` (another rank added it first).
    /// Best effort; never throws.
    void add_manifest(const std::string& question, const std::string& key, const ManifestReading& manifest,
                      std::chrono::system_clock::time_point looked_up_at) const noexcept;

    /// The file a record of `question` is kept in.
    std::filesystem::path file_of(const std::string& question) const;

private:
    std::filesystem::path root_;
    std::int64_t margin_ns_;
    /// The root and `.keys` found not writable by others, checked once for
    /// the life of this object (as the runtime's EntryLookup keeps the entries' folders).
    ClearedFolders own_cleared_;
    ClearedFolders* cleared_;
};

}  // namespace ck
