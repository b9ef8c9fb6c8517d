#include "package/porting_summary.hpp"

namespace ck {

std::string porting_summary(std::size_t total, const std::vector<std::string>& missing, std::size_t max_missing)
{
    std::string text = "CUDA kernels: " + std::to_string(total - missing.size()) + " of " + std::to_string(total);
    if (missing.empty()) return text;
    std::string names;
    for (std::size_t i = 0; i < missing.size() && i < max_missing; ++i) names += (i ? ", " : "") + missing[i];
    if (missing.size() > max_missing) names += names.empty() ? "..." : ", ...";
    return text + " (missing: " + names + ")";
}

}  // namespace ck
