// A file replaced whole or not at all (ccache's AtomicFile): written under a
// temporary name beside its target, fsynced, then renamed over it. Readers
// see the old file or the complete new one; a failed or killed writer leaves
// the target untouched.
#pragma once

#include <filesystem>
#include <string_view>

namespace ck::util {

class AtomicFile {
public:
    /// The temporary is `.<name>.<host>.<pid>.<n>.<random>` in the target's
    /// folder (unique_temporary_name: a later run can tell a dead writer's
    /// leftover from a live one's). Nothing is created yet.
    explicit AtomicFile(const std::filesystem::path& target);
    /// Removes the temporary unless commit() succeeded.
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    /// Where the content goes, for writers that open the file themselves.
    const std::filesystem::path& temporary() const { return temporary_; }
    const std::filesystem::path& target() const { return target_; }

    /// Writes `bytes` as the whole content. Throws CacheError naming the file.
    void write(std::string_view bytes);
    /// Copies `source` as the whole content (across file systems too).
    /// Throws CacheError naming both files.
    void copy_from(const std::filesystem::path& source);

    /// fsyncs the temporary and renames it over the target. Throws
    /// CacheError naming the target; the temporary is then removed.
    void commit();

private:
    std::filesystem::path target_;
    std::filesystem::path temporary_;
    bool committed_ = false;
};

}  // namespace ck::util
