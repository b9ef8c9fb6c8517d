#include "runtime/target_ranking.hpp"

#include <algorithm>
#include <cctype>

namespace ck {

ParsedTarget parse_target(const std::string& target)
{
    ParsedTarget t;
    t.cubin = target.rfind("sm_", 0) == 0;
    auto underscore = target.find('_');
    if (underscore == std::string::npos) return t;
    std::size_t end = underscore + 1;
    while (end < target.size() && std::isdigit(static_cast<unsigned char>(target[end])))
        t.number = t.number * 10 + (target[end++] - '0');
    if (end + 1 == target.size() && (target[end] == 'a' || target[end] == 'f'))
        t.feature = target[end];
    else if (end != target.size())
        t.number = 0;  // not a target name: serves nothing
    return t;
}

bool target_runs_on(const ParsedTarget& target, int cc_major, int cc_minor)
{
    if (target.number <= 0) return false;
    int device = cc_major * 10 + cc_minor;
    bool same_family = target.number / 10 == cc_major && target.number % 10 <= cc_minor;
    if (target.feature == 'a') return target.number == device;
    if (target.feature == 'f' || target.cubin) return same_family;
    return target.number <= device;  // plain PTX: the driver JIT-compiles it for any newer device
}

std::vector<RankedTarget> rank_targets(const std::vector<std::string>& targets, int cc_major, int cc_minor)
{
    static const char* const how[] = {"cubin", "compatible cubin", "ptx"};
    int device = cc_major * 10 + cc_minor;
    struct Ranked {
        int rank;  // 0 exact cubin, 1 compatible cubin, 2 PTX
        int number;
        int specific;  // 2 `a`, 1 `f`, 0 plain: the more specific code first
        std::size_t index;
    };
    std::vector<Ranked> fitting;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        ParsedTarget t = parse_target(targets[i]);
        if (!target_runs_on(t, cc_major, cc_minor)) continue;
        int rank = !t.cubin ? 2 : t.number == device ? 0 : 1;
        fitting.push_back({rank, t.number, t.feature == 'a' ? 2 : t.feature == 'f' ? 1 : 0, i});
    }
    std::stable_sort(fitting.begin(), fitting.end(), [](const Ranked& a, const Ranked& b) {
        if (a.rank != b.rank) return a.rank < b.rank;
        if (a.number != b.number) return a.number > b.number;
        return a.specific > b.specific;
    });
    std::vector<RankedTarget> ranked;
    for (const auto& f : fitting) ranked.push_back({f.index, how[f.rank]});
    return ranked;
}

}  // namespace ck
