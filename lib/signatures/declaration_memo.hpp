// The declaration readings of one process, taken again while their source
// and headers are unchanged. A runtime catalog reads each CUDA kernel's
// declaration when it opens (for its signature), and the kernel's first
// call read it once more for the cache key's entry: about a quarter of the
// runtime's own work in a first call (bench/RESULTS.md, issue 14).
#pragma once

#include "signatures/kernel_declaration.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace ck::signatures {

/// Declaration readings kept with the source text read and the headers
/// each opened (read_kernel_declaration's rule, ccache's manifests).
/// Unlike a SourceRecord's answers, a kept reading is checked every time it
/// is asked for, so a process that lives long sees edits. Thread-safe.
class DeclarationMemo {
public:
    /// `digest` gives a header's SHA-256 (64 hex digits) by its canonical
    /// path, as it is now; it may throw SourceError (counted as changed).
    explicit DeclarationMemo(std::function<std::string(const std::string&)> digest);

    /// read_cuda_declaration of `kernel` in its source text `source` with
    /// the headers `project_headers_of(kernel, config, cache)` finds; the
    /// reading is kept. Never throws: what cannot be read is in the result.
    CudaKernelDeclaration read(const KernelSource& kernel, const Config& config, std::string_view source,
                               HeaderCache* cache = nullptr);

    /// The kept reading of `kernel` when it was of the same source text with
    /// the same folders and every header it opened is unchanged
    /// (opens_the_same); else `source` read now, and kept.
    KernelDeclaration get(const KernelSource& kernel, const Config& config, std::string_view source,
                          HeaderCache* cache = nullptr);

    /// How many get() calls read the source (for tests and benchmarks).
    std::size_t readings() const;

private:
    struct Kept {
        std::string source;  ///< compared whole: hashing it would cost the catalog more
        std::vector<HeaderOpening> opened;
        KernelDeclaration declaration;
    };
    /// Reads `source` and keeps the reading under `question`
    /// (declaration_question), and the source's directive tokens in the
    /// shared lexing of `cache`, if any.
    CudaKernelDeclaration read_and_keep(std::string question, const std::string& name, std::string_view source,
                                        ProjectHeaders& headers, HeaderCache* cache);

    std::function<std::string(const std::string&)> digest_;
    mutable std::mutex mutex_;
    /// By declaration_question; shared, so that a first call copies no source text out.
    std::map<std::string, std::shared_ptr<const Kept>> kept_;
    std::size_t readings_ = 0;
};

}  // namespace ck::signatures
