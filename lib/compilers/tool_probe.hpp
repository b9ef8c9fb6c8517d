// Remembers facts about tools (a compiler's version, where a Python finds
// cunumpy, a compiler file's digest) keyed by the tool file's path and stat
// (size, modification and change time, device and inode), so a
// warm build starts no process and loads no library to learn them again.
// The records sit in `<cache root>/.probes/`, one small file each.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace ck {

class ToolProbe {
public:
    /// Records in `dir`; answers are also read from `also_read` when given
    /// (the .probes of an unwritable preferred root, beside its fallback).
    explicit ToolProbe(std::filesystem::path dir, std::optional<std::filesystem::path> also_read = std::nullopt)
        : dir_(std::move(dir)), also_read_(std::move(also_read))
    {
    }

    /// The value recorded for `question` about `tool`, or the result of `ask`
    /// (recorded when it is not empty). An unreadable tool file is asked every time.
    std::string answer(const std::filesystem::path& tool, const std::string& question,
                       const std::function<std::string()>& ask) const;

    /// Records `value` as the answer to `question` about `tool`, replacing an
    /// earlier one (a probe that learnt several answers in one process).
    /// Best effort, like the records `answer` writes.
    void remember(const std::filesystem::path& tool, const std::string& question, const std::string& value) const;

    /// From now on, answers learnt are kept in memory (and answered from
    /// there) until write_deferred: planning writes nothing, and a build
    /// writes them once it runs (`status` and `--dry-run` never do).
    void defer_writes();

    /// Writes the answers kept since defer_writes, best effort, and writes
    /// at once from then on.
    void write_deferred() const;

private:
    std::optional<std::string> record_name(const std::filesystem::path& tool, const std::string& question) const;
    void write_record(const std::string& name, const std::string& value) const;

    // Answers learnt while writes are deferred, by record name; shared, as
    // planning reads CUDA kernels on a second thread.
    struct Deferred {
        std::mutex mutex;
        std::map<std::string, std::string> answers;
        bool deferring = true;  ///< false once written
    };

    std::filesystem::path dir_;
    std::optional<std::filesystem::path> also_read_;
    std::shared_ptr<Deferred> deferred_;  ///< null: answers are written when learnt
};

}  // namespace ck
