#include "signatures/kernel_declaration.hpp"

#include "cunumpy_kernels/error.hpp"
#include "signatures/cuda_signature_reader.hpp"
#include "util/sha256.hpp"

#include <unordered_set>

namespace ck::signatures {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The project headers a reading opened, each as [spelled, includer, path
// or "" when none was found, digest of the text read]; a header included
// again (include guards) once.
class LoggedHeaders : public IncludeSource {
public:
    explicit LoggedHeaders(ProjectHeaders& headers) : headers_(headers) {}

    std::optional<IncludedFile> open(const std::string& spelled, const fs::path& includer) override
    {
        auto file = headers_.open(spelled, includer);
        if (seen_.insert(spelled + '\n' + includer.string()).second)
            opened.push_back({spelled, includer.string(), file ? file->path.string() : "", file ? sha256_hex(file->text) : ""});
        return file;
    }

    json opened = json::array();

private:
    ProjectHeaders& headers_;
    std::unordered_set<std::string> seen_;
};

// Whether each logged opening would find the same file with the same content
// now. A header the reading could not open (a bound, an unreadable file)
// counts as changed when it is found now: read again, never guessed.
bool opens_the_same(const json& opened, const ProjectHeaders& headers, SourceRecord& record)
{
    for (const auto& opening : opened) {
        std::optional<fs::path> found = headers.find(opening.at(0).get<std::string>(), opening.at(1).get<std::string>());
        const std::string& path = opening.at(2).get_ref<const std::string&>();
        if (path.empty() != !found) return false;
        if (path.empty()) continue;
        try {
            if (record.canonical(*found) != path) return false;
            if (record.digest(path) != opening.at(3).get<std::string>()) return false;
        } catch (const SourceError&) {
            return false;
        }
    }
    return true;
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
        declaration.template_parameters.push_back({p.at(0).get<bool>(), p.at(1).get<std::string>(), p.at(2).get<bool>()});
    for (const auto& i : json.at(4)) declaration.instantiations.push_back({i.at(0).get<int>(), i.at(1).get<std::string>()});
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
                                          HeaderCache* header_cache, SourceRecord* record, std::string_view source_sha256)
{
    ProjectHeaders headers = project_headers_of(kernel, config, header_cache);
    if (!record) return reduced(read_cuda_declaration(source, kernel.name, &headers));
    // The folders are part of the question: another configuration keeps its own answer.
    json dirs = json::array();
    for (const auto& dir : kernel.include_dirs(config)) dirs.push_back(dir.string());
    std::string question =
        json::array({"cuda-declaration/1", kernel.name, kernel.cuda_file.value_or(fs::path()).string(), dirs}).dump();
    std::string digest = source_sha256.empty() ? sha256_hex(source) : std::string(source_sha256);
    auto read = [&] {
        LoggedHeaders logged(headers);
        KernelDeclaration declaration = reduced(read_cuda_declaration(source, kernel.name, &logged));
        return json{{"opened", std::move(logged.opened)}, {"declaration", declaration_to_json(declaration)}};
    };
    auto still_opens = [&](const json& known) { return opens_the_same(known.at("opened"), headers, *record); };
    return kernel_declaration_of(record->answer(digest, question, read, still_opens).at("declaration"));
}

CunumpyReading read_as_cunumpy_recorded(std::string_view source, const std::string& name,
                                        const std::vector<std::string>* template_args, int hint_line,
                                        SourceRecord* record, std::string_view source_sha256)
{
    if (!record) return read_as_cunumpy(source, name, template_args, hint_line);
    std::string question = json::array({"cunumpy-reading/1", name, template_args ? json(*template_args) : json(nullptr),
                                        hint_line}).dump();
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
