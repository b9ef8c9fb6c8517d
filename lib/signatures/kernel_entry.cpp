#include "signatures/kernel_entry.hpp"

#include "cunumpy_kernels/error.hpp"
#include "signatures/kernel_declaration.hpp"
#include "util/text.hpp"

namespace ck {

namespace {

using util::comma_list;

std::string where(const KernelSource& kernel, int line)
{
    return kernel.cuda_file->string() + (line > 0 ? ":" + std::to_string(line) : "");
}

std::string config_file(const Config& config)
{
    return config.source_file.empty() ? "the package's pyproject.toml" : config.source_file.string();
}

// An example the user can paste: one placeholder per template parameter.
std::string example_args(const std::vector<signatures::TemplateParameter>& parameters)
{
    std::string text;
    for (const auto& p : parameters)
        text += std::string(text.empty() ? "" : ", ") + (p.is_type ? "\"double\"" : "\"1\"");
    return "[" + (text.empty() ? std::string("\"double\"") : text) + "]";
}

std::string parameter_names(const std::vector<signatures::TemplateParameter>& parameters)
{
    std::vector<std::string> names;
    for (const auto& p : parameters) names.push_back(p.name.empty() ? "?" : p.name);
    return comma_list(names);
}

// "double, Pair<int, 3>" -> {"double", "Pair<int, 3>"}: commas at the top level.
std::vector<std::string> split_arguments(const std::string& text)
{
    std::vector<std::string> args(1);
    int depth = 0;
    for (char ch : text) {
        depth += (ch == '<' || ch == '(' || ch == '[') ? 1 : (ch == '>' || ch == ')' || ch == ']') ? -1 : 0;
        if (ch == ',' && depth == 0)
            args.emplace_back();
        else if (!(ch == ' ' && args.back().empty()))
            args.back() += ch;
    }
    return args;
}

}  // namespace

const std::vector<std::string>* configured_template_args(const KernelSource& kernel, const Config& config)
{
    auto found = config.template_args.find(kernel.module);
    if (found == config.template_args.end()) found = config.template_args.find(kernel.name);
    return found == config.template_args.end() ? nullptr : &found->second;
}

KernelEntry kernel_entry(const KernelSource& kernel, const Config& config, std::string_view source,
                         signatures::HeaderCache* header_cache, SourceRecord* record, std::string_view source_sha256)
{
    return kernel_entry_of(
        kernel, config,
        signatures::read_kernel_declaration(kernel, config, source, header_cache, record, source_sha256));
}

KernelEntry kernel_entry_of(const KernelSource& kernel, const Config& config,
                            const signatures::KernelDeclaration& found)
{
    KernelEntry entry{kernel.name, {}, ""};
    const std::vector<std::string>* configured = configured_template_args(kernel, config);
    std::string from_config = "template-args in " + config_file(config);
    auto with = [&](std::vector<std::string> args, std::string origin) {
        entry.expression = kernel.name + "<" + comma_list(args) + ">";
        entry.template_args = std::move(args);
        entry.origin = std::move(origin);
        return entry;
    };
    if (found.read.status != SignatureRead::Status::found) return configured ? with(*configured, from_config) : entry;
    const auto& declaration = found;
    const int line = declaration.line;
    if (!declaration.is_template) {
        if (configured)
            throw SourceError(where(kernel, line) + ": __global__ " + kernel.name + " is not a template, but " +
                              from_config + " gives it template arguments (" + comma_list(*configured) +
                              "); remove its entry from [tool.cunumpy-kernels] template-args");
        return entry;
    }
    const auto& parameters = declaration.template_parameters;
    if (configured) {
        if (!parameters.empty() && configured->size() != parameters.size())
            throw SourceError(where(kernel, line) + ": __global__ " + kernel.name + " is a template with " +
                              std::to_string(parameters.size()) + " parameter" + (parameters.size() == 1 ? "" : "s") +
                              " (" + parameter_names(parameters) + "), but " + from_config + " gives " +
                              std::to_string(configured->size()) + " (" + comma_list(*configured) +
                              "); give one argument per parameter, as cunumpy's template_args");
        return with(*configured, from_config);
    }
    if (found.instantiations.size() == 1)
        return with(split_arguments(found.instantiations.front().arguments),
                    "the explicit instantiation at line " + std::to_string(found.instantiations.front().line));
    std::string key =
        "[tool.cunumpy-kernels] template-args = { " + kernel.name + " = " + example_args(parameters) + " }";
    if (found.instantiations.size() > 1) {
        std::string lines;
        for (const auto& i : found.instantiations)
            lines += (lines.empty() ? "" : ", ") + kernel.name + "<" + i.arguments + "> (line " +
                     std::to_string(i.line) + ")";
        throw SourceError(where(kernel, line) + ": __global__ " + kernel.name + " is a template instantiated " +
                          std::to_string(found.instantiations.size()) + " times (" + lines +
                          "); the entry must be one: choose it in " + config_file(config) + " with " + key);
    }
    throw SourceError(where(kernel, line) + ": __global__ " + kernel.name + " is a template (template <" +
                      parameter_names(parameters) + ">) without template arguments; set them in " +
                      config_file(config) + " as cunumpy's template_args, " + key +
                      ", or instantiate it in the source: template __global__ void " + kernel.name + "<...>(...);");
}

}  // namespace ck
