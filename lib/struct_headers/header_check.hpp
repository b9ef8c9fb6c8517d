// The committed struct headers against the Python that writes them
// (Config::struct_headers): each writer runs in its own process of the
// tree's Python, exactly as the regenerate command runs it (the same working
// folder, the same sys.path, a file of the header's own name), and the
// output must equal the committed header byte for byte. A header and its
// CudaStruct that drift apart make the GPU read fields at the wrong offsets
// with no error; this check is what catches it on machines without a GPU
// (check-signatures as a pre-commit hook, status in CI).
//
// Warm runs start no Python: a header that passed is not checked again
// while the header and every file its writer's process read (each file it
// opened, each Python source it imported, outside the standard library)
// keep their digests, and every file it looked for and missed (a failed
// open, where a failed import would have found its module) is still
// missing. Digests are those the files had when the writer read them (a
// file edited while it ran is not remembered as read), and a writer that
// starts a process is never remembered: what the process reads is not seen.
// What the writer only stats or lists, and the environment, are not inputs
// of that key (doc/struct-abi.md).
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "source/source_record.hpp"
#include "struct_headers/struct_layouts.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

/// A header that is not what its writer writes, or whose writer failed.
struct StructHeaderFinding {
    std::filesystem::path header;
    std::string writer;   ///< "module:function"
    std::string problem;  ///< "differs from what ... writes", or how the writer failed ("raised TypeName: message", all
                          ///< lines, and where)
    std::string diff;     ///< unified diff from the committed header to the written one; "" when none was written
    std::string regenerate;  ///< the command that writes the header; "" when none fixes it (a struct defined twice)
    /// The committed header's line the finding points at (the first that
    /// differs, or the construct that cannot be laid out); 0: the file.
    int line = 0;
};

struct StructHeaderCheck {
    std::size_t headers = 0;  ///< configured
    std::size_t ran = 0;      ///< writers run this time (the others passed with the same inputs before)
    std::vector<StructHeaderFinding> findings;
    /// The configured structs' layouts, as configured_struct_layouts returns
    /// them (none configured: empty); nothing when a header cannot be read or
    /// laid out, or two define one struct (each is a finding).
    std::optional<StructLayouts> layouts;
};

/// The folder a writer "module:function" runs in, whose folder is first on
/// its sys.path: the first of the folder above the header's top-level
/// package (when the header is in a package), `root` (the pyproject.toml's
/// folder) and `root`'s sub-folders in name order that holds the module's
/// top-level package (`<top>/` or `<top>.py`); else `root` (an installed
/// module, found on the interpreter's own path).
std::filesystem::path writer_source_root(const std::filesystem::path& header, const std::string& writer,
                                         const std::filesystem::path& root);

/// `cd <source root> && <python> -c 'from m import f; f("<header>")'`, the
/// header relative to the source root, every word quoted for a POSIX shell.
std::string regenerate_command(const std::string& python, const std::filesystem::path& source_root,
                               const std::filesystem::path& header, const std::string& writer);

/// Checks every header of `config.struct_headers` (none: nothing to do,
/// no Python started). Each writer not passed before with the same inputs
/// runs in its own process of `config.python` in its writer_source_root,
/// stopped with every process it started after
/// `config.struct_header_timeout` seconds; a writer that raises, writes
/// nothing, exits or hangs, a writer that cannot be imported or called, and
/// a committed header that is not UTF-8 are findings of their header, and
/// the others are checked all the same. A struct two headers define, and
/// what a header has that cannot be laid out, are findings too. Throws ToolchainError, naming the interpreter and the
/// key and flag that set it, when `config.python` cannot be run.
StructHeaderCheck check_struct_headers(const Config& config, SourceRecord& record);

/// "<header>: error: <problem>", the diff, and "regenerate it: <command>",
/// for a terminal; the header as `display` writes it.
std::string finding_text(const StructHeaderFinding& finding,
                         const std::function<std::string(const std::filesystem::path&)>& display);

/// `{"header", "writer", "problem", "line", "diff", "regenerate"}` of each finding;
/// paths as `display` writes them.
nlohmann::json to_json(const std::vector<StructHeaderFinding>& findings,
                       const std::function<std::string(const std::filesystem::path&)>& display);

}  // namespace ck
