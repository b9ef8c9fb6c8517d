// The JSON report of `check-signatures --format json`: a tool's report, kept
// out of the runtime library (which compares signatures, signature_check.cpp).
#include "status/signature_report.hpp"

#include <map>

namespace ck {

namespace fs = std::filesystem;

namespace {

using Kind = SignatureFinding::Kind;

nlohmann::json declaration_json(const Signature& signature, const std::function<std::string(const fs::path&)>& display)
{
    nlohmann::json j = {{"role", signature.role}, {"file", display(signature.file)}, {"line", signature.read.line}};
    if (signature.read.status == SignatureRead::Status::found)
        j["parameters"] = signature.read.parameters;
    else
        j["reason"] = signature.read.reason;
    return j;
}

const char* to_string(Kind kind)
{
    switch (kind) {
        case Kind::mismatch:
            return "mismatch";
        case Kind::unreadable:
            return "unreadable";
        case Kind::unreadable_file:
            return "unreadable-file";
        case Kind::cunumpy_unreadable:
            return "cunumpy-unreadable";
        case Kind::cunumpy_mismatch:
            return "cunumpy-mismatch";
        case Kind::conditional:
            return "conditional";
    }
    return "?";
}

}  // namespace

nlohmann::json to_json(const std::vector<KernelSignatures>& kernels,
                       const std::function<std::string(const fs::path&)>& display)
{
    nlohmann::json findings = nlohmann::json::array();
    nlohmann::json rows = nlohmann::json::array();
    std::map<std::string, std::size_t> counts;
    std::size_t errors = 0, warnings = 0;
    for (const auto& kernel : kernels) {
        ++counts[to_string(kernel.agreement())];
        nlohmann::json declarations = nlohmann::json::array();
        for (const auto& d : kernel.declarations) declarations.push_back(declaration_json(d, display));
        rows.push_back({{"module", kernel.module},
                        {"kernel", kernel.name},
                        {"agreement", to_string(kernel.agreement())},
                        {"declarations", declarations}});
        for (const auto& finding : kernel.findings) {
            nlohmann::json concerned = nlohmann::json::array();
            for (const auto& d : finding.declarations) concerned.push_back(declaration_json(d, display));
            bool warning = finding.severity == SignatureFinding::Severity::warning;
            ++(warning ? warnings : errors);
            findings.push_back({{"kind", to_string(finding.kind)},
                                {"severity", warning ? "warning" : "error"},
                                {"module", kernel.module},
                                {"kernel", kernel.name},
                                {"message", finding.message},
                                {"declarations", concerned}});
        }
    }
    return {{"ok", errors == 0},
            {"summary",
             {{"kernels", kernels.size()},
              {"match", counts["match"]},
              {"mismatch", counts["mismatch"]},
              {"unreadable", counts["unreadable"]},
              {"nothing_to_compare", counts["-"]},
              {"warnings", warnings}}},
            {"kernels", rows},
            {"findings", findings}};
}

}  // namespace ck
