// Keys of host (Pyccel) builds: ours, which covers every input including the
// content of imported modules, and cunumpy's PyccelCache key, which names the
// folder cunumpy looks in (cunumpy/_pyccel_cache.py, cunumpy 0.7).
#pragma once

#include "source/python_text.hpp"
#include "util/sha256.hpp"
#include "host/python_environment.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ck {

/// Bumped whenever the entries' layout or the meaning of an input changes.
inline constexpr const char* host_key_format = "cunumpy-kernels/host/1";

/// The `_LAYOUT` tag in cunumpy's key (its `pyccel compile` entry layout).
inline constexpr const char* cunumpy_layout = "pyccel-cli-1";

/// Whether a module calls the OpenMP runtime (cunumpy's test: it names
/// `pyccel.stdlib.internal.openmp`); such modules are built with OpenMP even
/// when OpenMP is off.
bool uses_openmp_runtime(const std::string& source);

/// PyccelCache.build_key: the first 20 hex digits of SHA-256 over the source
/// text, the language, the layout tag, `openmp=True|False`, the Pyccel version,
/// sys.version and platform.platform(), concatenated.
std::string cunumpy_build_key(const std::string& source_text, const std::string& language, bool openmp,
                              const PythonFacts& facts);

/// The same, continuing a stream that has been fed the source text only.
std::string cunumpy_build_key(const Sha256Stream& source_text_hash, const std::string& language, bool openmp,
                              const PythonFacts& facts);

/// `<stem>-<key>`, the folder PyccelCache(name).compile(module) loads from:
/// the stem is the module name's last part (`a.b.push_kernels` -> `push_kernels`).
std::string cunumpy_entry_name(const std::string& module, const std::string& cunumpy_key);

/// What a module's build does, leaving out module names: the digest of its
/// text (`python_source_text`), OpenMP, and the stem and content key of each
/// module it imports, as (stem, content key) pairs in any order. cunumpy names
/// a build after the module's text alone, so two modules of one text share
/// one name; when their content keys agree their builds are the same code and
/// cunumpy may load either for both, when they differ it must not. The
/// toolchain is left out: modules compared share it (cunumpy's name covers
/// language, Pyccel, Python and platform).
std::string host_content_key(const std::string& source_sha256, bool openmp,
                             std::vector<std::pair<std::string, std::string>> imports);

/// What every host module of one build shares.
struct HostToolchain {
    std::string language;    ///< "c" or "fortran"
    bool openmp = true;      ///< OpenMP for modules that do not call its runtime
    PythonFacts python;      ///< the interpreter that loads the builds
    std::string pyccel;      ///< "pyccel 2.2.3"
    std::string c_compiler;  ///< first line of `gcc --version` (and gfortran's for Fortran)
    std::string cache_root;  ///< the entries' root: builds hold absolute paths of the entries they import from
    nlohmann::json pyccel_settings = nlohmann::json::object();  ///< PyccelSettings::key_inputs(); {} for the defaults
};

/// The key inputs of one module (see cache.hpp: no paths of the sources, no
/// times); `source_sha256` is the digest of its python_source_text(). `imports` maps each directly imported module to
/// its own key, so a change anywhere below changes every key above it. The cache root is an input: Pyccel writes the
/// absolute folders of imported modules' builds into a build, so a cache copied elsewhere must build again.
nlohmann::json host_key_inputs(const std::string& module, const std::string& file_name,
                               const std::string& source_sha256, const std::map<std::string, std::string>& imports,
                               const HostToolchain& toolchain, bool openmp);

}  // namespace ck
