#include "status_bundle.hpp"
#include "util/json_text.hpp"

#include "path_display.hpp"

#include "status/bundle_status.hpp"

#include <spdlog/spdlog.h>

namespace ck::cli {

namespace {

std::string artifacts_text(const BundleKernelStatus& kernel)
{
    std::string text;
    for (const auto& a : kernel.artifacts)
        if (a.state != "current")
            text += (text.empty() ? "" : "; ") + a.target + ": " + a.state + " (" + a.reason + ")";
    return text.empty() ? kernel.reason : text;
}

std::string report_text(const BundleStatus& status, const Terminal& terminal)
{
    std::string targets = util::comma_list(status.targets);
    std::string head = "bundle " + display_path(status.bundle) + " (made " + status.created + ", " +
                       (targets.empty() ? "no target" : targets) + "): ";
    if (status.current())
        return head + terminal.green("current") + ", " + counted(status.kernels.size(), "kernel") + "\n";
    std::string text = head + terminal.yellow("stale") + "\n";
    if (!status.toolkit_change.empty()) text += "  toolkit: " + status.toolkit_change + "\n";
    for (const auto& k : status.kernels) {
        if (k.state == "current") continue;
        std::string detail =
            k.state == "changed" || k.state == "unknown" || k.state == "corrupt" ? ": " + artifacts_text(k) : "";
        text += "  " + k.state + " " + k.module + detail + "\n";
    }
    return text;
}

}  // namespace

int run_status_bundle(const std::filesystem::path& bundle, const TreeOptions& tree, const TargetOptions& targets,
                      bool json, Terminal& terminal)
{
    // A bundle not made yet is one to make, as a stale one is: a job script's
    // `status --bundle B || { build; bundle; }` covers the first run too.
    std::error_code error;
    if (!std::filesystem::exists(bundle, error) && !error) {
        std::string failure = "there is no bundle at " + display_path(bundle) +
                              ": run cunumpy-kernels build, then cunumpy-kernels bundle -o " + display_path(bundle);
        if (json) {
            nlohmann::json j = {{"bundle", display_path(bundle)},
                                {"state", "missing"},
                                {"current", false},
                                {"ok", false},
                                {"failed_gates", nlohmann::json::array({failure})}};
            terminal.result(util::json_text(j, 2) + "\n");
        }
        terminal.note(terminal.red(failure), -1);
        return 1;
    }
    auto config_at = [&](const std::filesystem::path& start) {
        Config config = tree.resolve_at(start);
        targets.apply(config);
        return config;
    };
    BundleStatus status = read_bundle_status(bundle, tree.path_list(), config_at, tree.cache_dir.has_value());
    for (const auto& warning : status.warnings) spdlog::warn("{}", warning);
    std::string failure;
    if (!status.modules("corrupt").empty())
        failure = "the bundle " + display_path(bundle) +
                  " is damaged: copy it again from where it was made, or make "
                  "it again (cunumpy-kernels bundle)";
    else if (!status.current() && !status.toolkit_change.empty())
        failure = "the bundle " + display_path(bundle) +
                  " was made with another CUDA toolkit: give status --cuda-root " + status.toolkit.root +
                  " to compare it with the tree, or run cunumpy-kernels build, then "
                  "cunumpy-kernels bundle with this one";
    else if (!status.current())
        failure = "the bundle " + display_path(bundle) +
                  " is stale: run cunumpy-kernels build, then cunumpy-kernels "
                  "bundle with the same options";
    if (json) {
        nlohmann::json j = to_json(status, display_path);
        j["ok"] = failure.empty();
        j["failed_gates"] = failure.empty() ? nlohmann::json::array() : nlohmann::json::array({failure});
        terminal.result(util::json_text(j, 2) + "\n");
    } else {
        terminal.result(report_text(status, terminal));
    }
    if (!failure.empty()) terminal.note(terminal.red(failure), -1);
    return failure.empty() ? 0 : 1;
}

}  // namespace ck::cli
