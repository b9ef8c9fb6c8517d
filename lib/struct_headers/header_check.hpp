// The committed struct headers against the Python that writes them
// (Config::struct_headers): each writer runs into a temporary file with the
// tree's Python, and the output must equal the committed header byte for
// byte. A header and its CudaStruct that drift apart make the GPU read
// fields at the wrong offsets with no error; this check is what catches it
// on machines without a GPU (check-signatures as a pre-commit hook, status
// in CI).
//
// Warm runs start no Python: a header that passed is not checked again
// while the header and every Python source its writer imported (the
// project's modules, cunumpy, numpy: what the writer's process loaded outside
// the standard library) keep their digests in the source record.
#pragma once

#include "cunumpy_kernels/config.hpp"
#include "source/source_record.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace ck {

/// A header that is not what its writer writes, or whose writer failed.
struct StructHeaderFinding {
    std::filesystem::path header;
    std::string writer;      ///< "module:function"
    std::string problem;     ///< "differs from what ... writes", or the writer's error (its traceback's last line)
    std::string diff;        ///< unified diff from the committed header to the written one; "" when none was written
    std::string regenerate;  ///< the command that writes the header
};

struct StructHeaderCheck {
    std::size_t headers = 0;  ///< configured
    std::size_t ran = 0;      ///< writers run this time (the others passed with the same inputs before)
    std::vector<StructHeaderFinding> findings;
};

/// Checks every header of `config.struct_headers` (none: nothing to do,
/// no Python started). Writers run in one process of `config.python`, in
/// the folder of `config.source_file`, with the folder above each header's
/// top-level package (the topmost folder holding an `__init__.py`) first on
/// sys.path.
/// Throws ToolchainError when the Python cannot be started or fails
/// outside the writers.
StructHeaderCheck check_struct_headers(const Config& config, SourceRecord& record);

/// "<header>: error: <problem>", the diff, and "regenerate it: <command>",
/// for a terminal; the header as `display` writes it.
std::string finding_text(const StructHeaderFinding& finding,
                         const std::function<std::string(const std::filesystem::path&)>& display);

/// `{"header", "writer", "problem", "diff", "regenerate"}` of each finding;
/// paths as `display` writes them.
nlohmann::json to_json(const std::vector<StructHeaderFinding>& findings,
                       const std::function<std::string(const std::filesystem::path&)>& display);

}  // namespace ck
