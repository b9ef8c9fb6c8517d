#include "signatures/declaration_memo.hpp"

namespace ck::signatures {

namespace fs = std::filesystem;

namespace {

// Another configuration's folders find other headers: each keeps its own reading.
std::string question(const KernelSource& kernel, const Config& config)
{
    std::string text = kernel.name + '\n' + kernel.cuda_file.value_or(fs::path()).string();
    for (const auto& dir : kernel.include_dirs(config)) text += '\n' + dir.string();
    return text;
}

}  // namespace

DeclarationMemo::DeclarationMemo(std::function<std::string(const std::string&)> digest) : digest_(std::move(digest)) {}

CudaKernelDeclaration DeclarationMemo::read(const KernelSource& kernel, const Config& config, std::string_view source,
                                            HeaderCache* cache)
{
    ProjectHeaders headers = project_headers_of(kernel, config, cache);
    return read_and_keep(kernel, config, source, headers);
}

KernelDeclaration DeclarationMemo::get(const KernelSource& kernel, const Config& config, std::string_view source,
                                       HeaderCache* cache)
{
    ProjectHeaders headers = project_headers_of(kernel, config, cache);
    std::string asked = question(kernel, config);
    std::optional<Kept> kept;
    {
        std::lock_guard lock(mutex_);
        if (auto it = kept_.find(asked); it != kept_.end() && it->second.source == source)
            kept = it->second;
    }
    auto canonical = [](const fs::path& path) {
        std::error_code error;
        fs::path resolved = fs::canonical(path, error);
        return error ? std::string() : resolved.string();
    };
    if (kept && opens_the_same(kept->opened, headers, canonical, digest_)) return kept->declaration;
    {
        std::lock_guard lock(mutex_);
        ++readings_;
    }
    return reduced(read_and_keep(kernel, config, source, headers));
}

std::size_t DeclarationMemo::readings() const
{
    std::lock_guard lock(mutex_);
    return readings_;
}

CudaKernelDeclaration DeclarationMemo::read_and_keep(const KernelSource& kernel, const Config& config,
                                                     std::string_view source, ProjectHeaders& headers)
{
    std::vector<HeaderOpening> opened;
    CudaKernelDeclaration found = read_cuda_declaration_logged(source, kernel.name, headers, opened);
    Kept kept{std::string(source), std::move(opened), reduced(found)};
    std::lock_guard lock(mutex_);
    kept_.insert_or_assign(question(kernel, config), std::move(kept));
    return found;
}

}  // namespace ck::signatures
