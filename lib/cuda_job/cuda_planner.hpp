// Computing CUDA jobs (targets, key inputs, keys) without compiling anything.
// One implementation for `build`, `status` and the runtime library, so that
// all three agree on every key.
#pragma once

#include "cuda_job/cuda_job.hpp"
#include "compilers/compiler_options.hpp"
#include "source/include_scanner.hpp"
#include "cache/key_record.hpp"
#include "signatures/declaration_memo.hpp"

#include <functional>
#include <optional>

namespace ck {

class ToolProbe;

/// Answers where cunumpy's CUDA headers are, asked at most once per planner
/// and only when an include is found nowhere else.
using CunumpyDirResolver = std::function<std::optional<std::filesystem::path>()>;

/// The resolver of `config`: `cunumpy-include-dir` when set; else, when
/// `may_start_python`, the Python probe (remembered in `probe`); else only a
/// probe answer remembered earlier. The runtime library passes false: it
/// never starts a process.
CunumpyDirResolver cunumpy_dir_resolver(const Config& config, const ToolProbe& probe, bool may_start_python);

/// What the compiler that builds adds to every key beyond its identity.
struct CompilerFacts {
    std::vector<std::filesystem::path>
        toolkit_dirs;                 ///< searched last; the headers named from there are keyed, not followed
    CompilerEnvironment environment;  ///< keyed variables, flags from the environment
};

/// The facts of `compiler`.
CompilerFacts compiler_facts(const CudaCompiler& compiler);

/// The host compiler the options of `config` and of the environment
/// (NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS) name with `-ccbin` or
/// `--compiler-bindir` (the last one), as CudaPlanner parses them. Throws
/// UsageError as parse_compiler_options does.
std::optional<std::string> host_compiler_option(const Config& config, const CompilerEnvironment& environment);

/// The identity that goes into keys: the CUDA compiler's, and the host
/// compiler's when one takes part (CudaCompiler::host_compiler_identity).
std::string with_host_compiler(const std::string& compiler_identity, const std::string& host_identity);

/// A kernel's CUDA source read once: its text, entry, includes and folders,
/// from which CudaPlanner::job makes the job of any target.
struct PlannedKernel {
    CudaJob base;  ///< everything but the target, the key inputs and the key
    IncludeScan scan;
    std::string source_sha256;
};

class CudaPlanner {
public:
    /// `compiler_identity` is the identity() of the compiler that builds.
    /// Parses the compiler options of `config` and of the environment
    /// (NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS); throws UsageError as
    /// parse_compiler_options does.
    CudaPlanner(const Config& config, std::string compiler_identity, CunumpyDirResolver cunumpy_dir,
                CompilerFacts facts = {});

    /// The jobs of a ported kernel, one per target of cuda_targets(config).
    /// Header digests are read once per planner. Throws SourceError when the
    /// source or an included header cannot be read, a quoted include is
    /// found nowhere, or the entry is a template without (fitting) template
    /// arguments (kernel_entry).
    std::vector<CudaJob> plan(const KernelSource& kernel);

    /// The part of plan() that reads: the source, its includes and its
    /// entry, for jobs of targets chosen later (the runtime computes the key
    /// of the best target first and of the others only when it does not
    /// load). Throws as plan() does, and SourceError when the kernel has no
    /// CUDA source.
    PlannedKernel read_kernel(const KernelSource& kernel);

    /// The job of `planned` (read by this planner) for `target`, any target
    /// parse_target accepts, whether or not the config names it.
    CudaJob job(const PlannedKernel& planned, const std::string& target) const;

    /// The key inputs of `job` (planned by this planner) as they are now:
    /// its source's includes scanned afresh (nothing taken from the record or
    /// this planner's caches), everything else as planned. Thread-safe.
    /// Throws SourceError when a quoted include is no longer found.
    nlohmann::json rescanned_inputs(const CudaJob& job) const;

    /// Takes what `record` remembers of unchanged sources and headers (their
    /// digests, include directives and declaration readings); null: reads all.
    void use_record(SourceRecord* record)
    {
        record_ = record;
        scanner_.use_record(record);
    }

    /// Takes only the digests and include directives of unchanged headers
    /// from `record`, and reads each declaration afresh: the runtime's
    /// in-process record, shared by the kernels of a cache. A remembered
    /// declaration reading is checked by resolving each header's canonical
    /// path, a `readlink` per path component, which cost more than reading
    /// a small kernel again (bench/RESULTS.md, issue 14).
    void use_record_for_includes(SourceRecord* record) { scanner_.use_record(record); }

    /// Takes declaration readings from `memo` while their source and headers
    /// are unchanged, and keeps its own there: the runtime's, which its
    /// catalog filled when it opened. Ignored with use_record().
    void use_declarations(signatures::DeclarationMemo* memo) { declarations_ = memo; }

    /// Lexes the project headers of declaration readings, and the sources
    /// and headers of include scans, through `lexed` (shared by the
    /// runtime's planners and its catalog); the planner still reads each
    /// file afresh.
    void share_lexing(signatures::LexedTexts* lexed)
    {
        headers_.share_lexing(lexed);
        scanner_.share_lexing(lexed);
    }

    /// Everything this planner holds that decides a key of `kernel` beside
    /// the files it reads: the compiler's identity and facts, the parsed
    /// options, the search folders (absolute), the template arguments and
    /// the way to cunumpy's folder, the kernel's names and paths. Two
    /// planners with the same question and the same file system plan the
    /// same keys (the key record's question, cache/key_record.hpp). "" when
    /// a path of the kernel is relative (no question can name it for good).
    std::string key_question(const KernelSource& kernel) const;

    /// What read_kernel() looked at when it read `planned`: every path its
    /// searches asked about with the stat it answered from and the digest
    /// of what was read, the kernel's source (`source_seen`: its stat taken
    /// before the reading), and cunumpy's folder when a search reached it.
    /// Only meaningful for a planner that read one kernel (the runtime's).
    KeyWitnesses witnesses(const PlannedKernel& planned, const std::optional<util::FileStat>& source_seen) const;

    /// Options given through --verbatim-option (passed unchecked, keyed by spelling; warn once).
    const std::vector<std::string>& verbatim_options() const { return options_.verbatim; }

private:
    IncludeSearch search_for(const KernelSource& kernel) const;

    // A copy: a build asks the planner again after compiling
    // (rescanned_inputs), when the request it was made from has moved.
    const Config config_;
    std::string compiler_identity_;
    CompilerFacts facts_;
    CompilerOptions options_;
    std::vector<std::string> targets_;
    util::RegularFiles files_;  ///< the scan's and the declaration reading's header searches, shared
    IncludeScanner scanner_;
    signatures::HeaderCache headers_;  ///< for kernel_entry's declaration reading, shared by the kernels
    SourceRecord* record_ = nullptr;
    signatures::DeclarationMemo* declarations_ = nullptr;
};

}  // namespace ck
