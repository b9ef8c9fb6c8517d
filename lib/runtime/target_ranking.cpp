#include "runtime/target_ranking.hpp"

#include <algorithm>
#include <cstdlib>

namespace ck {

ParsedTarget parse_target(const std::string& target)
{
    ParsedTarget t;
    t.cubin = target.rfind("sm_", 0) == 0;
    auto underscore = target.find('_');
    t.number = underscore == std::string::npos ? 0 : std::atoi(target.c_str() + underscore + 1);
    return t;
}

std::vector<RankedTarget> rank_targets(const std::vector<std::string>& targets, int cc_major, int cc_minor)
{
    static const char* const how[] = {"cubin", "compatible cubin", "ptx"};
    int device = cc_major * 10 + cc_minor;
    struct Ranked {
        int rank;  // 0 exact cubin, 1 compatible cubin, 2 PTX
        int number;
        std::size_t index;
    };
    std::vector<Ranked> fitting;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        ParsedTarget t = parse_target(targets[i]);
        if (t.cubin && t.number == device) fitting.push_back({0, t.number, i});
        else if (t.cubin && t.number / 10 == cc_major && t.number % 10 < cc_minor) fitting.push_back({1, t.number, i});
        else if (!t.cubin && t.number > 0 && t.number <= device) fitting.push_back({2, t.number, i});
    }
    std::stable_sort(fitting.begin(), fitting.end(),
                     [](const Ranked& a, const Ranked& b) { return a.rank != b.rank ? a.rank < b.rank : a.number > b.number; });
    std::vector<RankedTarget> ranked;
    for (const auto& f : fitting) ranked.push_back({f.index, how[f.rank]});
    return ranked;
}

}  // namespace ck
