// Which headers a CUDA source includes, directly or through other headers, so
// that their content is part of the key. Resolution follows NVRTC: a quoted
// include is searched beside the including file, then in the -I folders in
// order, then in cunumpy's header folder; an angle include in the -I folders
// and cunumpy's folder only (else it is a toolkit or system header, covered by
// the compiler's version). Comments are ignored; includes inside #if blocks are
// all taken, so the key may change more often than needed, never less.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ck {

struct IncludedHeader {
    std::string name;              ///< stable name: relative to the folder it was found in, see label_of
    std::filesystem::path path;    ///< where it was found
    std::string sha256;            ///< of its content
};

struct IncludeScan {
    std::vector<IncludedHeader> headers;  ///< each header once, sorted by name
    std::vector<std::string> unresolved;  ///< quoted and `cunumpy/` includes found nowhere (the compile will say so)
    std::vector<std::string> computed;    ///< `file:line: #include MACRO` directives, which no scan can follow
};

/// A search folder and the label its headers get in key names: headers in the
/// package's source root are named by their path there ("my_sim/common.cuh"),
/// in cunumpy's folder "<cunumpy>/cunumpy/atomic.cuh", in a configured folder
/// "<include:N>/...". No absolute path enters a key.
struct SearchDir {
    std::filesystem::path dir;
    std::string label;
};

/// Lists `#include` directives of a source, comments and strings skipped.
/// Each pair is (name, quoted).
std::vector<std::pair<std::string, bool>> list_includes(const std::string& source);

/// Lists `#include MACRO` directives (computed includes) as (line, operand).
std::vector<std::pair<int, std::string>> list_computed_includes(const std::string& source);

class IncludeScanner {
public:
    /// `late_dir` is asked once, and only when an include is not found in the
    /// given folders: it returns cunumpy's header folder (a Python probe).
    explicit IncludeScanner(std::function<std::optional<std::filesystem::path>()> late_dir);

    /// Scans `source` (the text of `source_file`) with `dirs` searched in order.
    /// Throws SourceError when a found header cannot be read.
    IncludeScan scan(const std::filesystem::path& source_file, const std::string& source,
                     const std::vector<SearchDir>& dirs);

    /// The late folder, if it was needed and found.
    std::optional<std::filesystem::path> late_dir_if_known() const { return late_dir_; }

private:
    struct FileFacts {
        std::string sha256;
        std::vector<std::pair<std::string, bool>> includes;
        std::vector<std::pair<int, std::string>> computed;
    };
    const FileFacts& facts(const std::filesystem::path& path);
    std::optional<SearchDir> late_search_dir();
    std::optional<std::filesystem::path> resolve(const std::string& name, bool quoted,
                                                 const std::filesystem::path& including_dir,
                                                 const std::vector<SearchDir>& dirs, std::string& label);

    std::function<std::optional<std::filesystem::path>()> late_dir_probe_;
    bool late_dir_asked_ = false;
    std::optional<std::filesystem::path> late_dir_;
    std::map<std::filesystem::path, FileFacts> facts_;
};

}  // namespace ck
