#pragma once

namespace ck::cli {

/// Parses the command line, runs the command, returns the process exit code.
int run(int argc, char** argv);

}  // namespace ck::cli
