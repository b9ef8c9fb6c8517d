// Every decision about the terminal in one place: colour (NO_COLOR, TERM=dumb,
// --color), progress lines only on a terminal, quiet and verbose levels.
// stdout carries results; stderr carries logs and progress.
#pragma once

#include "util/text.hpp"

#include <cstddef>
#include <string>

namespace ck::cli {

enum class ColorMode { automatic, always, never };

class Terminal {
public:
    Terminal(int verbosity, ColorMode color);

    bool interactive() const { return interactive_; }
    bool colored() const { return colored_; }
    int verbosity() const { return verbosity_; }  ///< -1 quiet, 0 normal, 1 verbose

    // Every line below is printed with the bytes that are not UTF-8 (paths in
    // a Latin-1 folder) as \xNN (util::printable); --json results hold none.

    /// Replaces the progress line (terminal only, not when quiet).
    void progress(const std::string& line);
    /// Ends the progress line so that later output starts on a clean line.
    void clear_progress();
    /// A log line on stderr at `level` (0 normal, 1 verbose); clears progress first.
    void note(const std::string& line, int level = 0);
    /// A result on stdout, without colour when stdout is not a terminal
    /// (unless --color always).
    void result(const std::string& text);

    std::string bold(const std::string& text) const;
    std::string red(const std::string& text) const;
    std::string green(const std::string& text) const;
    std::string yellow(const std::string& text) const;

private:
    std::string paint(const char* code, const std::string& text) const;
    static std::string without_color(const std::string& text);

    int verbosity_;
    bool interactive_;
    bool colored_;
    bool results_colored_;
    bool progress_shown_ = false;
};

using util::counted;

}  // namespace ck::cli
