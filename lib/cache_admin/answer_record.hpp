// A record of whole answers of `status` and of a `build` with nothing to
// compile, each kept under the stats of every path its planning asked
// about: a warm command whose witnesses all still hold prints the recorded
// answer without planning (ninja's deps log keeps a target's headers under
// their times the same way; issue 14 of bench/RESULTS.md measured why: a
// warm plan costs several times what reading and hashing the inputs costs).
// An answer whose plan wrote anything but bookkeeping
// (util::BookkeepingFileAccess) is never kept: printing it again would not
// do what the plan did.
//
// What makes an answer trustworthy is that the witnesses are complete: the
// CLI collects them where every file question of the process passes
// (tools/file_access_log.hpp), not from the planner's own account. A
// witness is compared by what the plan could have learned from it:
//   - a regular file: device, inode, mode, owner, size, modification and
//     change times (its content);
//   - a folder the plan listed: the same without size (its entries);
//   - a folder (or other path) the plan asked about itself without listing
//     it: the same (a stat gives its times, and the Python probe keys on
//     the modification times of sys.path's folders: a `pip install`);
//   - every folder on the way to a path asked, and a link:
//     device, inode, mode and owner, so a rename, a swap of a link or a
//     permission change is seen (lstat follows a link on the way; a path
//     that is itself a link is followed to where it leads, which is
//     witnessed too, even where nothing is yet);
//   - a path that did not exist, or could not be reached: the same error;
//   - a symbolic link: its change time and length too (a link removed and
//     made again can get the same inode number);
//   - a permission the plan asked for (access, faccessat): the same answer,
//     asked again (a read-only remount, an immutable flag or an ACL change
//     the stat of a folder does not show).
// An answer is kept only when no path the plan asked about changed within
// the racy margin before its planning started, or while it ran
// (SourceRecord's rule: a change in the same timestamp tick can keep its
// times). Folders only passed through are not held to that (a home folder
// or /tmp changes all the time): a folder on the way swapped for another by
// a rename while a command plans can leave an answer that rests on both.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ck {

/// What a process asked the file system and the environment while a plan
/// ran (filled by the CLI's FileAccessLog).
struct FileAccesses {
    struct Path {
        std::string path;     ///< absolute, as asked (not normalised)
        bool listed = false;  ///< opened as a folder, to read its entries
    };
    std::vector<Path> paths;  ///< each once, in the order first asked
    /// A permission asked with access(2) or faccessat(2): its answer can
    /// change with nothing in a stat changing (a remount read-only).
    struct PermissionCheck {
        std::string path;  ///< absolute, as asked
        int mode = 0;      ///< R_OK, W_OK, X_OK, F_OK
        int flags = 0;     ///< faccessat's flags (AT_EACCESS)
        bool operator==(const PermissionCheck&) const = default;
    };
    std::vector<PermissionCheck> permission_checks;  ///< each once
    /// Each variable read, with its value then (none: unset).
    std::vector<std::pair<std::string, std::optional<std::string>>> environment;
    /// Why these accesses cannot witness the answer (a process was started,
    /// a library loaded, a path asked relative to an unknown folder handle);
    /// empty when they can.
    std::string incomplete;
    /// The first path the plan created, changed, renamed or removed outside
    /// bookkeeping; empty when it wrote nothing.
    std::string written;
};

/// What one command printed, to print again in the same order.
struct RecordedAnswer {
    std::vector<std::pair<int, std::string>> logs;  ///< spdlog level and message, as logged while planning
    std::string result;                             ///< stdout
    std::vector<std::string> notes;                 ///< stderr lines after the result (the failed gates)
    int exit_code = 0;
    /// Where in `result` the seconds the command took go when the answer is
    /// printed again (`build`'s "in 0.03 s"); none for an answer without a time.
    std::optional<std::size_t> seconds_at;
    /// The bookkeeping the plan did and a printed-again answer repeats, in
    /// the command's own words (`build`: its hit counters and use stamps).
    std::string bookkeeping;
    /// Why this answer must not be kept though its plan wrote nothing (it
    /// printed what the record does not hold); empty to keep it. Not stored.
    std::string not_to_keep;
};

class AnswerRecord {
public:
    /// The record keeps at most this many answers (distinct keys); the one
    /// written longest ago goes first.
    static constexpr std::size_t max_answers = 64;

    /// The record in `folder` (created by keep()). `margin` replaces
    /// SourceRecord::racy_margin (tests).
    explicit AnswerRecord(std::filesystem::path folder, std::chrono::nanoseconds margin = std::chrono::seconds(2));

    /// The answer kept under `key`, when its environment variables have the
    /// values they had and every witness still holds; else none (also for a
    /// record file that is damaged, or that another user could have written).
    std::optional<RecordedAnswer> find(const std::string& key) const;

    /// Keeps `answer` under `key`, witnessed by `accesses`, for a plan that
    /// started at `started` (CLOCK_REALTIME). Returns why it was not kept
    /// (incomplete accesses, a plan that wrote, a change within the racy margin, a folder that
    /// cannot be written), empty when it was. Never throws.
    std::string keep(const std::string& key, const RecordedAnswer& answer, const FileAccesses& accesses,
                     std::chrono::system_clock::time_point started) const noexcept;

    /// Where the answer under `key` is kept.
    std::filesystem::path file_of(const std::string& key) const;

private:
    std::filesystem::path folder_;
    std::int64_t margin_ns_;
};

/// The default record folder: ~/.cache/cunumpy-kernels/answers (none
/// without a home folder).
std::optional<std::filesystem::path> answer_record_folder();

}  // namespace ck
