#include "terminal.hpp"

#include "util/byte_text.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace ck::cli {

namespace {

bool color_allowed(ColorMode mode, bool interactive)
{
    if (mode != ColorMode::automatic) return mode == ColorMode::always;
    const char* no_color = std::getenv("NO_COLOR");  // no-color.org: any non-empty value
    if (no_color && *no_color) return false;
    const char* term = std::getenv("TERM");
    if (term && std::string(term) == "dumb") return false;
    return interactive;
}

// The %* of the log pattern: the message, its bytes that are not UTF-8 as \xNN.
class PrintableMessage : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& message, const std::tm&, spdlog::memory_buf_t& out) override
    {
        std::string text = util::printable(std::string_view(message.payload.data(), message.payload.size()));
        out.append(text.data(), text.data() + text.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<PrintableMessage>(); }
};

void configure_logger(bool colored, int verbosity)
{
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(colored ? spdlog::color_mode::always
                                                                              : spdlog::color_mode::never);
    auto logger = std::make_shared<spdlog::logger>("cunumpy-kernels", sink);
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<PrintableMessage>('*').set_pattern("cunumpy-kernels: %^%l%$: %*");
    logger->set_formatter(std::move(formatter));
    logger->set_level(verbosity < 0 ? spdlog::level::err : verbosity > 0 ? spdlog::level::debug : spdlog::level::info);
    spdlog::set_default_logger(logger);
}

}  // namespace

Terminal::Terminal(int verbosity, ColorMode color)
    : verbosity_(verbosity),
      interactive_(::isatty(STDERR_FILENO) == 1),
      colored_(color_allowed(color, interactive_)),
      results_colored_(colored_ && (color == ColorMode::always || ::isatty(STDOUT_FILENO) == 1))
{
    configure_logger(colored_, verbosity_);
}

void Terminal::progress(const std::string& line)
{
    if (!interactive_ || verbosity_ < 0) return;
    std::fprintf(stderr, "\r\033[K%s", util::printable(line).c_str());
    std::fflush(stderr);
    progress_shown_ = true;
}

void Terminal::clear_progress()
{
    if (!progress_shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    progress_shown_ = false;
}

void Terminal::note(const std::string& line, int level)
{
    if (verbosity_ < level) return;
    clear_progress();
    std::fprintf(stderr, "%s\n", util::printable(line).c_str());
    std::fflush(stderr);
}

void Terminal::result(const std::string& text)
{
    clear_progress();
    std::cout << util::printable(colored_ && !results_colored_ ? without_color(text) : text) << std::flush;
}

// Results are painted as the log is (stderr); stdout piped to a file or
// another program gets them plain.
std::string Terminal::without_color(const std::string& text)
{
    std::string plain;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\033' && i + 1 < text.size() && text[i + 1] == '[') {
            std::size_t end = text.find('m', i);
            if (end != std::string::npos) {
                i = end;
                continue;
            }
        }
        plain += text[i];
    }
    return plain;
}

std::string Terminal::paint(const char* code, const std::string& text) const
{
    return colored_ ? std::string("\033[") + code + "m" + text + "\033[0m" : text;
}

std::string Terminal::bold(const std::string& text) const { return paint("1", text); }
std::string Terminal::red(const std::string& text) const { return paint("31", text); }
std::string Terminal::green(const std::string& text) const { return paint("32", text); }
std::string Terminal::yellow(const std::string& text) const { return paint("33", text); }

}  // namespace ck::cli
