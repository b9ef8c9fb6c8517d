// Private scratch folders for compiler processes (nvcc's output, and its
// `tmpxft_*` files through TMPDIR), removed on every way out: by the owner's
// destructor, by the SIGINT/SIGTERM handler, or by a later build when the
// owning process died without either.
#pragma once

#include "util/temporary_dir.hpp"

#include <optional>

#include <filesystem>
#include <string>

namespace ck {

/// Prefix of every scratch folder's name, in the temporary folder.
inline constexpr const char* compiler_scratch_prefix = "cunumpy-kernels-nvcc.";

/// `$TMPDIR`, else /tmp: where scratch folders are made.
std::filesystem::path scratch_parent();

/// One scratch folder, `<parent>/cunumpy-kernels-nvcc.<host>.<pid>.<n>.<random>`
/// (mode 0700), registered so that remove_compiler_scratch_folders() can
/// remove it from a signal handler. The pid in the name lets a later build
/// tell a dead owner's folder from a live one's.
class CompilerScratch {
public:
    /// Creates the folder and its `tmp/` subfolder (the compiler's TMPDIR).
    /// Throws ToolchainError naming the folder when it cannot.
    CompilerScratch();
    /// Removes the folder and everything in it.
    ~CompilerScratch();
    CompilerScratch(const CompilerScratch&) = delete;
    CompilerScratch& operator=(const CompilerScratch&) = delete;

    const std::filesystem::path& path() const { return path_; }
    /// The folder to pass to the compiler as TMPDIR.
    std::filesystem::path tmp() const { return path_ / "tmp"; }

private:
    std::filesystem::path path_;
    std::optional<util::TemporaryDir> folder_;  ///< reset before the slot is freed
    int slot_ = -1;
};

/// Removes every scratch folder of this process, with system calls only:
/// async-signal-safe, for the SIGINT/SIGTERM handler after the compilers have
/// been told to stop. From then on, making a CompilerScratch throws: the
/// process is about to die. A file a dying compiler writes meanwhile may keep
/// a folder; the next build removes it.
void remove_compiler_scratch_folders() noexcept;

/// Removes the scratch folders in `parent` of processes on this host that no
/// longer run, and any older than `max_age_seconds` (another host's, or a
/// reused pid's). Returns how many were removed.
int remove_stale_compiler_scratch(const std::filesystem::path& parent, double max_age_seconds = 24 * 3600);

}  // namespace ck
