// The input format of the signature-reader fuzz targets, their seed corpus
// and their regression inputs: the first line names the function to read, the
// rest is the source. Shared by the fuzz targets (clang, libFuzzer) and the
// unit test that replays every corpus and regression file (g++).
#pragma once

#include "signatures/cunumpy_readability.hpp"
#include "signatures/signatures.hpp"

#include <string>
#include <string_view>

namespace ck::fuzz {

struct ReaderInput {
    std::string name;
    std::string_view source;
};

inline bool is_identifier(std::string_view text)
{
    if (text.empty() || (text[0] >= '0' && text[0] <= '9')) return false;
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        bool ok = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' || u == '$' ||
                  u >= 0x80;
        if (!ok) return false;
    }
    return true;
}

/// Splits `data` into the function name (its first line; "push" when that is
/// not an identifier) and the source (the rest).
inline ReaderInput split_input(std::string_view data)
{
    auto newline = data.find('\n');
    std::string_view first = data.substr(0, newline == std::string_view::npos ? data.size() : newline);
    std::string_view rest = newline == std::string_view::npos ? std::string_view() : data.substr(newline + 1);
    return {is_identifier(first) && first.size() <= 64 ? std::string(first) : std::string("push"), rest};
}

/// The lines of `source` as Python and C++ count them: a line ends at \n,
/// \r\n or a lone \r (Python reads CR-only text so, and a reader may too).
inline int line_count(std::string_view source)
{
    int lines = 1;
    for (std::size_t i = 0; i < source.size(); ++i)
        lines += source[i] == '\n' || (source[i] == '\r' && (i + 1 == source.size() || source[i + 1] != '\n')) ? 1 : 0;
    return lines;
}

/// What every result must satisfy, whatever the input: a found declaration
/// lists identifiers only and no reason; anything else has a reason and no
/// names; the line lies within the source. Returns "" or what is violated.
inline std::string violation(const SignatureRead& read, std::string_view source)
{
    int lines = line_count(source);
    if (read.line < 0 || read.line > lines) return "line " + std::to_string(read.line) + " outside the source";
    if (read.status == SignatureRead::Status::found) {
        if (!read.reason.empty()) return "a found declaration with a reason";
        for (const auto& name : read.parameters)
            if (!is_identifier(name)) return "parameter name '" + name + "' is no identifier";
        return "";
    }
    if (read.reason.empty()) return "no reason for a declaration that was not read";
    if (!read.parameters.empty()) return "parameters for a declaration that was not read";
    return "";
}

/// The model of cunumpy's reader on the same input: the line lies within
/// the source, a failure has a reason and no names, a reading no reason.
inline std::string cunumpy_violation(const signatures::CunumpyReading& reading, std::string_view source)
{
    int lines = line_count(source);
    if (reading.line < 0 || reading.line > lines)
        return "cunumpy model: line " + std::to_string(reading.line) + " outside the source";
    if (reading.raises && (reading.why.empty() || !reading.names.empty()))
        return "cunumpy model: a failure without reason, or with names";
    if (!reading.raises && !reading.why.empty()) return "cunumpy model: a reading with a reason";
    return "";
}

inline std::string check_cuda(std::string_view data)
{
    ReaderInput input = split_input(data);
    SignatureRead read = read_cuda_signature(input.source, input.name);
    std::string first = violation(read, input.source);
    if (!first.empty()) return first;
    return cunumpy_violation(signatures::read_as_cunumpy(input.source, input.name, nullptr, read.line), input.source);
}

inline std::string check_python(std::string_view data)
{
    ReaderInput input = split_input(data);
    std::string first =
        violation(read_python_signature(input.source, input.name, PythonDefinition::first), input.source);
    return first.empty()
               ? violation(read_python_signature(input.source, input.name, PythonDefinition::last), input.source)
               : first;
}

}  // namespace ck::fuzz
