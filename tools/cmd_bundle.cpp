// `cunumpy-kernels bundle`: one file with a tree's catalog and its CUDA
// artifacts from the cache, for ranks that open it with
// KernelCatalog::from_bundle.
#include "commands.hpp"
#include "util/json_text.hpp"
#include "path_display.hpp"
#include "target_options.hpp"
#include "tree_options.hpp"

#include "bundle/bundle_writer.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <memory>

namespace ck::cli {

namespace {

struct BundleFlags {
    TreeOptions tree;
    TargetOptions targets;
    std::string output;
    bool json = false;
};

int run_bundle(const BundleFlags& flags, Terminal& terminal)
{
    BundleRequest request{flags.tree.path_list(), flags.tree.resolve(), flags.output};
    flags.targets.apply(request.config);
    // As build: the config's mask decides the file's mode (a bundle shared by a group); the library never sets it.
    if (request.config.umask) ::umask(static_cast<mode_t>(*request.config.umask));
    BundleSummary summary = write_bundle(request);
    for (const auto& warning : summary.warnings) spdlog::warn("{}", warning);
    if (flags.json) {
        nlohmann::json j = {{"ok", true},
                            {"bundle", display_path(summary.output)},
                            {"kernels", summary.kernels},
                            {"with_cuda", summary.ported},
                            {"targets", summary.targets},
                            {"artifacts", summary.artifacts},
                            {"bytes", summary.bytes}};
        terminal.result(util::json_text(j, 2) + "\n");
    } else if (terminal.verbosity() >= 0) {
        terminal.result(
            fmt::format("{}: {} ({} with CUDA), {} for {}, {} bytes\n", display_path(summary.output),
                        counted(summary.kernels, "kernel"), summary.ported, counted(summary.artifacts, "artifact"),
                        summary.targets.empty() ? "no target" : util::comma_list(summary.targets), summary.bytes));
    }
    return 0;
}

}  // namespace

CommandRunner setup_bundle(CLI::App& command)
{
    auto flags = std::make_shared<BundleFlags>();
    command.add_option("-o,--output", flags->output, "The bundle file to write (replaced atomically)")
        ->required()
        ->check(non_empty_path());
    flags->tree.add_to(command);
    flags->targets.add_to(command);
    command.add_flag("--json", flags->json, "Print one JSON document on stdout");
    return [flags](Terminal& terminal) { return run_bundle(*flags, terminal); };
}

}  // namespace ck::cli
