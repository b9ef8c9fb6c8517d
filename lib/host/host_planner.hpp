// The host side of a build, planned without compiling: the graph of Pyccel
// modules (every kernel's host module and the modules it imports from the
// source tree, directly or not) and each module's key, computed in import
// order so that an imported module's key is part of its importers'.
#pragma once

#include "host/host_key.hpp"
#include "source/source_record.hpp"
#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/package.hpp"
#include "host/module_scan.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace ck {

/// A host module changed while a build used it (after its key was planned):
/// the entry is not published, and the failure is not remembered as one of
/// these inputs (ccache's "file modified during compilation"). Building again
/// reads the new content. Tool-only: the runtime builds no host module.
class InputChangedError : public SourceError {
public:
    using SourceError::SourceError;
};

/// One Pyccel module of the graph.
struct HostModule {
    std::string name;                      ///< dotted, e.g. particles.kernels.push.push_kernels
    std::filesystem::path file;            ///< the user's file
    std::filesystem::path source_root;     ///< folder holding its top-level package
    std::filesystem::path relative;        ///< `file` below `source_root`, e.g. particles/kernels/push/push_kernels.py
    const KernelSource* kernel = nullptr;  ///< the kernel it is the host module of; null for imported modules
    std::string source;                    ///< the file's bytes, when planning read them (see planned_source)
    bool source_read = false;              ///< whether `source` holds them
    std::string bytes_sha256;              ///< SHA-256 of the file's bytes, as planned
    std::string text_sha256;               ///< SHA-256 of its python_source_text, as planned
    bool openmp_runtime = false;           ///< it calls the OpenMP runtime (uses_openmp_runtime)
    std::vector<std::size_t> imports;      ///< modules it imports directly (indices into HostPlan::modules)
    std::vector<std::size_t> imported_by;  ///< modules that import it directly
    std::string problem;                   ///< why it cannot be built (unreadable, import cycle); empty if it can
};

/// A module's build, as planned.
struct HostJob {
    nlohmann::json inputs;             ///< the key's inputs
    std::string key;                   ///< our key (64 hex digits); empty when the module has a problem
    bool openmp = true;                ///< built with --openmp
    std::string cunumpy_name;          ///< `<stem>-<20 hex>`: the folder cunumpy's PyccelCache loads from
    std::string content_key;           ///< host_content_key: equal for modules whose builds are the same code
    std::vector<std::size_t> closure;  ///< every module it imports, directly or not, imports first
};

struct HostPlan {
    std::vector<HostModule> modules;  ///< imported modules before their importers
    std::vector<HostJob> jobs;        ///< jobs[i] builds modules[i]
};

/// The label of a module in reports: its kernel's module for a kernel's
/// (first) Pyccel host module, as CUDA jobs name it; else its own dotted name.
std::string host_label(const HostModule& module);

/// Where a plan's builds will live.
struct HostPlanOptions {
    /// Modules to build beyond the kernels' (with what they import).
    std::vector<PythonModuleFile> extra_modules;
    /// Beside their sources (`build --in-place`) instead of in cache entries:
    /// each key then holds the module's folder, which the build's wrapper
    /// names, in place of the cache root, and cunumpy's PyccelCache names
    /// (`cunumpy_name`) are left empty and unchecked: Python imports these
    /// builds by their module names.
    bool in_place = false;
    /// Where module digests and the imports read from them are remembered
    /// between runs; null: every module is read and scanned.
    SourceRecord* record = nullptr;
};

/// Finds the module graph of `kernels` (their "pyccel" host implementations)
/// and `options.extra_modules`, and plans every module's job with `toolchain`. Never throws for a bad
/// module: an unreadable file, an import cycle, two modules that cunumpy
/// would mistake for each other (one name, different imports: see
/// mark_cunumpy_name_collisions), or a module importing one of those gets a
/// `problem`, and the others are planned.
HostPlan plan_host_builds(const std::vector<const KernelSource*>& kernels, const HostToolchain& toolchain,
                          const HostPlanOptions& options = {});

/// The bytes `module` was planned with: read now when planning took them
/// from a SourceRecord. Throws SourceError when the file cannot be read or
/// changed since it was planned (its key would not describe the build).
std::string planned_source(const HostModule& module);

/// Which input differs between two key-input documents of one module, in
/// words: "imported module a.b.c changed", "source push_kernels.py changed",
/// "language: c -> fortran"; "" when they are equal.
std::string describe_host_change(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace ck
