// The JSON report of `check-signatures --format json`.
#pragma once

#include "signatures/signatures.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace ck {

/// The report of `check-signatures --format json`:
/// {"ok" (no errors; warnings allowed), "summary": {"kernels", "match",
/// "mismatch", "unreadable", "nothing_to_compare", "warnings"}, "kernels":
/// [{"module", "kernel", "agreement", "declarations": [{"role", "file",
/// "line", "parameters" | "reason"}]}], "findings": [{"kind": "mismatch" |
/// "unreadable" | "unreadable-file" | "cunumpy-unreadable" |
/// "cunumpy-mismatch" | "conditional", "severity": "error" | "warning", "module", "kernel",
/// "message", "declarations": [...]}]}. Paths are written as `display`
/// returns them.
nlohmann::json to_json(const std::vector<KernelSignatures>& kernels,
                       const std::function<std::string(const std::filesystem::path&)>& display);

}  // namespace ck
