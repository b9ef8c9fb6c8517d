#include "struct_headers/cubin_layout_checker.hpp"

#include "cache/cache.hpp"
#include "compilers/artifact_check.hpp"
#include "cunumpy_kernels/error.hpp"
#include "struct_headers/struct_layouts.hpp"
#include "util/file_util.hpp"
#include "util/json_text.hpp"

namespace ck {

std::string CubinLayoutChecker::problem(const KernelSource& kernel, const JobResult& job)
{
    if (job.kind != "cuda" || job.artifacts.empty() || job.target.rfind("sm_", 0) != 0 || !kernel.cuda_file) return "";
    if (job.state != JobState::hit && job.state != JobState::built) return "";
    if (!structs_ && structs_error_.empty()) {
        try {
            structs_ = configured_struct_layouts(config_);
        } catch (const Error& error) {
            structs_error_ = error.what();
        }
    }
    if (!structs_error_.empty()) return structs_error_;
    try {
        if (job.key.empty()) return cubin_problem(kernel, job);
        // Kept under the source's digest: the record keeps facts of the files it holds.
        return record_
            .answer(record_.digest(*kernel.cuda_file), question(job.key, job.target),
                    [&] { return nlohmann::json(cubin_problem(kernel, job)); })
            .get<std::string>();
    } catch (const Error& error) {
        return error.what();
    }
}

// What the outcome depends on: the entry's key, its target and the structs' layouts.
std::string CubinLayoutChecker::question(const std::string& key, const std::string& target) const
{
    nlohmann::json structs = nlohmann::json::object();
    for (const auto& [name, layout] : *structs_) structs[name] = {layout.size, layout.alignment};
    // /2: offsets in the target's parameter bank (parameter_bank_offset).
    return util::json_text(nlohmann::json::array({"cubin-layout/2", key, target, structs}));
}

std::string CubinLayoutChecker::cubin_problem(const KernelSource& kernel, const JobResult& job)
{
    try {
        if (!layout_ || layout_->kernel != kernel.name || module_ != kernel.module) {
            layout_ = runtime_layout(kernel, config_, *structs_);
            module_ = kernel.module;
        }
        std::string where = (job.entry / "manifest.json").string();
        Manifest manifest = Manifest::without_inputs(util::read_file(job.entry / "manifest.json"), where);
        std::string what = job.artifacts.front().filename().string() + " of " + kernel.cuda_file->string();
        check_cubin_layout(util::read_file(job.artifacts.front()), job.target, manifest.entry_symbol, what, *layout_,
                           false);
        return "";
    } catch (const ArtifactError& error) {
        return error.what();
    }
}

}  // namespace ck
