// Which files a CUDA source includes, directly or through other headers, so
// that their content is part of the key, and which names were looked up and
// not found on the way (a header that appears later in an earlier folder
// changes what the compiler reads, so those misses are key inputs too).
//
// The search is the compiler's, and the compile is given exactly these
// folders (see IncludeSearch): a quoted include is searched beside the
// including file, then in `dirs`; an angle include in `dirs` only; then, for
// both, the toolkit's include folder, `system_dirs`, the toolkit's cccl
// folder. `#include_next` goes on after the folder that held the including file. A toolkit header ends the search: its
// content is keyed as "<cuda>/name" (two toolkits may share one NVRTC but not a header), and it is not followed: what
// it includes in turn is the toolkit's release, which the compiler's identity names. An angle include found nowhere is
// a system header; a quoted one found nowhere is an error (file:line and the folders searched) unless a `__has_include`
// of the same name guards it. A computed include
// (`#include H`) is followed through the object-like macros the scanned files
// define (`#define H "mh.cuh"`, `#define H <mh.cuh>`, chains of names; every
// definition of the name, in any branch, is followed); one it cannot resolve
// so (a function-like macro, a macro from the command line) fails the scan,
// naming the file and line. Directives are read
// with the project's C++ lexer (comments, strings, line continuations and
// digraphs as the compiler reads them); every `#if` branch is followed, so
// the key may change more often than needed, never less. A name with `..`
// is resolved as the kernel resolves it for the compiler: from the real
// folder of the including file, through any symlinked folder.
#pragma once

#include "source/source_record.hpp"
#include "source/cpp_lexer.hpp"
#include "util/regular_files.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ck {

namespace signatures {
class LexedTexts;
}

struct IncludedHeader {
    std::string name;            ///< stable name: the folder's label and the path in it, see SearchDir
    std::filesystem::path path;  ///< where it was found
    std::string sha256;          ///< of its content
};

struct IncludeScan {
    std::vector<IncludedHeader> headers;    ///< each header once, sorted by name
    std::vector<std::string> absent;        ///< names looked up and not found, sorted: "<label>/name"
    std::vector<std::string> pre_includes;  ///< key names of the forced includes, in order
    std::vector<std::filesystem::path>
        pre_include_files;  ///< what the compiler is given for them: the file found, or the name of a toolkit header
    std::vector<std::string> unresolved;  ///< `cunumpy/` includes found nowhere (cunumpy's folder unknown)
    std::vector<std::string>
        computed;  ///< `file:line: #include MACRO -> "name"`: computed includes and what they named
};

/// A search folder and the label its headers get in key names: headers in the
/// package's source root are named by their path there ("my_sim/common.cuh",
/// label ""), in the kernel's folder "<kernel>/...", in cunumpy's folder
/// "<cunumpy>/cunumpy/atomic.cuh", in a configured folder "<include:N>/...".
/// No absolute path enters a key.
struct SearchDir {
    std::filesystem::path dir;
    std::string label;
};

/// The folders of one compile, in the compiler's order.
struct IncludeSearch {
    std::vector<SearchDir> dirs;         ///< `-I`, in order; cunumpy's folder is added after them when needed
    std::vector<SearchDir> system_dirs;  ///< `-isystem`, searched after the toolkit's include folder
    std::vector<std::filesystem::path> toolkit_dirs;  ///< `<cuda>/include`, then `<cuda>/include/cccl`
};

/// One `#include` directive of a file.
struct IncludeDirective {
    std::string name;
    bool quoted = false;
    int line = 0;
    bool guarded = false;  ///< inside an `#if` that tests `__has_include` of this name
    /// `#include_next`: the search goes on after the folder where the including
    /// file was found (GCC's rule; a plain include when it was found in none).
    bool next = false;
};

/// A `#define` a computed include may go through.
struct IncludeMacro {
    std::string name;
    int line = 0;
    /// The replacement as an include operand: `"mh.cuh"`, `<mh.cuh>`, or one
    /// identifier (another macro); empty for anything else (a function-like
    /// macro, other text), which no include can be resolved through.
    std::string operand;
};

/// The `#include` directives of a source, its computed includes
/// (`#include MACRO`, as (line, operand)), and the macros those may use.
struct FileIncludes {
    std::vector<IncludeDirective> includes;
    std::vector<std::pair<int, std::string>> computed;
    std::vector<IncludeMacro> macros;  ///< each `#define` of a name or a header name, and each function-like one
};

/// Reads the include directives of `source`.
FileIncludes list_includes(const std::string& source);

/// The include directives in `directives`, a LexScope::directives lex.
FileIncludes list_includes(const std::vector<signatures::CppToken>& directives);

class IncludeScanner {
public:
    /// `late_dir` is asked once, and only when an include is not found in the
    /// given folders: it returns cunumpy's header folder (a Python probe).
    /// `files`, when given, answers whether a candidate is a regular file
    /// (shared with the other readers of this run: the declaration reading
    /// searches the same folders).
    explicit IncludeScanner(std::function<std::optional<std::filesystem::path>()> late_dir,
                            util::RegularFiles* files = nullptr);

    /// Scans `source` (the text of `source_file`), after the forced includes
    /// `pre_includes` (searched as quoted includes of the source). Throws
    /// SourceError when a found header cannot be read, when a quoted include
    /// or a forced include is found nowhere, and when a computed include
    /// cannot be resolved through the scanned files' macros.
    /// `source_sha256`, when known, is the digest of `source`.
    IncludeScan scan(const std::filesystem::path& source_file, const std::string& source, const IncludeSearch& search,
                     const std::vector<std::string>& pre_includes = {}, std::string_view source_sha256 = {});

    /// Takes header digests and include directives from `record` for files
    /// unchanged since it remembered them (null: every header is read).
    void use_record(SourceRecord* record) { record_ = record; }

    /// Lexes sources and headers through `lexed` (the runtime's, which its
    /// catalog's declaration readings filled), not on its own.
    void share_lexing(signatures::LexedTexts* lexed) { lexed_ = lexed; }

    /// The late folder, if it was needed and found.
    std::optional<std::filesystem::path> late_dir_if_known() const { return late_dir_; }
    /// Whether a search reached the late folder, so that its answer decided
    /// what was found (whatever it was).
    bool late_dir_asked() const { return late_dir_asked_; }

private:
    struct Lookup;
    struct FileFacts {
        std::string sha256;
        FileIncludes includes;
    };
    struct Resolution {
        enum State { found, toolkit, missing } state;
        std::filesystem::path path;
        std::size_t place = none;  ///< where in the search it was found; `none` beside the including file
        static constexpr std::size_t none = static_cast<std::size_t>(-1);
    };
    /// `dir / name`, made normal, and whether it is a regular file.
    struct Candidate {
        std::filesystem::path path;
        bool regular = false;
    };
    const FileFacts& facts(const std::filesystem::path& path);
    /// list_includes(source), remembered under its digest in the record.
    FileIncludes includes_of(const std::string& source, std::string_view source_sha256);
    /// list_includes(source), lexed through the shared lexing if any.
    FileIncludes listed(const std::string& source) const;
    const Candidate& candidate(const std::filesystem::path& dir, const std::string& name);
    std::optional<SearchDir> late_search_dir();
    /// `including_place`: where the including file was found (Resolution::place).
    Resolution resolve(const IncludeDirective& include, const std::filesystem::path& including_file,
                       std::size_t including_place, Lookup& lookup);

    std::function<std::optional<std::filesystem::path>()> late_dir_probe_;
    bool late_dir_asked_ = false;
    std::optional<std::filesystem::path> late_dir_;
    // Read and looked up once per scanner: the kernels of a build share most
    // headers, and a warm build is little more than these lookups.
    std::unordered_map<std::string, FileFacts> facts_;
    std::unordered_map<std::string, Candidate> candidates_;
    util::RegularFiles* files_;
    SourceRecord* record_ = nullptr;
    signatures::LexedTexts* lexed_ = nullptr;
};

}  // namespace ck
