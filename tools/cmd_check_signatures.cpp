// `cunumpy-kernels check-signatures`: read every kernel's declarations and
// report each one whose implementations take different parameters.
#include "commands.hpp"
#include "util/json_text.hpp"
#include "path_display.hpp"
#include "tree_options.hpp"

#include "cache/cache.hpp"
#include "source/source_record.hpp"
#include "cunumpy_kernels/error.hpp"
#include "compilers/python_probe.hpp"
#include "package/kernel_walker.hpp"
#include "status/signature_report.hpp"
#include "struct_headers/header_check.hpp"
#include "struct_headers/unchecked_structs.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <map>
#include <memory>
#include <mutex>

namespace ck::cli {

namespace {

namespace fs = std::filesystem;

struct CheckFlags {
    TreeOptions tree;
    std::string format = "text";
    bool warnings_as_errors = false;
};

bool is_warning(const SignatureFinding& finding) { return finding.severity == SignatureFinding::Severity::warning; }

constexpr int exit_mismatch = 1;
constexpr int exit_unreadable_path = 2;

// Files as the reader of a report finds them: GitHub resolves annotation
// paths against the workspace, a terminal user against the working folder.
std::string report_path(const fs::path& file, bool github)
{
    const char* workspace = github ? std::getenv("GITHUB_WORKSPACE") : nullptr;
    if (workspace && *workspace && file.is_absolute()) {
        std::error_code error;
        fs::path root = fs::weakly_canonical(workspace, error);
        fs::path relative = error ? fs::path() : fs::weakly_canonical(file, error).lexically_relative(root);
        if (!error && !relative.empty() && *relative.begin() != "..") return relative.string();
    }
    return display_path(file);
}

std::string location(const Signature& signature)
{
    std::string file = display_path(signature.file);
    return signature.read.line > 0 ? fmt::format("{}:{}", file, signature.read.line) : file;
}

// GitHub's workflow-command escaping: data escapes %, CR and LF; property
// values also , and :.
std::string github_escape(const std::string& text, bool property)
{
    std::string out;
    for (char c : text) {
        if (c == '%')
            out += "%25";
        else if (c == '\r')
            out += "%0D";
        else if (c == '\n')
            out += "%0A";
        else if (property && c == ':')
            out += "%3A";
        else if (property && c == ',')
            out += "%2C";
        else
            out += c;
    }
    return out;
}

// gcc's layout, so editors and pre-commit users can jump to each declaration:
// the error at the declaration that differs, a note at the host kernel's.
std::string text_report(const std::vector<KernelSignatures>& kernels, const Terminal& terminal)
{
    std::string out;
    for (const auto& kernel : kernels)
        for (const auto& finding : kernel.findings) {
            const Signature& at = finding.declarations.back();
            std::string severity = is_warning(finding) ? terminal.bold("warning:") : terminal.red("error:");
            out += fmt::format("{}: {} {}\n", location(at), severity, finding.message);
            if (finding.declarations.size() > 1)
                out += fmt::format("{}: {} the {} is declared here\n", location(finding.declarations.front()),
                                   terminal.bold("note:"), finding.declarations.front().role);
        }
    return out;
}

std::string github_report(const std::vector<KernelSignatures>& kernels)
{
    std::string out;
    for (const auto& kernel : kernels)
        for (const auto& finding : kernel.findings)
            for (const auto& declaration : finding.declarations) {
                std::string properties = "file=" + github_escape(report_path(declaration.file, true), true);
                if (declaration.read.line > 0) properties += fmt::format(",line={}", declaration.read.line);
                properties += ",title=" + github_escape("kernel " + kernel.name + ": " + declaration.role, true);
                out += (is_warning(finding) ? "::warning " : "::error ") + properties +
                       "::" + github_escape(finding.message, false) + "\n";
            }
    return out;
}

// The walk's warnings (a folder whose module binds no function of its name,
// a name too long for Pyccel) start with the absolute path they concern:
// split off, so that each report names it as it names every file.
struct LocatedWarning {
    std::string path;     ///< empty when the warning names no path
    std::string message;  ///< the rest, after "<path>: "
};

LocatedWarning split_walk_warning(const std::string& warning)
{
    std::size_t colon = warning.find(": ");
    if (warning.empty() || warning[0] != '/' || colon == std::string::npos) return {"", warning};
    return {warning.substr(0, colon), warning.substr(colon + 2)};
}

std::string displayed_warning(const std::string& warning)
{
    LocatedWarning split = split_walk_warning(warning);
    return split.path.empty() ? warning : display_path(split.path) + ": " + split.message;
}

std::string github_walk_warnings(const std::vector<std::string>& warnings)
{
    std::string out;
    for (const auto& warning : warnings) {
        LocatedWarning split = split_walk_warning(warning);
        std::string properties =
            split.path.empty() ? "" : " file=" + github_escape(report_path(split.path, true), true);
        out += "::warning" + properties + "::" + github_escape(split.message, false) + "\n";  // the file is named once
    }
    return out;
}

// One line that says what the exit status says.
std::string summary(const std::vector<KernelSignatures>& kernels, std::size_t walk_warnings, std::size_t headers,
                    std::size_t header_findings, bool warnings_fail)
{
    std::size_t compared = 0, mismatched = 0, unreadable = 0, warnings = walk_warnings;
    for (const auto& kernel : kernels) {
        SignatureAgreement agreement = kernel.agreement();
        compared += agreement != SignatureAgreement::nothing_to_compare ? 1 : 0;
        mismatched += agreement == SignatureAgreement::mismatch ? 1 : 0;
        bool error = std::any_of(kernel.findings.begin(), kernel.findings.end(),
                                 [](const SignatureFinding& f) { return !is_warning(f); });
        unreadable += agreement == SignatureAgreement::unreadable && error ? 1 : 0;
        warnings += static_cast<std::size_t>(std::count_if(kernel.findings.begin(), kernel.findings.end(), is_warning));
    }
    std::string warned =
        !warnings ? "" : ", " + counted(warnings, "warning") + (warnings_fail ? " (errors: warnings-as-errors)" : "");
    std::string structs = headers == 0 && header_findings == 0 ? ""
                          : header_findings == 0
                              ? "; " + counted(headers, "struct header") + " up to date"
                              : fmt::format("; {} of {} struct headers fail", header_findings, headers);
    if (mismatched + unreadable == 0)
        return fmt::format("check-signatures: {}, {} with more than one implementation: {}{}{}",
                           counted(kernels.size(), "kernel"), compared,
                           header_findings == 0 ? "all agree" : "signatures agree", warned, structs);
    return fmt::format("check-signatures: {}, {} compared: {} differ, {} cannot be read{}{}",
                       counted(kernels.size(), "kernel"), compared, mismatched, unreadable, warned, structs);
}

// Warnings fail the check only when asked to.
int exit_code(const std::vector<KernelSignatures>& kernels, bool warnings_as_errors)
{
    int code = 0;
    for (const auto& kernel : kernels)
        for (const auto& finding : kernel.findings) {
            if (finding.kind == SignatureFinding::Kind::unreadable_file) return exit_unreadable_path;
            if (!is_warning(finding) || warnings_as_errors) code = exit_mismatch;
        }
    return code;
}

// cunumpy's version, asked of the tree's Python once and only when a
// warning is worded: a hook with nothing to warn about starts no process.
// Two threads check kernels (check_signatures): the first to ask starts it.
CunumpyVersion cunumpy_version_of(const std::string& python)
{
    struct Asked {
        std::once_flag once;
        std::string version;
    };
    auto asked = std::make_shared<Asked>();
    return [asked, python] {
        std::call_once(asked->once, [&] { asked->version = find_cunumpy_version(python).value_or(""); });
        return asked->version;
    };
}

// As a pre-commit hook the paths are the staged files: one the commit
// deletes is gone from the tree and has nothing to check.
std::vector<fs::path> existing_paths(const std::vector<fs::path>& paths, Terminal& terminal)
{
    std::vector<fs::path> present;
    for (const auto& path : paths) {
        std::error_code error;
        if (fs::exists(path, error))
            present.push_back(path);
        else
            terminal.note("check-signatures: " + path.string() + " does not exist (deleted or renamed): skipped");
    }
    return present;
}

// Each path is read with the configuration of its nearest pyproject.toml,
// as `build` of that tree would read it: in a monorepo the packages'
// suffixes may differ.
std::vector<KernelSignatures> check_paths(const CheckFlags& flags, const std::vector<fs::path>& paths,
                                          bool& warnings_as_errors, std::vector<std::string>& walk_warnings,
                                          std::vector<StructHeaderFinding>& header_findings,
                                          std::size_t& configured_headers)
{
    warnings_as_errors = flags.warnings_as_errors;
    std::map<fs::path, std::vector<fs::path>> by_config;
    for (const auto& path : paths) by_config[load_config(path).source_file].push_back(path);
    if (paths.empty()) by_config[{}] = {};  // the working folder's tree, walked
    std::vector<KernelSignatures> results;
    for (const auto& [pyproject, group] : by_config) {
        Config config = group.empty() ? flags.tree.resolve() : flags.tree.resolve_at(group.front());
        warnings_as_errors = warnings_as_errors || config.warnings_as_errors;
        SourceRecord record(source_record_file(config));
        std::vector<KernelSource> kernels;
        try {
            kernels = kernels_of_paths(
                group, config, [&](const std::string& w) { walk_warnings.push_back(w); }, &record);
        } catch (const SourceError& error) {
            throw UsageError(error.what());  // a folder that cannot be listed is an unreadable path: exit 2
        }
        CunumpyVersion version = cunumpy_version_of(config.python);
        signatures::HeaderCache headers;
        for (auto& checked : check_signatures(kernels, config, version, &headers, &record))
            results.push_back(std::move(checked));
        StructHeaderCheck checked = check_struct_headers(config, record);
        configured_headers += checked.headers;
        // Without layouts a header cannot be laid out: the header check reports it.
        if (checked.layouts)
            for (auto& warning : unchecked_struct_warnings(kernels, config, *checked.layouts))
                walk_warnings.push_back(std::move(warning));
        for (auto& finding : checked.findings) header_findings.push_back(std::move(finding));
        record.save();
    }
    return results;
}

int run_check(const CheckFlags& flags, Terminal& terminal)
{
    std::vector<fs::path> paths = flags.tree.path_list();
    if (!flags.tree.paths.empty()) {
        paths = existing_paths(paths, terminal);
        if (paths.empty()) return 0;
    }
    bool warnings_as_errors = false;
    std::vector<std::string> walk_warnings;
    std::vector<StructHeaderFinding> headers;
    std::size_t configured_headers = 0;
    std::vector<KernelSignatures> results =
        check_paths(flags, paths, warnings_as_errors, walk_warnings, headers, configured_headers);
    if (flags.format != "github")
        for (const auto& warning : walk_warnings) spdlog::warn("{}", warning);
    int code = exit_code(results, warnings_as_errors);
    if (code == 0 && warnings_as_errors && !walk_warnings.empty()) code = exit_mismatch;
    if (code == 0 && !headers.empty()) code = exit_mismatch;
    if (flags.format == "json") {
        nlohmann::json report = to_json(results, display_path);
        for (auto& warning : walk_warnings) report["walk_warnings"].push_back(displayed_warning(warning));
        if (walk_warnings.empty()) report["walk_warnings"] = nlohmann::json::array();
        report["summary"]["warnings"] = report["summary"]["warnings"].get<std::size_t>() + walk_warnings.size();
        report["struct_headers"] = to_json(headers, display_path);
        report["summary"]["struct_headers"] = configured_headers;  // as the text summary counts them
        report["summary"]["struct_header_findings"] = headers.size();
        report["ok"] = code == 0;  // as the exit status says, --warnings-as-errors included
        terminal.result(util::json_text(report, 2) + "\n");
    } else if (flags.format == "github") {
        std::string annotations;
        for (const auto& h : headers)
            annotations +=
                "::error file=" + github_escape(report_path(h.header, true), true) +
                (h.line > 0 ? ",line=" + std::to_string(h.line) : "") + "::" +
                github_escape(
                    h.problem + "\n" + h.diff + (h.regenerate.empty() ? "" : "regenerate it: " + h.regenerate), false) +
                "\n";
        terminal.result(github_walk_warnings(walk_warnings) + github_report(results) + annotations);
    } else {
        std::string header_text;
        for (const auto& h : headers) header_text += finding_text(h, display_path);
        terminal.result(text_report(results, terminal) + header_text);
        terminal.note(summary(results, walk_warnings.size(), configured_headers, headers.size(), warnings_as_errors));
    }
    return code;
}

}  // namespace

CommandRunner setup_check_signatures(CLI::App& command)
{
    auto flags = std::make_shared<CheckFlags>();
    flags->tree.add_to(command);
    // Here the cache is only where the record of source digests is kept.
    command.get_option("--cache-dir")
        ->description(
            "Cache root whose .records/sources keeps the record of source digests "
            "(default: ~/.cache/cunumpy-kernels/sources.record)");
    command
        .add_option("--format", flags->format, "text (file:line: error: ...), json, or github (workflow annotations)")
        ->check(CLI::IsMember({"text", "json", "github"}));
    command.add_flag("--warnings-as-errors", flags->warnings_as_errors,
                     "exit 1 on warnings too (cunumpy cannot read a declaration); also the warnings-as-errors key");
    return [flags](Terminal& terminal) { return run_check(*flags, terminal); };
}

}  // namespace ck::cli
