// The command table, global flags and the one place that maps errors to exit
// codes: 0 ok, 1 failure, 2 usage, 75 try again (a read a network file
// system kept refusing), 130 interrupted.
#include "cli.hpp"

#include "commands.hpp"
#include "terminal.hpp"

#include "builder/build.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/byte_text.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

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
    {"bundle",
     "Write one file with the catalog and the cached cubins and PTX of a tree, for KernelCatalog::from_bundle",
     setup_bundle},
    {"status", "Show which kernels have CUDA, whether signatures agree, and the cache state of every artifact",
     setup_status},
    {"check-signatures", "Check that each kernel's host and CUDA versions take the same parameters (files or trees)",
     setup_check_signatures},
};

// The commands a command line names, outermost first ("cache verify"), and
// the first word that names none where a command is expected (`cache stats`):
// CLI11 would only say "A subcommand is required", and point at the top
// level's help.
struct CommandWords {
    std::string path;                   ///< "cache verify"; "" before any command
    std::vector<std::string> expected;  ///< the commands allowed where `unknown` stands, or where none stands
    const char* unknown = nullptr;
    bool missing = false;  ///< the line ends where a command is expected (`cunumpy-kernels`, `cache`)
};

CommandWords command_words(const CLI::App& app, int argc, char** argv)
{
    CommandWords words;
    const CLI::App* at = &app;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (at == &app && arg == "--color") {
            ++i;
            continue;
        }
        if (arg.empty() || arg[0] == '-') continue;
        auto subcommands = at->get_subcommands([](const CLI::App*) { return true; });
        if (subcommands.empty()) break;  // a leaf command: the rest are its arguments
        auto named = std::find_if(subcommands.begin(), subcommands.end(),
                                  [&](const CLI::App* c) { return c->get_name() == arg; });
        if (named == subcommands.end()) {
            for (const CLI::App* c : subcommands) words.expected.push_back(c->get_name());
            words.unknown = argv[i];
            break;
        }
        at = *named;
        words.path += (words.path.empty() ? "" : " ") + arg;
    }
    auto subcommands = at->get_subcommands([](const CLI::App*) { return true; });
    if (!words.unknown && !subcommands.empty()) {
        words.missing = true;
        for (const CLI::App* c : subcommands) words.expected.push_back(c->get_name());
    }
    return words;
}

bool asks_help_or_version(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help" || arg == "--version") return true;
    }
    return false;
}

constexpr int exit_failure = 1;
constexpr int exit_usage = 2;
constexpr int exit_temporary_failure = 75;  // EX_TEMPFAIL of sysexits.h: try again later

// SIGINT, SIGTERM, SIGHUP (a login session that ends) and SIGQUIT: stop the
// compilers we started and remove our locks, then die of the signal as the
// caller expects (a shell reports 130 for SIGINT).
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
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(signal_number, &action, nullptr);
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

    // `status -q src` as well as `-q status src`: an option a command does not
    // know falls through to the global ones (every command inherits this).
    app.fallthrough();
    std::map<CLI::App*, CommandRunner> runners;
    for (const auto& spec : command_table) {
        CLI::App* command = app.add_subcommand(spec.name, spec.help);
        runners[command] = spec.setup(*command);
    }

    CommandWords words = command_words(app, argc, argv);
    std::string help = "cunumpy-kernels" + (words.path.empty() ? "" : " " + words.path) + " --help";
    app.failure_message([help](const CLI::App*, const CLI::Error& error) {
        return "cunumpy-kernels: error: " + util::printable(error.what()) + "\nRun '" + help + "' for the options.\n";
    });
    if (words.unknown || (words.missing && !asks_help_or_version(argc, argv))) {
        std::string kind = (words.path.empty() ? "" : words.path + " ") + "command";
        std::string message =
            "cunumpy-kernels: error: " +
            (words.unknown ? "unknown " + kind + " '" + words.unknown + "'" : "no " + kind + " given") + "; " + kind +
            "s:";
        for (const auto& name : words.expected) message += " " + name;
        std::fprintf(stderr, "%s\nRun '%s' for the options.\n", util::printable(message).c_str(), help.c_str());
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
    } catch (const TransientReadError& error) {
        terminal.clear_progress();
        spdlog::error("{}", error.what());
        return exit_temporary_failure;
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
