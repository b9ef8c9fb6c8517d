// Where the Python environment's cunumpy keeps its CUDA headers
// (`<site-packages>/cunumpy/cuda/include`, what cunumpy.cuda.cuda_include_dir()
// returns), found without importing cunumpy.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ck {

class ToolProbe;

/// How long a question to a Python interpreter may take. Its answers need
/// only importlib and sysconfig, a second on a cold cluster file system; an
/// interpreter that does not answer in two minutes (a wrapper waiting for
/// something, a hung mount) is reported, not waited for forever.
constexpr int python_probe_seconds = 120;

/// A fingerprint of everything that changes what an interpreter finds
/// without changing the interpreter file: each sys.path folder's
/// modification time (pip install and uninstall touch site-packages), the C
/// library and the kernel release (both in platform.platform()) and
/// PYTHONPATH. Probes of the environment (its facts, where cunumpy's headers
/// are) are kept under it.
std::string python_environment_signature(const std::vector<std::string>& path);

/// sys.path as `interpreter` last reported it to a probe under today's
/// PYTHONPATH (the interpreter file alone does not fix it); nothing when
/// never asked or the record is damaged.
std::optional<std::vector<std::string>> remembered_sys_path(const std::filesystem::path& interpreter,
                                                            const ToolProbe& probe);

/// Records `path` as `interpreter`'s sys.path under today's PYTHONPATH.
void remember_sys_path(const std::filesystem::path& interpreter, const ToolProbe& probe,
                       const std::vector<std::string>& path);

/// Asks `python` (a name in PATH or a path) through importlib's find_spec,
/// which reads the environment's paths but imports nothing. The answer is kept
/// in `probe` per interpreter file and environment (python_environment_signature
/// of its sys.path: a PYTHONPATH or an install that puts another cunumpy first
/// asks again); a kept answer whose folder has vanished is asked again.
/// Nothing when Python or cunumpy is missing.
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
