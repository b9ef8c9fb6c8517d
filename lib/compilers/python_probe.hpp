// Where the Python environment's cunumpy keeps its CUDA headers
// (`<site-packages>/cunumpy/cuda/include`, what cunumpy.cuda.cuda_include_dir()
// returns), found without importing cunumpy.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace ck {

class ToolProbe;

/// Asks `python` (a name in PATH or a path) through importlib's find_spec,
/// which reads the environment's paths but imports nothing. The answer is kept
/// in `probe` per interpreter file; a kept answer whose folder has vanished
/// is asked again. Nothing when Python or cunumpy is missing.
std::optional<std::filesystem::path> find_cunumpy_include_dir(const std::string& python, const ToolProbe& probe);

/// The answer `find_cunumpy_include_dir` remembered for `python`, without
/// starting any process; nothing when it never asked or the folder vanished.
std::optional<std::filesystem::path> find_remembered_cunumpy_include_dir(const std::string& python,
                                                                         const ToolProbe& probe);

/// cunumpy's version as `python` would import it
/// (importlib.metadata.version("cunumpy"), which imports nothing); nothing
/// when Python or cunumpy is missing. Starts Python every time: callers ask
/// only when they need the answer.
std::optional<std::string> find_cunumpy_version(const std::string& python);

}  // namespace ck
