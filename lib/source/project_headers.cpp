#include "source/project_headers.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

namespace ck::signatures {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> read_text(const fs::path& path)
{
    try {
        return util::read_file(path);
    } catch (const Error&) {
        return std::nullopt;  // not followed, as a header that is not there
    }
}

}  // namespace

std::shared_ptr<const std::vector<CppToken>> LexedTexts::directives(const std::string& text)
{
    {
        std::lock_guard lock(mutex_);
        if (auto it = by_text_.find(text); it != by_text_.end()) return it->second;
    }
    auto tokens = std::make_shared<const std::vector<CppToken>>(lex_cpp(text, LexScope::directives));
    std::lock_guard lock(mutex_);
    return by_text_.emplace(text, std::move(tokens)).first->second;
}

std::vector<CppToken> LexedTexts::lex_whole(std::string_view text)
{
    std::vector<CppToken> all = lex_cpp(text);
    std::string key(text);
    {
        std::lock_guard lock(mutex_);
        if (by_text_.count(key)) return all;
    }
    auto directives = std::make_shared<const std::vector<CppToken>>(directive_tokens(all));
    std::lock_guard lock(mutex_);
    by_text_.emplace(std::move(key), std::move(directives));
    return all;
}

std::size_t LexedTexts::size() const
{
    std::lock_guard lock(mutex_);
    return by_text_.size();
}

std::optional<IncludedFile> HeaderCache::get(const fs::path& path)
{
    std::lock_guard lock(mutex_);
    auto it = files_read_.find(path);
    if (it != files_read_.end()) return it->second;
    std::optional<IncludedFile> file;
    try {
        if (auto text = read_text(path)) {
            auto tokens = lexed_ ? lexed_->directives(*text)
                                 : std::make_shared<const std::vector<CppToken>>(lex_cpp(*text, LexScope::directives));
            file = IncludedFile{path, std::move(*text), std::move(tokens)};
        }
    } catch (const std::exception&) {
        // Beyond memory: not followed, as without a cache.
    }
    return files_read_.emplace(path, std::move(file)).first->second;
}

ProjectHeaders::ProjectHeaders(fs::path main_file, std::vector<fs::path> dirs, HeaderCache* cache)
    : main_dir_(main_file.parent_path()), dirs_(std::move(dirs)), cache_(cache)
{
}

std::optional<fs::path> ProjectHeaders::find(const std::string& spelled, const fs::path& includer) const
{
    if (spelled.size() < 3) return std::nullopt;
    bool quoted = spelled.front() == '"';
    std::string name = spelled.substr(1, spelled.size() - 2);
    if (name.empty() || fs::path(name).is_absolute()) return std::nullopt;
    auto is_file = [this](const fs::path& candidate) {
        std::error_code error;
        return cache_ ? cache_->is_file(candidate) : fs::is_regular_file(candidate, error);
    };
    if (quoted) {
        fs::path beside = (includer.empty() ? main_dir_ : includer.parent_path()) / name;
        if (is_file(beside)) return beside;
    }
    for (const auto& dir : dirs_)
        if (fs::path candidate = dir / name; is_file(candidate)) return candidate;
    return std::nullopt;
}

std::optional<IncludedFile> ProjectHeaders::open(const std::string& spelled, const fs::path& includer)
{
    if (opened_ >= max_headers) return std::nullopt;
    std::optional<fs::path> candidate = find(spelled, includer);
    if (!candidate) return std::nullopt;
    std::error_code error;
    fs::path path = util::canonical_path(*candidate, error);
    auto size = fs::file_size(*candidate, error);
    if (error || size > max_bytes - bytes_) return std::nullopt;
    std::optional<IncludedFile> file;
    if (cache_)
        file = cache_->get(path);
    else if (auto text = read_text(path))
        file = IncludedFile{path, std::move(*text), nullptr};
    if (!file) return std::nullopt;
    ++opened_;
    bytes_ += file->text.size();
    return file;
}

ProjectHeaders project_headers_of(const KernelSource& kernel, const Config& config, HeaderCache* cache)
{
    return ProjectHeaders(kernel.cuda_file.value_or(kernel.folder / "none.cu"), kernel.include_dirs(config), cache);
}

}  // namespace ck::signatures
