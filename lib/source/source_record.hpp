// A stat-keyed record of source files' digests, and of facts read from their
// content, kept between runs: a warm `status` or `build` stats each file and
// reads only those whose stat changed (ninja's log and git's index keep the
// same kind of record). Issue 14 of bench/RESULTS.md measured why: lexing
// the same unchanged Python modules on every run was most of a warm check.
//
// Trust, as git's index gives it ("racy git"): a digest is taken from the
// record only when the file's device, inode, size, modification and change
// times all equal the recorded ones, and both times are at least
// `racy_margin` older than the moment the digest was taken. A file written in
// the same timestamp tick as an earlier reading can keep its times; such a
// file, and any file changed within the margin, is read and hashed again.
// Facts are stored under the content's digest and a question, so a fact is
// never stale: a changed file has another digest. They are kept only for
// the build of the tool that answered them (another build may answer
// otherwise); the digests are kept across builds.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace ck {

class SourceRecord {
public:
    /// Files modified less than this before their digest was taken are
    /// hashed again (covers coarse and 2-second file system timestamps).
    static constexpr std::chrono::seconds racy_margin{2};
    /// The record forgets the files hashed longest ago beyond this many:
    /// one record in the home folder serves every tree, and every run reads
    /// it whole (about 200 bytes a file, more with its facts).
    static constexpr std::size_t max_files = 20000;
    /// A record file larger than this is read as an empty one.
    static constexpr std::uint64_t max_bytes = 256u << 20;

    /// The record stored at `file` (none: one kept in this process); an
    /// absent, unreadable or foreign file gives an empty record. Nothing is
    /// written before save(). A record kept in this process serves a process
    /// that may live long (the runtime library's): digest() takes nothing on
    /// the strength of "read earlier in this run", only stats old enough.
    /// `margin` replaces racy_margin (tests, which cannot date a change time back).
    explicit SourceRecord(const std::optional<std::filesystem::path>& file,
                          std::chrono::nanoseconds margin = racy_margin);

    /// SHA-256 (64 hex digits) of the file's bytes: from the record when its
    /// stat is unchanged and old enough to trust, else read and hashed now.
    /// Throws SourceError "cannot read PATH: REASON".
    std::string digest(const std::filesystem::path& file);

    /// The file's bytes, read now (the record's digest is refreshed from
    /// them), or the bytes this run read already when the file's stat is
    /// still the one they were read with; `sha256`, when given, receives
    /// their digest. Throws SourceError as digest().
    std::string read(const std::filesystem::path& file, std::string* sha256 = nullptr);

    /// The answer to `question` about the content of `file`: remembered under
    /// the content's digest, so an unchanged file is not read again; else
    /// `answer` is called with the file's bytes. `answer` must depend on the
    /// bytes and the question alone. Throws SourceError as digest(), and
    /// whatever `answer` throws (nothing is remembered then).
    /// `sha256`, when given, receives the digest of the content answered.
    nlohmann::json fact(const std::filesystem::path& file, const std::string& question,
                        const std::function<nlohmann::json(const std::string& bytes)>& answer,
                        std::string* sha256 = nullptr);

    /// fs::canonical(path), asked once per path in this run (a run reads
    /// the file system as it was when first asked, as HeaderCache does).
    /// Throws SourceError when it does not resolve.
    std::string canonical(const std::filesystem::path& path);

    /// The answer to `question` about content of digest `sha256`: the one
    /// remembered, else `compute()`'s, which is remembered. For answers that
    /// depend on more than that content, the answer keeps what else was read
    /// and `still_holds` checks it; it is asked once per run (a run takes the
    /// file system as it was when first asked), and a remembered answer it
    /// rejects is computed again. Throws whatever `compute` throws (nothing
    /// is remembered then).
    nlohmann::json answer(const std::string& sha256, const std::string& question,
                          const std::function<nlohmann::json()>& compute,
                          const std::function<bool(const nlohmann::json&)>& still_holds = {});

    /// Writes the record to its file when it changed, replacing it whole
    /// (concurrent writers: one wins; either record is sound). Best effort:
    /// a folder that cannot be written leaves the old record.
    void save() noexcept;

    /// How many files this run read (not taken from the record); for tests and benchmarks.
    std::size_t files_read() const;

private:
    struct FileStat {
        std::uint64_t device = 0, inode = 0, size = 0;
        std::int64_t modified_ns = 0, changed_ns = 0;
        bool operator==(const FileStat&) const = default;
    };
    struct Entry {
        FileStat stat;
        std::int64_t hashed_at_ns = 0;  ///< when the stat was taken, before the read
        std::string sha256;
    };

    static FileStat stat_of(const std::filesystem::path& file);
    /// Whether a stat taken at `hashed_at_ns` may be trusted later (both times older than the margin).
    bool old_enough(const FileStat& stat, std::int64_t hashed_at_ns) const;
    /// Reads and hashes `file`, records it, and returns its bytes and digest.
    std::pair<std::string, std::string> read_and_record(const std::filesystem::path& file);
    /// The remembered answer under `key`, decoded once per run; null when
    /// none (or one that does not decode). Called with mutex_ held.
    const nlohmann::json* remembered(const std::string& key);
    std::optional<nlohmann::json> known(const std::string& sha256, const std::string& question,
                                        const std::function<bool(const nlohmann::json&)>& still_holds);
    void remember(const std::string& sha256, const std::string& question, const nlohmann::json& answer);
    class BodyReader;
    void load();
    void remove_dead_writers_leftovers() const;

    std::optional<std::filesystem::path> file_;
    std::int64_t margin_ns_;
    mutable std::mutex mutex_;
    std::unordered_map<std::string, Entry> entries_;
    std::unordered_map<std::string, std::string> facts_;          ///< "<sha256>\n<question>" -> the answer, MessagePack
    std::unordered_map<std::string, std::string> read_now_;       ///< path -> bytes read in this run
    std::unordered_map<std::string, std::string> canonical_now_;  ///< path -> canonical, this run
    std::unordered_map<std::string, bool> held_now_;              ///< fact key -> what still_holds said, this run
    std::unordered_map<std::string, nlohmann::json> decoded_now_;  ///< fact key -> the answer decoded, this run
    std::string code_;  ///< the answering code's file, size and time (see the .cpp)
    std::size_t files_read_ = 0;
    bool changed_ = false;
};

}  // namespace ck
