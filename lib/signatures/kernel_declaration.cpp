#include "signatures/kernel_declaration.hpp"
#include "util/json_text.hpp"

#include "cunumpy_kernels/error.hpp"
#include "signatures/cuda_signature_reader.hpp"
#include "util/sha256.hpp"

#include <unordered_set>

namespace ck::signatures {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Logs each project header a reading opens; a header included again
// (include guards) once.
class LoggedHeaders : public IncludeSource {
public:
    LoggedHeaders(ProjectHeaders& headers, std::vector<HeaderOpening>& opened) : headers_(headers), opened_(opened) {}

    std::optional<IncludedFile> open(const std::string& spelled, const fs::path& includer) override
    {
        auto file = headers_.open(spelled, includer);
        if (seen_.insert(spelled + '\n' + includer.string()).second)
            opened_.push_back(
                {spelled, includer.string(), file ? file->path.string() : "", file ? sha256_hex(file->text) : ""});
        return file;
    }

private:
    ProjectHeaders& headers_;
    std::vector<HeaderOpening>& opened_;
    std::unordered_set<std::string> seen_;
};

json openings_to_json(const std::vector<HeaderOpening>& opened)
{
    json list = json::array();
    for (const auto& o : opened) list.push_back({o.spelled, o.includer, o.path, o.sha256});
    return list;
}

std::vector<HeaderOpening> openings_of(const json& list)
{
    std::vector<HeaderOpening> opened;
    for (const auto& o : list)
        opened.push_back({o.at(0).get<std::string>(), o.at(1).get<std::string>(), o.at(2).get<std::string>(),
                          o.at(3).get<std::string>()});
    return opened;
}

json declaration_to_json(const KernelDeclaration& declaration)
{
    json parameters = json::array(), instantiations = json::array();
    for (const auto& p : declaration.template_parameters) parameters.push_back({p.is_type, p.name, p.has_default});
    for (const auto& i : declaration.instantiations) instantiations.push_back({i.line, i.arguments});
    return {to_json(declaration.read), declaration.is_template, declaration.line, parameters, instantiations};
}

KernelDeclaration kernel_declaration_of(const json& json)
{
    KernelDeclaration declaration{signature_read_of(json.at(0)), json.at(1).get<bool>(), json.at(2).get<int>(), {}, {}};
    for (const auto& p : json.at(3))
        declaration.template_parameters.push_back(
            {p.at(0).get<bool>(), p.at(1).get<std::string>(), p.at(2).get<bool>()});
    for (const auto& i : json.at(4))
        declaration.instantiations.push_back({i.at(0).get<int>(), i.at(1).get<std::string>()});
    return declaration;
}

}  // namespace

KernelDeclaration reduced(const CudaKernelDeclaration& found)
{
    KernelDeclaration declaration{found.read, false, 0, {}, found.instantiations};
    if (found.read.status == SignatureRead::Status::found) {
        const CudaDeclaration& chosen = found.declarations[found.chosen];
        declaration.is_template = chosen.is_template;
        declaration.line = chosen.line;
        declaration.template_parameters = chosen.template_parameters;
    }
    return declaration;
}

std::string declaration_question(const KernelSource& kernel, const Config& config)
{
    // The folders are part of the question: another configuration keeps its own answer.
    json dirs = json::array();
    for (const auto& dir : kernel.include_dirs(config)) dirs.push_back(dir.string());
    return util::json_text(
        json::array({"cuda-declaration/1", kernel.name, kernel.cuda_file.value_or(fs::path()).string(), dirs}));
}

CudaKernelDeclaration read_cuda_declaration_logged(std::string_view source, const std::string& name,
                                                   ProjectHeaders& headers, std::vector<HeaderOpening>& opened,
                                                   const std::vector<CppToken>* tokens)
{
    LoggedHeaders logged(headers, opened);
    return tokens ? read_cuda_declaration_of_tokens(*tokens, name, &logged)
                  : read_cuda_declaration(source, name, &logged);
}

bool opens_the_same(const std::vector<HeaderOpening>& opened, const ProjectHeaders& headers,
                    const std::function<std::string(const fs::path&)>& canonical,
                    const std::function<std::string(const std::string&)>& digest)
{
    for (const auto& opening : opened) {
        std::optional<fs::path> found = headers.find(opening.spelled, opening.includer);
        if (opening.path.empty() != !found) return false;
        if (opening.path.empty()) continue;
        try {
            if (canonical(*found) != opening.path) return false;
            if (digest(opening.path) != opening.sha256) return false;
        } catch (const SourceError&) {
            return false;
        }
    }
    return true;
}

json to_json(const SignatureRead& read)
{
    return {static_cast<int>(read.status), read.line, read.parameters, read.reason, read.conditional};
}

SignatureRead signature_read_of(const json& json)
{
    return {static_cast<SignatureRead::Status>(json.at(0).get<int>()), json.at(1).get<int>(),
            json.at(2).get<std::vector<std::string>>(), json.at(3).get<std::string>(), json.at(4).get<bool>()};
}

KernelDeclaration read_kernel_declaration(const KernelSource& kernel, const Config& config, std::string_view source,
                                          HeaderCache* header_cache, SourceRecord* record,
                                          std::string_view source_sha256)
{
    ProjectHeaders headers = project_headers_of(kernel, config, header_cache);
    if (!record) return reduced(read_cuda_declaration(source, kernel.name, &headers));
    std::string question = declaration_question(kernel, config);
    std::string digest = source_sha256.empty() ? sha256_hex(source) : std::string(source_sha256);
    auto read = [&] {
        std::vector<HeaderOpening> opened;
        KernelDeclaration declaration = reduced(read_cuda_declaration_logged(source, kernel.name, headers, opened));
        return json{{"opened", openings_to_json(opened)}, {"declaration", declaration_to_json(declaration)}};
    };
    auto still_opens = [&](const json& known) {
        return opens_the_same(
            openings_of(known.at("opened")), headers, [&](const fs::path& path) { return record->canonical(path); },
            [&](const std::string& path) { return record->digest(path); });
    };
    return kernel_declaration_of(record->answer(digest, question, read, still_opens).at("declaration"));
}

CunumpyReading read_as_cunumpy_recorded(std::string_view source, const std::string& name,
                                        const std::vector<std::string>* template_args, int hint_line,
                                        SourceRecord* record, std::string_view source_sha256)
{
    if (!record) return read_as_cunumpy(source, name, template_args, hint_line);
    std::string question = util::json_text(
        json::array({"cunumpy-reading/1", name, template_args ? json(*template_args) : json(nullptr), hint_line}));
    std::string digest = source_sha256.empty() ? sha256_hex(source) : std::string(source_sha256);
    auto read = [&] {
        CunumpyReading reading = read_as_cunumpy(source, name, template_args, hint_line);
        return json{reading.raises, reading.why, reading.line, reading.names};
    };
    json known = record->answer(digest, question, read);
    return {known.at(0).get<bool>(), known.at(1).get<std::string>(), known.at(2).get<int>(),
            known.at(3).get<std::vector<std::string>>()};
}

}  // namespace ck::signatures
