// The command table, global flags and the one place that maps errors to exit
// codes: 0 ok, 1 failure, 2 usage, 130 interrupted.
#include "cli.hpp"

#include "commands.hpp"
#include "terminal.hpp"

#include "cunumpy_kernels/error.hpp"

#include <spdlog/spdlog.h>

#include <iostream>
#include <map>

namespace ck::cli {

namespace {

struct CommandSpec {
    const char* name;
    const char* help;
    CommandRunner (*setup)(CLI::App&);
};

const CommandSpec command_table[] = {
    {"build", "Compile every kernel's host (Pyccel) and CUDA builds that the cache lacks", setup_build},
};

constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

}  // namespace

int run(int argc, char** argv)
{
    CLI::App app("Build and cache host and CUDA kernels of cunumpy kernel packages", "cunumpy-kernels");
    app.set_version_flag("--version", std::string("cunumpy-kernels ") + CUNUMPY_KERNELS_VERSION);
    app.require_subcommand(1);
    int verbosity = 0;
    bool quiet = false;
    std::string color = "auto";
    app.add_flag("-q,--quiet", quiet, "Print errors and results only");
    app.add_flag("-v,--verbose", verbosity, "Print more (hits, compiler commands)");
    app.add_option("--color", color, "Colour: auto (terminal, no NO_COLOR), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));

    std::map<CLI::App*, CommandRunner> runners;
    for (const auto& spec : command_table) {
        CLI::App* command = app.add_subcommand(spec.name, spec.help);
        runners[command] = spec.setup(*command);
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        int code = app.exit(error);
        return code == 0 ? 0 : exit_usage;
    }

    ColorMode mode = color == "always" ? ColorMode::always : color == "never" ? ColorMode::never : ColorMode::automatic;
    Terminal terminal(quiet ? -1 : verbosity, mode);
    try {
        for (auto& [command, runner] : runners)
            if (command->parsed()) return runner(terminal);
        return exit_usage;
    } catch (const UsageError& error) {
        terminal.clear_progress();
        spdlog::error("{}", error.what());
        return exit_usage;
    } catch (const Error& error) {
        terminal.clear_progress();
        spdlog::error("{}", error.what());
        return exit_failure;
    } catch (const std::exception& error) {
        terminal.clear_progress();
        spdlog::error("internal error: {}", error.what());
        return exit_failure;
    }
}

}  // namespace ck::cli
