// `cunumpy-kernels status`: the porting line, one row per kernel, and the CI
// gates.
#include "commands.hpp"
#include "util/json_text.hpp"
#include "path_display.hpp"
#include "status_bundle.hpp"
#include "target_options.hpp"
#include "tree_options.hpp"

#include "compilers/cuda_compiler.hpp"
#include "cunumpy_kernels/error.hpp"
#include "status/status.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>
#include <memory>

namespace ck::cli {

namespace {

struct StatusFlags {
    TreeOptions tree;
    TargetOptions targets;
    StatusGates gates;
    bool json = false;
    std::optional<std::string> only;
    bool cupy_cache = false;
    std::optional<std::string> cupy_cache_dir;
    std::optional<std::string> bundle;
};

// --bundle compares a bundle's keys for the bundle's targets: flags that
// choose targets or other reports would be silently ignored, so they are refused.
void refuse_with_bundle(const StatusFlags& flags)
{
    const TargetFlags& t = flags.targets;
    bool other = !t.architectures.empty() || t.ptx || t.no_ptx || t.compiler || !t.options.empty() ||
                 !t.verbatim.empty() || flags.only || flags.cupy_cache || flags.cupy_cache_dir ||
                 flags.gates.require_cuda || flags.gates.require_built || flags.gates.check_signatures;
    if (other)
        throw UsageError(
            "--bundle: the bundle names its targets, compiler and compiler options and is one gate of its "
            "own; --arch, --ptx, --no-ptx, --compiler, --compiler-option, --only, --cupy-cache, "
            "--cupy-cache-dir, --require-cuda, --require-built and --check-signatures do not apply to it");
}

std::string host_kinds(const KernelSource& kernel)
{
    std::string kinds;
    for (const auto& host : kernel.host)
        if (kinds.find(host.kind) == std::string::npos) kinds += (kinds.empty() ? "" : "+") + host.kind;
    return kinds;
}

// Long reasons (a compiler not probed yet, an interpreter that cannot be
// reached) tend to hold for every row: each is printed once, under the
// table, and the rows refer to it by number.
class Footnotes {
public:
    std::string refer(const std::string& reason)
    {
        constexpr std::size_t inline_limit = 60;
        if (reason.size() <= inline_limit && reason.find('\n') == std::string::npos) return reason;
        auto it = std::find(notes_.begin(), notes_.end(), reason);
        if (it == notes_.end()) it = notes_.insert(notes_.end(), reason);
        return "see [" + std::to_string(it - notes_.begin() + 1) + "]";
    }

    std::string text() const
    {
        std::string out;
        for (std::size_t i = 0; i < notes_.size(); ++i) out += "[" + std::to_string(i + 1) + "] " + notes_[i] + "\n";
        return out.empty() ? out : "\n" + out;
    }

private:
    std::vector<std::string> notes_;
};

// "sm_90" for a cubin, "host" for a host module in the cache, "in-place" for
// one beside its source.
std::string target_label(const ArtifactStatus& artifact)
{
    if (artifact.kind == "cuda" || artifact.kind == artifact.target) return artifact.target;
    return artifact.kind + ":" + artifact.target;
}

// Artifacts grouped by state and reason: "built: sm_80, sm_90" reads better
// than three rows that say the same.
std::string artifacts_cell(const KernelStatus& status, const Terminal& terminal, Footnotes& notes)
{
    std::vector<std::pair<std::string, std::string>> groups;
    for (const auto& a : status.artifacts) {
        std::string head = to_string(a.state);
        if (!a.reason.empty()) head += " (" + notes.refer(a.reason) + ")";
        std::string label = target_label(a);
        auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == head; });
        if (it == groups.end())
            groups.emplace_back(head, label);
        else
            it->second += ", " + label;
    }
    std::string cell;
    for (const auto& [head, labels] : groups) {
        std::string text = head + ": " + labels;
        cell +=
            (cell.empty() ? "" : "; ") + (head.rfind("built", 0) == 0 ? terminal.green(text) : terminal.yellow(text));
    }
    return cell.empty() ? "-" : cell;
}

std::string table(const StatusReport& report, const Terminal& terminal)
{
    Footnotes notes;
    std::vector<std::array<std::string, 5>> rows = {{"kernel", "host", "CUDA", "signatures", "artifacts"}};
    for (const auto& k : report.kernels)
        rows.push_back({k.kernel.module, host_kinds(k.kernel), k.kernel.cuda_file ? "yes" : "no",
                        to_string(k.signatures.agreement()), artifacts_cell(k, terminal, notes)});
    std::array<std::size_t, 4> width{};
    for (const auto& row : rows)
        for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
    std::string out;
    for (const auto& row : rows)
        out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", row[0], width[0], row[1], width[1], row[2], width[2],
                           row[3], width[3], row[4]);
    return out + notes.text();
}

// `text` with every line after the first starting with `indent`.
std::string indented(const std::string& text, const std::string& indent)
{
    std::string out;
    for (char c : text) out += c == '\n' ? "\n" + indent : std::string(1, c);
    return out;
}

// In place: one line of counts for the modules kernels import, then a line
// for each that is not built.
std::string modules_lines(const StatusReport& report, const Terminal& terminal)
{
    if (report.modules.empty()) return "";
    std::map<std::string, std::size_t> counts;
    std::string details;
    for (const auto& m : report.modules) {
        ++counts[to_string(m.artifact.state)];
        if (m.artifact.state == ArtifactState::built) continue;
        std::string reason = m.artifact.reason.empty() ? "" : " (" + indented(m.artifact.reason, "    ") + ")";
        details += "  " + m.module + ": " + terminal.yellow(to_string(m.artifact.state) + reason) + "\n";
    }
    std::string line;
    for (const auto& [state, n] : counts) line += (line.empty() ? "" : ", ") + std::to_string(n) + " " + state;
    return "\nother modules built in place: " + line + "\n" + details;
}

// Kernels whose cached Pyccel version the runtime cannot call (a parameter
// the host library's shim does not handle): named with the catalog's reason.
std::string host_library_lines(const StatusReport& report, const Terminal& terminal)
{
    std::string lines;
    for (const auto& k : report.kernels)
        if (k.host_library && !k.host_library->callable)
            lines += "  " + k.kernel.module + ": " + terminal.yellow(indented(k.host_library->reason, "    ")) + "\n";
    return lines.empty() ? "" : "\nhost libraries (the Pyccel versions the runtime calls):\n" + lines;
}

bool asks_cupy(const StatusFlags& flags) { return flags.cupy_cache || flags.cupy_cache_dir || flags.only == "cupy"; }

int run_status(const StatusFlags& flags, Terminal& terminal)
{
    if (flags.bundle) {
        refuse_with_bundle(flags);
        return run_status_bundle(*flags.bundle, flags.tree, flags.targets, flags.json, terminal);
    }
    StatusRequest request{flags.tree.path_list(), flags.tree.resolve()};
    request.host = flags.only.value_or("host") == "host";
    request.cuda = flags.only.value_or("cuda") == "cuda";
    request.cupy = asks_cupy(flags);
    if (flags.cupy_cache_dir) request.cupy_cache_dir = std::filesystem::path(*flags.cupy_cache_dir);
    flags.targets.apply(request.config);
    StatusReport report = read_status(request);
    for (const auto& warning : report.warnings) spdlog::warn("{}", warning);
    std::vector<std::string> failures = failed_gates(report, flags.gates);
    if (flags.json) {
        nlohmann::json j = to_json(report, display_path);
        j["ok"] = failures.empty();
        j["failed_gates"] = failures;
        terminal.result(util::json_text(j, 2) + "\n");
    } else {
        std::string cupy = report.cupy && !report.cupy->description().empty()
                               ? "\nCuPy's kernel cache: " + report.cupy->description() + "\n"
                               : "";
        CudaToolkit toolkit = find_cuda_toolkit(request.config);
        std::string cuda =
            request.cuda ? "\nCUDA toolkit: " + toolkit.root.string() + " (found by " + toolkit.found_by + ")\n" : "";
        std::string headers;
        for (const auto& h : report.struct_headers) headers += "\n" + finding_text(h, display_path);
        terminal.result(report.summary() + "\n\n" + table(report, terminal) + modules_lines(report, terminal) +
                        host_library_lines(report, terminal) + cupy + cuda + headers);
    }
    for (const auto& failure : failures) terminal.note(terminal.red(failure), -1);
    return failures.empty() ? 0 : 1;
}

}  // namespace

CommandRunner setup_status(CLI::App& command)
{
    auto flags = std::make_shared<StatusFlags>();
    flags->tree.add_to(command);
    flags->targets.add_to(command);
    command.add_flag("--json", flags->json, "Print one JSON document on stdout");
    command
        .add_option(
            "--only", flags->only,
            "Report only the host (Pyccel), only the CUDA artifacts, or only CuPy's cache (cupy), as build --only")
        ->check(CLI::IsMember({"host", "cuda", "cupy"}));
    command.add_flag("--cupy-cache", flags->cupy_cache,
                     "Also report whether CuPy's kernel cache holds each CUDA kernel (starts --python with CuPy; "
                     "compiles no kernel)");
    command
        .add_option("--cupy-cache-dir", flags->cupy_cache_dir,
                    "CuPy's cache folder to read (implies --cupy-cache; default: $CUPY_CACHE_DIR, else "
                    "~/.cupy/kernel_cache)")
        ->check(non_empty_path());
    command
        .add_option("--bundle", flags->bundle,
                    "Say whether this bundle (cunumpy-kernels bundle) is stale for the trees (default: those it was "
                    "made from): exit 1 when a kernel's key changed or kernels were added or removed")
        ->check(non_empty_path());
    command.add_flag("--require-cuda", flags->gates.require_cuda, "Exit 1 unless every kernel has a CUDA version");
    command.add_flag("--require-built", flags->gates.require_built,
                     "Exit 1 unless every artifact is in the cache for the current configuration");
    command.add_flag("--check-signatures", flags->gates.check_signatures,
                     "Exit 1 unless every kernel's versions take the same parameters");
    return [flags](Terminal& terminal) { return run_status(*flags, terminal); };
}

}  // namespace ck::cli
