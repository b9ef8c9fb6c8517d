#include "host/host_key.hpp"

#include "cache/cache.hpp"

#include <algorithm>

namespace ck {

bool uses_openmp_runtime(const std::string& source)
{
    return source.find("pyccel.stdlib.internal.openmp") != std::string::npos;
}

std::string cunumpy_build_key(const std::string& source_text, const std::string& language, bool openmp,
                              const PythonFacts& facts)
{
    Sha256Stream hash;
    hash.update(source_text);
    return cunumpy_build_key(hash, language, openmp, facts);
}

std::string cunumpy_build_key(const Sha256Stream& source_text_hash, const std::string& language, bool openmp,
                              const PythonFacts& facts)
{
    Sha256Stream hash(source_text_hash);
    for (const std::string& part :
         {language, std::string(cunumpy_layout), std::string(openmp ? "openmp=True" : "openmp=False"), facts.pyccel,
          facts.version, facts.platform})
        hash.update(part);
    return hash.hex().substr(0, 20);
}

std::string cunumpy_entry_name(const std::string& module, const std::string& cunumpy_key)
{
    return module.substr(module.rfind('.') + 1) + "-" + cunumpy_key;
}

std::string host_content_key(const std::string& source_sha256, bool openmp,
                             std::vector<std::pair<std::string, std::string>> imports)
{
    // Sorted: the importers compared have one text, hence one import order,
    // but entries record their imports by name, not in that order.
    std::sort(imports.begin(), imports.end());
    nlohmann::json listed = nlohmann::json::array();
    for (const auto& [stem, content] : imports) listed.push_back({stem, content});
    return cache_key({{"source", source_sha256}, {"openmp", openmp}, {"imports", listed}});
}

nlohmann::json host_key_inputs(const std::string& module, const std::string& file_name,
                               const std::string& source_sha256, const std::map<std::string, std::string>& imports,
                               const HostToolchain& toolchain, bool openmp)
{
    nlohmann::json inputs = {
        {"format", host_key_format},
        {"module", module},
        {"source", {{"file", file_name}, {"sha256", source_sha256}}},
        {"imports", imports},
        {"language", toolchain.language},
        {"openmp", openmp},
        {"pyccel", toolchain.pyccel},
        {"compiler", toolchain.c_compiler},
        {"python", toolchain.python.version},
        {"platform", toolchain.python.platform},
        {"numpy", toolchain.python.numpy},
        {"ext_suffix", toolchain.python.ext_suffix},
        {"cache_root", toolchain.cache_root},
    };
    if (!toolchain.pyccel_settings.empty()) inputs["pyccel_settings"] = toolchain.pyccel_settings;
    return inputs;
}

}  // namespace ck
