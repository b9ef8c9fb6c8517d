#include "source/cpp_preprocessor.hpp"

#include <algorithm>
#include <cstdlib>

namespace ck::signatures {

namespace {

using Kind = CppToken::Kind;

constexpr int max_expansion_depth = 64;

}  // namespace

void CppPreprocessor::run(const std::vector<CppToken>& tokens)
{
    budget_ = std::max<std::size_t>(tokens.size(), 1024) * expansion_factor;
    run_tokens(tokens);
}

void CppPreprocessor::run_tokens(const std::vector<CppToken>& tokens)
{
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (tokens[i].kind != Kind::directive) {
            if (live()) emit(tokens[i], 0);
            continue;
        }
        std::vector<CppToken> body;
        std::size_t j = i + 1;
        for (; j < tokens.size() && tokens[j].kind != Kind::directive_end; ++j) body.push_back(tokens[j]);
        directive(tokens[i].text, body);
        i = j;
    }
}

void CppPreprocessor::directive(const std::string& name, const std::vector<CppToken>& body)
{
    if (name == "if" || name == "ifdef" || name == "ifndef" || name == "elif" || name == "elifdef" ||
        name == "elifndef" || name == "else" || name == "endif") {
        conditional(name, body);
        return;
    }
    if (!live()) return;
    if (name == "include") {
        include(body);
    } else if (name == "define") {
        define(body);
    } else if (name == "undef" && !body.empty()) {
        object_macros_.erase(body[0].text);
        function_macros_.erase(body[0].text);
    }
}

// Branches whose outcome is unknown are all read; the sink is told where each
// starts so that it can begin each one from the same state.
void CppPreprocessor::conditional(const std::string& name, const std::vector<CppToken>& body)
{
    if (name == "if" || name == "ifdef" || name == "ifndef") {
        bool parent = live();
        Truth truth = parent ? evaluate(name, body) : Truth::no;
        bool reported = parent && truth == Truth::unknown && !in_header();
        groups_.push_back({parent, parent && truth != Truth::no, truth == Truth::yes, reported});
        if (reported) sink_.branch_begin();
        return;
    }
    // A stray #else or #endif, also one of a header past its own groups: nothing to close.
    if (groups_.empty() || (in_header() && groups_.size() <= include_groups_.back())) return;
    Group& group = groups_.back();
    if (name == "endif") {
        if (group.reported) sink_.branch_end();
        groups_.pop_back();
        return;
    }
    Truth truth = Truth::yes;
    if (name != "else") truth = evaluate(name == "elif" ? "if" : name == "elifdef" ? "ifdef" : "ifndef", body);
    if (group.decided || !group.parent_live) truth = Truth::no;
    if (group.reported && truth != Truth::no) sink_.branch_next();
    if (!group.reported && truth == Truth::unknown && group.parent_live && !group.live && !in_header()) {
        // The first live branch of a group that began with a certain no.
        sink_.branch_begin();
        group.reported = true;
    }
    group.live = truth != Truth::no;
    group.decided = group.decided || truth == Truth::yes;
}

// Only what needs no outside knowledge: a literal number, and `defined` of a
// macro this file defines. A macro the file does not define may come from an
// include or the command line, so it stays unknown.
CppPreprocessor::Truth CppPreprocessor::evaluate(const std::string& name, const std::vector<CppToken>& body) const
{
    auto defined_here = [this](const std::string& macro) {
        return object_macros_.count(macro) > 0 || function_macros_.count(macro) > 0;
    };
    if (name == "ifdef" || name == "ifndef") {
        if (body.empty() || !defined_here(body[0].text)) return Truth::unknown;
        return name == "ifdef" ? Truth::yes : Truth::no;
    }
    std::size_t at = 0;
    bool negate = false;
    for (; at < body.size() && body[at].text == "!"; ++at) negate = !negate;
    Truth truth = Truth::unknown;
    std::size_t rest = body.size() - at;
    if (rest == 1 && body[at].kind == Kind::number) {
        truth = std::strtoll(body[at].text.c_str(), nullptr, 0) != 0 ? Truth::yes : Truth::no;
    } else if (rest >= 2 && body[at].text == "defined") {
        const CppToken& macro = body[at + 1].text == "(" && rest == 4 ? body[at + 2] : body[at + 1];
        bool form_ok = rest == 2 || (rest == 4 && body[at + 1].text == "(" && body[at + 3].text == ")");
        if (form_ok && defined_here(macro.text)) truth = Truth::yes;
    }
    if (truth == Truth::unknown || !negate) return truth;
    return truth == Truth::yes ? Truth::no : Truth::yes;
}

void CppPreprocessor::define(const std::vector<CppToken>& body)
{
    if (body.empty() || body[0].kind != Kind::identifier) return;
    const std::string& name = body[0].text;
    object_macros_.erase(name);
    function_macros_.erase(name);
    if (body.size() > 1 && body[1].text == "(" && body[1].glued) {
        FunctionMacro macro{body[0].line, {}, in_header() ? include_stack_.back().filename().string() : ""};
        for (std::size_t i = 2; i < body.size(); ++i)
            if (body[i].kind == Kind::identifier) macro.identifiers.push_back(body[i].text);
        function_macros_[name] = std::move(macro);
        return;
    }
    object_macros_[name] = ObjectMacro{{body.begin() + 1, body.end()}};
}

// A project header's directives, read as if they stood here: its macros
// count from this line on. Its groups are its own (an unbalanced `#if` in it
// ends with it), and it never reaches the sink: the declarations read are
// the file's.
void CppPreprocessor::include(const std::vector<CppToken>& written)
{
    // `#include H` with `#define H "mh.cuh"`: the name the macro stands for
    // (the include scanner follows the same definitions).
    const std::vector<CppToken>* body = &written;
    for (int hops = 0; hops < 16 && body->size() == 1 && (*body)[0].kind == Kind::identifier; ++hops) {
        auto macro = object_macros_.find((*body)[0].text);
        if (macro == object_macros_.end()) break;
        body = &macro->second.body;
    }
    std::string name = body->size() == 1 ? (*body)[0].text : "";
    bool header_name = body->size() == 1 && ((*body)[0].kind == Kind::header_name ||
                                             ((*body)[0].kind == Kind::literal && name.size() > 2 && name[0] == '"'));
    if (!includes_ || !header_name || include_stack_.size() >= max_include_depth) return;
    std::size_t depth = include_stack_.size(), groups = groups_.size();
    try {
        auto header = includes_->open(name, in_header() ? include_stack_.back() : std::filesystem::path());
        if (header && std::find(include_stack_.begin(), include_stack_.end(), header->path) == include_stack_.end()) {
            auto tokens =
                header->directives
                    ? header->directives
                    : std::make_shared<const std::vector<CppToken>>(lex_cpp(header->text, LexScope::directives));
            include_stack_.push_back(header->path);
            include_groups_.push_back(groups);
            run_tokens(*tokens);
        }
    } catch (...) {
        // A header that cannot be read as far as memory goes is not followed
        // further; the reading of the file goes on.
    }
    include_stack_.resize(depth);
    include_groups_.resize(depth);
    groups_.resize(groups);
}

bool CppPreprocessor::hidden(const std::string& name) const
{
    return std::find(expanding_.begin(), expanding_.end(), name) != expanding_.end();
}

// Expands object-like macros; every token of an expansion carries the line of
// the macro's use, which is where a reader should point.
void CppPreprocessor::emit(const CppToken& token, int depth)
{
    if (token.kind == Kind::identifier && !limit_hit_ && depth < max_expansion_depth && !hidden(token.text)) {
        auto macro = object_macros_.find(token.text);
        if (macro != object_macros_.end()) {
            if (macro->second.body.size() > budget_) {
                limit_hit_ = true;
                return;
            }
            budget_ -= macro->second.body.size();
            expanding_.push_back(token.text);
            // Directives are only read by run(), never during an expansion:
            // the body stays put while it is walked.
            for (CppToken expanded : macro->second.body) {
                expanded.line = token.line;
                emit(expanded, depth + 1);
            }
            expanding_.pop_back();
            return;
        }
    }
    sink_.token(token);
}

}  // namespace ck::signatures
