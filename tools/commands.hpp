// The sub-commands. Each registers its flags on its CLI11 sub-app and returns
// the function that runs it; the table in cli.cpp lists them all.
#pragma once

#include "terminal.hpp"

#include <CLI/CLI.hpp>

#include <functional>

namespace ck::cli {

/// Runs a parsed command and returns its exit code.
using CommandRunner = std::function<int(Terminal&)>;

CommandRunner setup_build(CLI::App& command);
CommandRunner setup_bundle(CLI::App& command);
CommandRunner setup_cache(CLI::App& command);
CommandRunner setup_check_signatures(CLI::App& command);
CommandRunner setup_status(CLI::App& command);

}  // namespace ck::cli
