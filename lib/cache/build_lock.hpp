// One builder per cache key, across processes and hosts that share a cache
// on a network file system (NFS, Lustre), where flock(2) cannot be trusted
// across nodes.
//
// The lock is a file beside the entry, `<kind>/<k0k1>/<key>.lock`, created
// with O_CREAT|O_EXCL (atomic on NFSv3 and later and on Lustre). It holds the
// holder's host, process id, start time and a token. While the holder's
// compiler runs, a thread touches the file's modification time. A waiter
// polls until the entry is published (then uses it), the lock disappears
// (then takes it), or the holder is gone, and then breaks the lock:
//  - same process scope (host, boot and PID namespace; process_scope()):
//    the holder's process no longer exists;
//  - any host: the file's modification time has not changed for the timeout,
//    as seen by the waiter's own monotonic clock (so clock skew between
//    nodes does not matter).
// Hits never take a lock. A lock that cannot be created (a read-only cache)
// or a wait past the longest wait builds without one: a build never fails
// because of another builder.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace ck {

/// How long builders wait for each other.
struct LockTiming {
    /// A lock whose file has not been touched for this long is broken
    /// (`CUNUMPY_KERNELS_LOCK_TIMEOUT`, seconds, 1 to a week; default 120).
    std::chrono::milliseconds stale_after{120'000};
    /// How often the holder touches its file: a sixth of stale_after.
    std::chrono::milliseconds refresh() const { return stale_after / 6; }
    /// Past this, a waiter builds without the lock: ten times stale_after.
    std::chrono::milliseconds longest_wait() const { return stale_after * 10; }

    /// The timing of the environment. Throws UsageError naming
    /// CUNUMPY_KERNELS_LOCK_TIMEOUT when it is not a decimal number of
    /// seconds from 1 to 604800 (a week).
    static LockTiming from_environment();
};

/// Holders found gone, shared by the acquisitions of one build: a dead
/// builder usually held several keys, and each of its locks is then broken at
/// once instead of after its own timeout. Thread-safe.
class GoneHolders {
public:
    void add(const std::string& holder);
    bool contains(const std::string& holder) const;

private:
    mutable std::mutex mutex_;
    std::set<std::string> holders_;  ///< host:pid@start of each
};

/// What a waiter is told: "waiting for host.example:4242 (since
/// 2026-12-01T10:00:00Z)" or "broke the lock of ... (process gone)".
struct LockEvents {
    std::string what;                                 ///< what the holder builds: "kernel push for sm_90"
    std::function<void(const std::string&)> waiting;  ///< once per lock waited for
    std::function<void(const std::string&)> broken;   ///< each lock broken
    GoneHolders* gone = nullptr;                      ///< shared with other acquisitions; may be null
};

/// Whether `path` names a build lock or a breaker's turn (`<key>.lock`,
/// `<key>.lock.breaking`, and older versions' `<key>.lock.broken.*`), which
/// sit among the entries but are none.
bool is_lock_file(const std::filesystem::path& path);

/// Whether `path` names a breaker's turn or a lock moved aside by an earlier
/// version: lock files that only `cache clean` and `cache prune` remove
/// (EntryStore::remove_lock_leftovers), never a build lock itself.
bool is_lock_leftover(const std::filesystem::path& path);

/// Removes every lock file this process holds, with system calls only: for
/// the handler of SIGINT and SIGTERM (build's stop_compiler_processes), so that
/// a build stopped by a user or a batch system's time limit leaves no lock a
/// builder on another node would wait out. A file that no longer holds this
/// process's token (another builder broke the lock while this one was
/// stopped, and took it) is left alone, as ~BuildLock leaves it.
void remove_held_build_locks() noexcept;

/// A held lock; destroying it stops the refresh and removes the file, unless
/// another builder broke it meanwhile (then `events.broken` is told: the key
/// may have been compiled twice).
class BuildLock {
public:
    /// The lock file of entry folder `entry` (`<entry>.lock`).
    static std::filesystem::path file_of(const std::filesystem::path& entry);

    /// Takes the lock `file`, waiting while another live builder holds it.
    /// Returns nullptr when `published()` became true first (use the entry),
    /// else a lock, held or, when the file could not be created or the wait
    /// passed timing.longest_wait(), not held (build anyway; `events.broken`
    /// is told, except for a cache that cannot be written at all). `published` is
    /// asked before every attempt, so a hit never creates a file.
    static std::unique_ptr<BuildLock> acquire(const std::filesystem::path& file, const std::function<bool()>& published,
                                              const LockTiming& timing, const LockEvents& events = {});

    ~BuildLock();
    BuildLock(const BuildLock&) = delete;
    BuildLock& operator=(const BuildLock&) = delete;

    /// Whether this process holds the file (false: building without a lock).
    bool held() const;

private:
    struct Refresher;
    BuildLock(std::filesystem::path file, std::string token, const LockTiming& timing, const LockEvents& events);
    BuildLock();

    std::filesystem::path file_;
    std::string token_;
    std::string what_;                              ///< for the warning when the lock was lost
    std::function<void(const std::string&)> lost_;  ///< events.broken: told at release when another broke it
    std::unique_ptr<Refresher> refresher_;
    int signal_slot_ = -1;
};

}  // namespace ck
