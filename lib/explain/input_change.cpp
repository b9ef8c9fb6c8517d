// Explaining a miss: which key input differs from the kernel's latest entry.
#include "explain/input_change.hpp"
#include "util/json_text.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace ck {

using nlohmann::json;

namespace {

std::string short_value(const json& value)
{
    std::string text = value.is_string() ? value.get<std::string>() : util::json_text(value);
    return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

std::string describe_headers(const json& before, const json& after)
{
    for (const auto& [name, digest] : after.items()) {
        if (!before.contains(name)) return "header " + name + " is newly included";
        if (before[name] != digest) return "header " + name + " changed";
    }
    for (const auto& [name, digest] : before.items())
        if (!after.contains(name)) return "header " + name + " is no longer included";
    return "";
}

// A header now found where a lookup found nothing before: it appeared in a
// folder searched before the one that served it (or anywhere, for a name
// found nowhere before).
std::string describe_appeared(const json& before_absent, const json& after_headers)
{
    for (const auto& name : before_absent)
        if (after_headers.contains(name.get<std::string>()))
            return "header " + name.get<std::string>() + " appeared (an earlier lookup found nothing there)";
    return "";
}

// A header included before and found nowhere now: a folder that served it is
// gone from the search, typically cunumpy's, when the interpreter asked has
// no cunumpy.
std::string describe_vanished(const json& before_headers, const json& after)
{
    for (const auto& name : after.value("unresolved_includes", json::array())) {
        std::string wanted = name.get<std::string>();
        for (const auto& [header, digest] : before_headers.items()) {
            if (header != wanted && !header.ends_with("/" + wanted)) continue;
            std::string text = "header " + wanted + " is not found now (before: " + header + ")";
            if (header.rfind("<cunumpy>/", 0) == 0)
                text +=
                    "; cunumpy's CUDA headers: pass --python with the interpreter that has cunumpy, or "
                    "--cunumpy-include-dir";
            return text;
        }
    }
    return "";
}

std::string describe_options(const json& before, const json& after)
{
    for (const auto& option : after)
        if (std::find(before.begin(), before.end(), option) == before.end())
            return "compiler option " + option.get<std::string>() + " added";
    for (const auto& option : before)
        if (std::find(after.begin(), after.end(), option) == after.end())
            return "compiler option " + option.get<std::string>() + " removed";
    return "compiler options reordered: " + short_value(before) + " -> " + short_value(after);
}

std::string describe_environment(const json& before, const json& after)
{
    auto shown = [](const json& env, const std::string& name) {
        return env.contains(name) ? "\"" + short_value(env[name]) + "\"" : std::string("unset");
    };
    json names = json::object();
    for (const auto& [name, value] : before.items()) names[name] = true;
    for (const auto& [name, value] : after.items()) names[name] = true;
    for (const auto& [name, flag] : names.items())
        if (before.value(name, json()) != after.value(name, json()))
            return "environment variable " + name + ": " + shown(before, name) + " -> " + shown(after, name);
    return "";
}

// A compiler part is "<version line> (sha256 <digest>[, a script ...])":
// the versions when they differ, else the file's content that changed.
std::string describe_program_change(const std::string& was, const std::string& now)
{
    auto version = [](const std::string& part) { return part.substr(0, part.rfind(" (sha256 ")); };
    if (version(was) != version(now) || version(was) == was) return version(was) + " -> " + version(now);
    auto digest = [](const std::string& part) { return part.substr(part.rfind(" (sha256 ") + 2); };
    std::string inner_was = digest(was), inner_now = digest(now);
    return version(now) + ", its file's content changed (" + inner_was.substr(0, inner_was.size() - 1) + " -> " +
           inner_now.substr(0, inner_now.size() - 1) + ")";
}

// The compiler's identity is "<CUDA compiler>; host <gcc --version line>"
// for nvcc: name the part that changed, whole, rather than a cut prefix that
// both values share.
std::string describe_compiler(const json& before, const json& after)
{
    auto parts = [](const json& value) {
        std::vector<std::string> out;
        std::string text = value.is_string() ? value.get<std::string>() : util::json_text(value);
        for (std::size_t start = 0;;) {
            std::size_t end = text.find("; ", start);
            out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
            if (end == std::string::npos) return out;
            start = end + 2;
        }
    };
    auto old_parts = parts(before), new_parts = parts(after);
    for (std::size_t i = 0; i < std::max(old_parts.size(), new_parts.size()); ++i) {
        std::string was = i < old_parts.size() ? old_parts[i] : "none",
                    now = i < new_parts.size() ? new_parts[i] : "none";
        if (was == now) continue;
        bool host = was.rfind("host ", 0) == 0 || now.rfind("host ", 0) == 0;
        auto strip = [](const std::string& part) { return part.rfind("host ", 0) == 0 ? part.substr(5) : part; };
        return (host ? "host compiler: " : "compiler: ") + describe_program_change(strip(was), strip(now));
    }
    return "compiler: " + short_value(before) + " -> " + short_value(after);
}

}  // namespace

std::string describe_input_change(const json& before, const json& after)
{
    if (before == after) return "";
    if (before.value("format", json()) != after.value("format", json()))
        return "key format " + short_value(before.value("format", json())) + " -> " +
               short_value(after.value("format", json())) + " (another version of cunumpy-kernels)";
    if (before.value("source", json()) != after.value("source", json()))
        return "source " + after.value("source", json::object()).value("file", std::string("?")) + " changed";
    std::string appeared =
        describe_appeared(before.value("absent", json::array()), after.value("headers", json::object()));
    if (!appeared.empty()) return appeared;
    std::string vanished = describe_vanished(before.value("headers", json::object()), after);
    if (!vanished.empty()) return vanished;
    if (before.value("headers", json::object()) != after.value("headers", json::object()))
        return describe_headers(before.value("headers", json::object()), after.value("headers", json::object()));
    // Before options: flags from NVCC_APPEND_FLAGS are options too, and the variable says more.
    if (before.value("environment", json::object()) != after.value("environment", json::object()))
        return describe_environment(before.value("environment", json::object()),
                                    after.value("environment", json::object()));
    if (before.value("options", json::array()) != after.value("options", json::array()))
        return describe_options(before.value("options", json::array()), after.value("options", json::array()));
    // The compiler first: moving from NVRTC to nvcc also brings nvcc.profile in.
    if (before.value("compiler", json()) != after.value("compiler", json()))
        return describe_compiler(before.value("compiler", json()), after.value("compiler", json()));
    if (before.value("nvcc_profile", json()) != after.value("nvcc_profile", json())) return "nvcc.profile changed";
    for (const auto& [name, value] : after.items()) {
        json old = before.value(name, json());
        if (old != value) return name + ": " + short_value(old) + " -> " + short_value(value);
    }
    for (const auto& [name, value] : before.items())
        if (!after.contains(name)) return name + " is no longer an input";
    return "inputs changed";
}

}  // namespace ck
