#include "signatures/declaration_memo.hpp"

#include "util/file_util.hpp"

namespace ck::signatures {

namespace fs = std::filesystem;

DeclarationMemo::DeclarationMemo(std::function<std::string(const std::string&)> digest) : digest_(std::move(digest)) {}

CudaKernelDeclaration DeclarationMemo::read(const KernelSource& kernel, const Config& config, std::string_view source,
                                            HeaderCache* cache)
{
    ProjectHeaders headers = project_headers_of(kernel, config, cache);
    return read_and_keep(declaration_question(kernel, config), kernel.name, source, headers, cache);
}

KernelDeclaration DeclarationMemo::get(const KernelSource& kernel, const Config& config, std::string_view source,
                                       HeaderCache* cache)
{
    ProjectHeaders headers = project_headers_of(kernel, config, cache);
    std::string question = declaration_question(kernel, config);
    std::shared_ptr<const Kept> kept;
    {
        std::lock_guard lock(mutex_);
        if (auto it = kept_.find(question); it != kept_.end() && it->second->source == source) kept = it->second;
    }
    auto canonical = [](const fs::path& path) {
        std::error_code error;
        fs::path resolved = util::canonical_path(path, error);
        return error ? std::string() : resolved.string();
    };
    if (kept && opens_the_same(kept->opened, headers, canonical, digest_)) return kept->declaration;
    {
        std::lock_guard lock(mutex_);
        ++readings_;
    }
    return reduced(read_and_keep(std::move(question), kernel.name, source, headers, cache));
}

std::size_t DeclarationMemo::readings() const
{
    std::lock_guard lock(mutex_);
    return readings_;
}

CudaKernelDeclaration DeclarationMemo::read_and_keep(std::string question, const std::string& name,
                                                     std::string_view source, ProjectHeaders& headers,
                                                     HeaderCache* cache)
{
    std::vector<HeaderOpening> opened;
    // The first call's include scan lexes the source for its directives: it
    // finds them kept here (about a tenth of a first call, bench/RESULTS.md).
    std::vector<CppToken> tokens = cache && cache->lexed() ? cache->lexed()->lex_whole(source) : lex_cpp(source);
    CudaKernelDeclaration found = read_cuda_declaration_logged(source, name, headers, opened, &tokens);
    auto kept = std::make_shared<const Kept>(Kept{std::string(source), std::move(opened), reduced(found)});
    std::lock_guard lock(mutex_);
    kept_.insert_or_assign(std::move(question), std::move(kept));
    return found;
}

}  // namespace ck::signatures
