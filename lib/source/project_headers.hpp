// The project headers a CUDA source includes, for the declaration reader:
// `#include "common.cuh"` found in the including file's folder or on the
// build's include path (the kernel's folder, the source root, the
// configured include folders: KernelSource::include_dirs), never in system
// folders or cunumpy's header folder, so that a `KERNEL` macro defined in
// a project header reads as the compiler reads it. Bounded in depth, count
// and size; never throws.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "cunumpy_kernels/package.hpp"
#include "source/cpp_lexer.hpp"
#include "util/regular_files.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ck::signatures {

/// One header's text, found.
struct IncludedFile {
    std::filesystem::path path;  ///< canonical
    std::string text;
    /// lex_cpp(text, LexScope::directives), when the source lexed it already
    /// (a HeaderCache); null: the reader lexes `text`.
    std::shared_ptr<const std::vector<CppToken>> directives;
};

/// Texts lexed already (headers, and the kernel sources a declaration
/// reading lexed whole), by their exact bytes: the key is the text itself,
/// so an entry is never stale, and readings made at different moments can
/// share it. The runtime's catalog and first calls do: the kernels of one
/// tree include the same headers, and lexing them again for each kernel was
/// most of a Struphy rank's load (bench/RESULTS.md, issue 14). Thread-safe.
class LexedTexts {
public:
    /// lex_cpp(text, LexScope::directives), lexed once per distinct text.
    std::shared_ptr<const std::vector<CppToken>> directives(const std::string& text);
    /// lex_cpp(text), whole; its directive tokens (directive_tokens) are kept
    /// for later directives(text) calls: a reader that lexes a kernel's
    /// source whole spares the include scan its lexing.
    std::vector<CppToken> lex_whole(std::string_view text);
    /// How many texts are kept (for tests).
    std::size_t size() const;

private:
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const std::vector<CppToken>>> by_text_;
};

/// Project headers read and lexed once for all the readings that share it:
/// the kernels of one build or status include the same few headers, and
/// lexing them again for each kernel was most of a warm status's work
/// (bench/RESULTS.md, issue 14). A header is taken as it was when first read
/// in this process. Thread-safe.
class HeaderCache {
public:
    /// `lexed`, when given, lexes the headers (shared with other caches);
    /// `files`, when given, answers is_file (shared with the other readers of
    /// this run, such as the include scan).
    explicit HeaderCache(LexedTexts* lexed = nullptr, util::RegularFiles* files = nullptr)
        : lexed_(lexed), files_(files ? files : &own_files_)
    {
    }
    /// Lexes with `lexed` from now on.
    void share_lexing(LexedTexts* lexed) { lexed_ = lexed; }
    /// The shared lexing, if any.
    LexedTexts* lexed() const { return lexed_; }

    /// The header at canonical `path`, read and lexed on first use (later
    /// calls share that text and those tokens); nothing when it cannot be
    /// read. ProjectHeaders checks its size bounds before asking.
    std::optional<IncludedFile> get(const std::filesystem::path& path);

    /// Whether `path` is a regular file, asked once per path for the life of
    /// the cache (the search for a header tries the same candidates for
    /// every kernel).
    bool is_file(const std::filesystem::path& path) { return files_->contains(path); }

private:
    LexedTexts* lexed_;
    std::mutex mutex_;
    std::map<std::filesystem::path, std::optional<IncludedFile>> files_read_;
    util::RegularFiles own_files_;
    util::RegularFiles* files_;
};

/// Where the preprocessor gets included files (a seam: tests give others).
class IncludeSource {
public:
    virtual ~IncludeSource() = default;
    /// The header `spelled` (the header name with its delimiters, `"a.cuh"`
    /// or `<a.cuh>`) included from `includer` (a canonical path; empty: the
    /// main file); nothing when it is not a project header, cannot be read,
    /// or a bound is reached.
    virtual std::optional<IncludedFile> open(const std::string& spelled, const std::filesystem::path& includer) = 0;
};

/// Headers on disk: quoted names first in the includer's folder (the main
/// file's for the main file), then in `dirs`; angle names only in `dirs`.
class ProjectHeaders : public IncludeSource {
public:
    static constexpr std::size_t max_headers = 64;             ///< opened per reading
    static constexpr std::size_t max_bytes = 4 * 1024 * 1024;  ///< read per reading, all headers together

    /// `cache`, when given, serves headers other readings read already.
    ProjectHeaders(std::filesystem::path main_file, std::vector<std::filesystem::path> dirs,
                   HeaderCache* cache = nullptr);

    std::optional<IncludedFile> open(const std::string& spelled, const std::filesystem::path& includer) override;

    /// Where open() would look for the header first found: the candidate
    /// path as found (not canonical), or nothing; reads no file and counts
    /// nothing against the bounds.
    std::optional<std::filesystem::path> find(const std::string& spelled, const std::filesystem::path& includer) const;

private:
    std::filesystem::path main_dir_;
    std::vector<std::filesystem::path> dirs_;
    HeaderCache* cache_;
    std::size_t opened_ = 0;
    std::size_t bytes_ = 0;
};

/// The headers of `kernel`'s CUDA source as `build` searches them; `cache` as
/// for ProjectHeaders.
ProjectHeaders project_headers_of(const KernelSource& kernel, const Config& config, HeaderCache* cache = nullptr);

}  // namespace ck::signatures
