// The command table, global flags and the one place that maps errors to exit
// codes: 0 ok, 1 failure, 2 usage, 130 interrupted.
#include "cli.hpp"

#include "commands.hpp"
#include "terminal.hpp"

#include "build/build.hpp"
#include "cunumpy_kernels/error.hpp"

#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
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
    {"cache", "Inspect, verify, prune, export and import the cache", setup_cache},
    {"bundle", "Write one file with the catalog and the cached cubins and PTX of a tree, for KernelCatalog::from_bundle", setup_bundle},
    {"status", "Show which kernels have CUDA, whether signatures agree, and the cache state of every artifact", setup_status},
    {"check-signatures", "Check that each kernel's host and CUDA versions take the same parameters (files or trees)", setup_check_signatures},
};

// The first word that is neither a global flag nor its value, when it names no
// command: CLI11 would only say "A subcommand is required".
const char* unknown_command(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--color") {
            ++i;
            continue;
        }
        if (arg.empty() || arg[0] == '-') continue;
        for (const auto& spec : command_table)
            if (arg == spec.name) return nullptr;
        return argv[i];
    }
    return nullptr;
}

constexpr int exit_failure = 1;
constexpr int exit_usage = 2;

// SIGINT/SIGTERM: stop the compilers we started, then die of the signal as
// the caller expects (a shell reports 130 for SIGINT).
extern "C" void on_interrupt(int signal_number)
{
    stop_compiler_processes();
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
}

void install_interrupt_handlers()
{
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
}

}  // namespace

int run(int argc, char** argv)
{
    install_interrupt_handlers();
    CLI::App app("Build and cache host and CUDA kernels of cunumpy kernel packages", "cunumpy-kernels");
    app.set_version_flag("--version", std::string("cunumpy-kernels ") + CUNUMPY_KERNELS_VERSION);
    app.require_subcommand(1);
    int verbosity = 0;
    bool quiet = false;
    std::string color = "auto";
    app.add_flag("-q,--quiet", quiet, "Print errors and results only");
    app.add_flag("-v,--verbose", verbosity, "Print more (hits, every finished job)");
    app.add_option("--color", color, "Colour: auto (terminal, no NO_COLOR), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));

    std::map<CLI::App*, CommandRunner> runners;
    for (const auto& spec : command_table) {
        CLI::App* command = app.add_subcommand(spec.name, spec.help);
        runners[command] = spec.setup(*command);
    }

    app.failure_message([](const CLI::App* failed, const CLI::Error& error) {
        std::string command = failed->get_parent() ? "cunumpy-kernels " + failed->get_name() : "cunumpy-kernels";
        return "cunumpy-kernels: error: " + std::string(error.what()) + "\nRun '" + command + " --help' for the options.\n";
    });
    if (auto unknown = unknown_command(argc, argv)) {
        std::fprintf(stderr, "cunumpy-kernels: error: unknown command '%s'; commands:", unknown);
        for (const auto& spec : command_table) std::fprintf(stderr, " %s", spec.name);
        std::fprintf(stderr, "\n");
        return exit_usage;
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
