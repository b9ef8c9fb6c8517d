// The model of cunumpy 0.7.1's parse_cuda_signature: each function below
// names the Python it stands for. No std::regex: the patterns are matched by
// hand, so that a large file costs no backtracking stack.
#include "signatures/cunumpy_readability.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace ck::signatures {

namespace {

constexpr std::size_t npos = std::string::npos;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool starts(std::string_view text, std::size_t at, std::string_view what)
{
    return at <= text.size() && text.substr(at, what.size()) == what;
}

std::string stripped(std::string_view text)
{
    std::size_t begin = 0, end = text.size();
    while (begin < end && is_space(text[begin])) ++begin;
    while (end > begin && is_space(text[end - 1])) --end;
    return std::string(text.substr(begin, end - begin));
}

std::vector<std::string> split_words(std::string_view text)
{
    std::vector<std::string> words;
    std::string word;
    for (char c : text) {
        if (!is_space(c)) {
            word += c;
        } else if (!word.empty()) {
            words.push_back(word);
            word.clear();
        }
    }
    if (!word.empty()) words.push_back(word);
    return words;
}

std::string join(const std::vector<std::string>& words, const char* separator)
{
    std::string text;
    for (const auto& w : words) text += (text.empty() ? "" : separator) + w;
    return text;
}

// The code cunumpy reads, each character with its offset in the source.
struct Code {
    std::string text;
    std::vector<std::size_t> origin;

    void add(char c, std::size_t at)
    {
        text += c;
        origin.push_back(at);
    }
};

// _strip_comments: re.sub(r"/\*.*?\*/", " ", DOTALL), then re.sub(r"//[^\n]*", " ").
Code strip_comments(std::string_view source)
{
    Code block;
    for (std::size_t i = 0; i < source.size();) {
        if (starts(source, i, "/*")) {
            std::size_t close = source.find("*/", i + 2);
            if (close != npos) {
                block.add(' ', i);
                i = close + 2;
                continue;
            }
        }
        block.add(source[i], i);
        ++i;
    }
    Code code;
    for (std::size_t i = 0; i < block.text.size();) {
        if (starts(block.text, i, "//")) {
            code.add(' ', block.origin[i]);
            while (i < block.text.size() && block.text[i] != '\n') ++i;
            continue;
        }
        code.add(block.text[i], block.origin[i]);
        ++i;
    }
    return code;
}

// `__global__\s+void\s+<name>\s*\(` at `at`: the offset after `(`, else npos.
std::size_t global_tail(const std::string& code, std::size_t at, std::string_view name)
{
    if (!starts(code, at, "__global__")) return npos;
    std::size_t i = at + 10, before = i;
    while (i < code.size() && is_space(code[i])) ++i;
    if (i == before || !starts(code, i, "void")) return npos;
    i += 4;
    before = i;
    while (i < code.size() && is_space(code[i])) ++i;
    if (i == before || !starts(code, i, name)) return npos;
    i += name.size();
    while (i < code.size() && is_space(code[i])) ++i;
    return i < code.size() && code[i] == '(' ? i + 1 : npos;
}

struct Match {
    std::size_t open_end = npos;  ///< after the `(`
    bool has_template = false;
    std::string template_text;
};

// re.search(r"(?:template\s*<(?P<template>[^{};]*?)>\s*)?__global__\s+void\s+" + name + r"\s*\(", code):
// the leftmost start; from a `template`, the first `>` (lazily) followed by the tail.
Match search(const std::string& code, std::string_view name)
{
    std::set<std::size_t> tails;
    for (std::size_t at = code.find("__global__"); at != npos; at = code.find("__global__", at + 1))
        if (global_tail(code, at, name) != npos) tails.insert(at);
    auto tail_match = [&](std::size_t g, bool has_template, std::string text) {
        return Match{global_tail(code, g, name), has_template, std::move(text)};
    };
    std::size_t budget = 8 * code.size() + 100000;
    std::size_t first_tail = tails.empty() ? npos : *tails.begin();
    for (std::size_t t = code.find("template"); t != npos && t < first_tail && budget > 0;
         t = code.find("template", t + 1)) {
        std::size_t j = t + 8;
        while (j < code.size() && is_space(code[j])) ++j;
        if (j >= code.size() || code[j] != '<') continue;
        for (std::size_t k = j + 1; k < code.size() && budget > 0; ++k, --budget) {
            char c = code[k];
            if (c == '{' || c == '}' || c == ';') break;
            if (c != '>') continue;
            std::size_t m = k + 1;
            while (m < code.size() && is_space(code[m])) ++m;
            if (tails.count(m)) return tail_match(m, true, code.substr(j + 1, k - j - 1));
        }
    }
    if (first_tail == npos) return {};
    return tail_match(first_tail, false, "");
}

// _split_top_level: commas outside `<...>` (parentheses do not count).
std::vector<std::string> split_top_level(std::string_view text)
{
    std::vector<std::string> parts(1);
    int depth = 0;
    for (char c : text) {
        if (c == '<')
            ++depth;
        else if (c == '>')
            --depth;
        else if (c == ',' && depth == 0) {
            parts.emplace_back();
            continue;
        }
        parts.back() += c;
    }
    return parts;
}

// re.sub(r"\b" + re.escape(word) + r"\b", value, text)
std::string replace_word(const std::string& text, const std::string& word, const std::string& value)
{
    if (word.empty()) return text;
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        bool boundary_before =
            is_word(word.front()) ? (i == 0 || !is_word(text[i - 1])) : (i > 0 && is_word(text[i - 1]));
        std::size_t end = i + word.size();
        bool boundary_after = end <= text.size() && (is_word(word.back()) ? (end == text.size() || !is_word(text[end]))
                                                                          : (end < text.size() && is_word(text[end])));
        if (boundary_before && boundary_after && starts(text, i, word)) {
            out += value;
            i = end;
            continue;
        }
        out += text[i++];
    }
    return out;
}

const std::set<std::string>& ctypes()
{
    static const std::set<std::string> names = {
        "bool",
        "char",
        "signed char",
        "unsigned char",
        "short",
        "short int",
        "unsigned short",
        "unsigned short int",
        "int",
        "signed",
        "signed int",
        "unsigned",
        "unsigned int",
        "long",
        "long int",
        "long long",
        "long long int",
        "unsigned long",
        "unsigned long int",
        "unsigned long long",
        "unsigned long long int",
        "int8_t",
        "int16_t",
        "int32_t",
        "int64_t",
        "uint8_t",
        "uint16_t",
        "uint32_t",
        "uint64_t",
        "size_t",
        "ptrdiff_t",
        "ssize_t",
        "float",
        "double",
        "complex<float>",
        "complex<double>",
    };
    return names;
}

bool is_qualifier(const std::string& word)
{
    return word == "const" || word == "volatile" || word == "__restrict__" || word == "__restrict" ||
           word == "restrict";
}

// _COMPLEX at `at`: (?:(?:thrust|cuda::std)::)?complex\s*<\s*(float|double)\s*>; the end, else npos.
std::size_t complex_at(const std::string& text, std::size_t at, std::string& element)
{
    for (std::string_view prefix : {"thrust::", "cuda::std::", ""}) {
        std::size_t i = at;
        if (!starts(text, i, prefix)) continue;
        i += prefix.size();
        if (!starts(text, i, "complex")) continue;
        i += 7;
        while (i < text.size() && is_space(text[i])) ++i;
        if (i >= text.size() || text[i] != '<') continue;
        ++i;
        while (i < text.size() && is_space(text[i])) ++i;
        std::string found = starts(text, i, "float") ? "float" : starts(text, i, "double") ? "double" : "";
        if (found.empty()) continue;
        i += found.size();
        while (i < text.size() && is_space(text[i])) ++i;
        if (i >= text.size() || text[i] != '>') continue;
        element = found;
        return i + 1;
    }
    return npos;
}

std::string substitute_complex(const std::string& text)
{
    std::string out, element;
    for (std::size_t i = 0; i < text.size();) {
        std::size_t end = complex_at(text, i, element);
        if (end != npos) {
            out += "complex<" + element + ">";
            i = end;
        } else {
            out += text[i++];
        }
    }
    return out;
}

struct View {
    std::size_t end = npos;
    std::string contiguous, rank, element;
};

// _VIEW at `at`: \b(C?)Array([1-9]|1[0-6])D\s*<((?:[^<>]|complex<[^<>]*>)+?)>
View view_at(const std::string& text, std::size_t at, bool need_boundary)
{
    View v;
    if (need_boundary && at > 0 && is_word(text[at - 1])) return v;
    std::size_t i = at;
    if (starts(text, i, "C")) {
        v.contiguous = "C";
        ++i;
    }
    if (!starts(text, i, "Array")) return {};
    i += 5;
    std::string rank;
    if (i + 1 < text.size() && text[i] == '1' && text[i + 1] >= '0' && text[i + 1] <= '6' && starts(text, i + 2, "D"))
        rank = text.substr(i, 2);
    else if (i < text.size() && text[i] >= '1' && text[i] <= '9')
        rank = text.substr(i, 1);
    if (rank.empty() || !starts(text, i + rank.size(), "D")) return {};
    v.rank = rank;
    i += rank.size() + 1;
    while (i < text.size() && is_space(text[i])) ++i;
    if (i >= text.size() || text[i] != '<') return {};
    ++i;
    std::string element;
    while (i < text.size()) {
        if (text[i] == '>' && !element.empty()) {
            v.element = element;
            v.end = i + 1;
            return v;
        }
        if (starts(text, i, "complex<")) {
            std::size_t close = text.find_first_of("<>", i + 8);
            if (close != npos && text[close] == '>') {
                element += text.substr(i, close + 1 - i);
                i = close + 1;
                continue;
            }
        }
        if (text[i] == '<' || text[i] == '>') return {};
        element += text[i++];
    }
    return {};
}

// _VIEW.sub(_normalize_view, text)
std::string normalize_views(const std::string& text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        View v = (text[i] == 'C' || text[i] == 'A') ? view_at(text, i, true) : View{};
        if (v.end == npos) {
            out += text[i++];
            continue;
        }
        std::vector<std::string> words;
        for (auto& w : split_words(v.element))
            if (!is_qualifier(w)) words.push_back(w);
        out += v.contiguous + "Array" + v.rank + "D<" + join(words, " ") + ">";
        i = v.end;
    }
    return out;
}

// _TOKEN.findall: views, complex<float|double>, identifiers, `*`, `[ ]`.
std::vector<std::string> tokens_of(const std::string& text)
{
    std::vector<std::string> tokens;
    for (std::size_t i = 0; i < text.size();) {
        // C?Array(?:[1-9]|1[0-6])D<[^<>]*(?:<[^<>]*>[^<>]*)?>
        std::size_t a = i + (starts(text, i, "CArray") ? 1 : 0);
        if (starts(text, a, "Array")) {
            std::size_t r = a + 5, d = npos;
            if (r + 1 < text.size() && text[r] == '1' && text[r + 1] >= '0' && text[r + 1] <= '6' &&
                starts(text, r + 2, "D<"))
                d = r + 2;
            else if (r < text.size() && text[r] >= '1' && text[r] <= '9' && starts(text, r + 1, "D<"))
                d = r + 1;
            if (d != npos) {
                std::size_t k = text.find_first_of("<>", d + 2);
                std::size_t end = npos;
                if (k != npos && text[k] == '>')
                    end = k + 1;
                else if (k != npos) {
                    std::size_t inner = text.find_first_of("<>", k + 1);
                    if (inner != npos && text[inner] == '>') {
                        std::size_t last = text.find_first_of("<>", inner + 1);
                        if (last != npos && text[last] == '>') end = last + 1;
                    }
                }
                if (end != npos) {
                    tokens.push_back(text.substr(i, end - i));
                    i = end;
                    continue;
                }
            }
        }
        if (starts(text, i, "complex<float>") || starts(text, i, "complex<double>")) {
            std::size_t end = text.find('>', i) + 1;
            tokens.push_back(text.substr(i, end - i));
            i = end;
            continue;
        }
        if (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_') {
            std::size_t end = i;
            while (end < text.size() && is_word(text[end])) ++end;
            tokens.push_back(text.substr(i, end - i));
            i = end;
            continue;
        }
        if (text[i] == '*') {
            tokens.push_back("*");
            ++i;
            continue;
        }
        if (text[i] == '[') {
            std::size_t end = i + 1;
            while (end < text.size() && is_space(text[end])) ++end;
            if (end < text.size() && text[end] == ']') {
                tokens.push_back(text.substr(i, end + 1 - i));
                i = end + 1;
                continue;
            }
        }
        ++i;
    }
    return tokens;
}

bool is_identifier(const std::string& word)
{
    return !word.empty() && (std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_') &&
           std::all_of(word.begin(), word.end(), is_word);
}

bool has_top_level_default(const std::string& text)
{
    int depth = 0;
    for (char c : text) {
        if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
        if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
        if (c == '=' && depth == 0) return true;
    }
    return false;
}

// Why a parameter's type stops it, in words the user can act on.
std::string type_hint(const std::string& text, const std::string& ctype)
{
    if (has_top_level_default(text)) return " (a default argument, which it reads as part of the type: remove it)";
    if (ctype.find("__grid_constant__") != npos) return " (it does not know __grid_constant__: drop it)";
    return "";
}

// _parse_parameter: the name, or an empty name and `why`.
std::string parse_parameter(const std::string& raw, std::string& why)
{
    std::string text = normalize_views(substitute_complex(raw));
    std::vector<std::string> tokens = tokens_of(text);
    int pointers = 0;
    std::vector<std::string> words;
    for (const auto& t : tokens) {
        if (t == "*" || t.front() == '[')
            ++pointers;
        else if (!is_qualifier(t))
            words.push_back(t);
    }
    if (!words.empty() && words.front() == "struct") words.erase(words.begin());
    std::string shown = "'" + stripped(text) + "'";
    if (words.size() < 2) {
        why = "cannot parse the parameter " + shown + " (a parameter without a name";
        why += has_top_level_default(raw) ? ", or a default argument)" : ")";
        return "";
    }
    std::string name = words.back();
    words.pop_back();
    std::string ctype = join(words, " ");
    View view = view_at(ctype, 0, false);
    if (view.end == ctype.size()) {
        if (pointers || !ctypes().count(view.element))
            why = "cannot check the parameter " + shown +
                  ": array views take a scalar element type and are passed by value";
        return why.empty() ? name : "";
    }
    if (ctype == "void" && pointers == 1) return name;
    if (!ctypes().count(ctype)) {
        // One unknown word by value: a struct the program passes in structs=.
        if (pointers == 0 && is_identifier(ctype) && ctype != "void") return name;
        why = "cannot check the parameter " + shown + ": unsupported type '" + ctype + std::string(pointers, '*') +
              "'" + type_hint(raw, ctype);
        return "";
    }
    if (pointers > 1) {
        why = "cannot check the parameter " + shown + ": unsupported type '" + ctype + std::string(pointers, '*') + "'";
        return "";
    }
    return name;
}

int line_of(std::string_view source, std::size_t offset)
{
    offset = std::min(offset, source.size());
    return 1 + static_cast<int>(std::count(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

std::string source_line(std::string_view source, int line)
{
    std::size_t at = 0;
    for (int l = 1; l < line && at != npos; ++l) {
        at = source.find('\n', at);
        if (at != npos) ++at;
    }
    if (at == npos || at > source.size()) return "";
    std::size_t end = source.find('\n', at);
    return std::string(source.substr(at, end == npos ? npos : end - at));
}

// Why no `__global__ void <name>(` is found, from the line where this
// project's reader found the declaration.
std::string no_match_why(std::string_view source, const Code& code, std::string_view name, int hint_line)
{
    std::string pattern = "__global__ void " + std::string(name) + "(";
    std::string base = "it finds no `" + pattern + "`";
    if (hint_line <= 0) return base;
    // What is left of the line once cunumpy removed "comments".
    std::string kept;
    int line = 1;
    for (std::size_t i = 0, at = 0; i < code.text.size(); ++i) {
        for (; at < code.origin[i]; ++at) line += source[at] == '\n' ? 1 : 0;
        if (line == hint_line && code.text[i] != '\n') kept += code.text[i];
        if (line > hint_line) break;
    }
    std::string text = source_line(source, hint_line);
    if (text.find(name) != npos && kept.find(name) == npos)
        return base +
               ": it removes comments without seeing strings, so a `/*` or `//` inside a string or character "
               "literal hides this declaration (up to the next `*/`); split the literal (\"/\" \"*\") or move it";
    if (std::size_t at = text.find("__launch_bounds__"); at != npos) {
        // The fix-it keeps the user's own bounds: `(256, 2)` stays `(256, 2)`.
        std::size_t close = text.find(')', at);
        std::string bounds = close == npos ? "__launch_bounds__(...)" : text.substr(at, close + 1 - at);
        return base +
               ": `__launch_bounds__(...)` stands between `__global__`, `void` and the name; write it first "
               "(`" +
               bounds + " __global__ void " + std::string(name) + "(...)`)";
    }
    if (text.find("__global__") == npos)
        return base + ": `__global__` comes from a macro, which it does not expand; write `" + pattern + "` out";
    return base + ": it needs exactly `__global__ void <name>(`, nothing between the words";
}

}  // namespace

CunumpyReading read_as_cunumpy(std::string_view source, std::string_view name,
                               const std::vector<std::string>* template_args, int hint_line)
{
    CunumpyReading reading;
    auto fail = [&](std::string why) {
        reading.raises = true;
        reading.why = std::move(why);
        reading.names.clear();
        return reading;
    };
    Code code = strip_comments(source);
    Match match = search(code.text, name);
    if (match.open_end == npos) return fail(no_match_why(source, code, name, hint_line));
    std::size_t name_at = match.open_end - 1;
    while (name_at > 0 && code.text[name_at] != name.back()) --name_at;
    reading.line = line_of(source, code.origin[name_at]);
    int depth = 1;
    std::size_t close = npos;
    for (std::size_t i = match.open_end; i < code.text.size(); ++i) {
        if (code.text[i] == '(') ++depth;
        if (code.text[i] == ')' && --depth == 0) {
            close = i;
            break;
        }
    }
    std::string quoted = "'" + std::string(name) + "'";
    if (close == npos) return fail("unbalanced parentheses in the signature of " + quoted);
    std::string params = stripped(std::string_view(code.text).substr(match.open_end, close - match.open_end));
    if (match.has_template) {
        std::vector<std::vector<std::string>> template_params;
        for (const auto& p : split_top_level(match.template_text))
            if (!stripped(p).empty()) template_params.push_back(split_words(p));
        if (!template_args || template_args->size() != template_params.size())
            return fail(quoted + " is a template with " + std::to_string(template_params.size()) + " parameter" +
                        (template_params.size() == 1 ? "" : "s") +
                        ", which it reads only with template_args: pass them to cunumpy (and set the same in "
                        "[tool.cunumpy-kernels] template-args)");
        for (std::size_t i = 0; i < template_params.size(); ++i) {
            const auto& words = template_params[i];
            if (words.front() == "typename" || words.front() == "class")
                params = replace_word(params, words.back(), (*template_args)[i]);
        }
    } else if (template_args && !template_args->empty()) {
        return fail(quoted + " is not a template, but template_args were given");
    }
    if (params.empty() || params == "void") return reading;
    for (const auto& parameter : split_top_level(params)) {
        std::string why;
        std::string parameter_name = parse_parameter(parameter, why);
        if (parameter_name.empty()) {
            if (hint_line > 0 && reading.line != hint_line)
                why += "; it reads the first declaration it finds, at line " + std::to_string(reading.line) +
                       ", not the definition: name the prototype's parameters or remove it";
            return fail(why);
        }
        reading.names.push_back(parameter_name);
    }
    return reading;
}

}  // namespace ck::signatures
