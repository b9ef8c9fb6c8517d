// Explaining a miss: which key input differs from the kernel's latest entry.
#include "cunumpy_kernels/cache.hpp"

namespace ck {

using nlohmann::json;

namespace {

std::string short_value(const json& value)
{
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
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

}  // namespace

std::string describe_input_change(const json& before, const json& after)
{
    if (before == after) return "";
    if (before.value("source", json()) != after.value("source", json()))
        return "source " + after.value("source", json::object()).value("file", std::string("?")) + " changed";
    if (before.value("headers", json::object()) != after.value("headers", json::object()))
        return describe_headers(before.value("headers", json::object()), after.value("headers", json::object()));
    for (const auto& [name, value] : after.items()) {
        json old = before.value(name, json());
        if (old != value) return name + ": " + short_value(old) + " -> " + short_value(value);
    }
    for (const auto& [name, value] : before.items())
        if (!after.contains(name)) return name + " is no longer an input";
    return "inputs changed";
}

}  // namespace ck
