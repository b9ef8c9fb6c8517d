// Which targets a device loads, as a table from the CUDA documentation's rules
// (programming guide, "Feature Availability"; nvcc, "GPU Feature List"):
// plain cubins run on their major with a minor at least theirs, `a` code only
// on its own compute capability, `f` code within its family, plain PTX on any
// newer device, `a` PTX only on its own, `f` PTX within its family.
#include "runtime/target_ranking.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

TEST_SUITE_BEGIN("target_ranking");

using namespace ck;

namespace {

struct Row {
    const char* target;
    int major, minor;
    bool runs;
};

const Row rules[] = {
    // plain cubin: same major, minor >= the cubin's
    {"sm_80", 8, 0, true},
    {"sm_80", 8, 6, true},
    {"sm_86", 8, 0, false},
    {"sm_80", 9, 0, false},
    {"sm_100", 10, 3, true},
    {"sm_103", 10, 0, false},
    {"sm_90", 10, 0, false},
    {"sm_120", 12, 1, true},
    // architecture-specific cubin: exactly its compute capability
    {"sm_90a", 9, 0, true},
    {"sm_100a", 10, 0, true},
    {"sm_100a", 10, 3, false},
    {"sm_103a", 10, 0, false},
    {"sm_120a", 12, 1, false},
    {"sm_90a", 10, 0, false},
    // family-specific cubin: its major, minor >= its own
    {"sm_100f", 10, 0, true},
    {"sm_100f", 10, 3, true},
    {"sm_103f", 10, 3, true},
    {"sm_103f", 10, 0, false},
    {"sm_100f", 11, 0, false},
    {"sm_120f", 12, 1, true},
    {"sm_120f", 10, 0, false},
    // plain PTX: JIT-compiled on any device at least as new
    {"compute_80", 8, 0, true},
    {"compute_80", 12, 0, true},
    {"compute_90", 8, 9, false},
    {"compute_100", 10, 3, true},
    // architecture-specific PTX: never JIT-compiled for another device
    {"compute_90a", 9, 0, true},
    {"compute_90a", 10, 0, false},
    {"compute_100a", 10, 3, false},
    {"compute_100a", 10, 0, true},
    // family-specific PTX: within the family
    {"compute_100f", 10, 3, true},
    {"compute_100f", 12, 0, false},
    {"compute_103f", 10, 0, false},
    // not target names
    {"sm_", 9, 0, false},
    {"sm_90x", 9, 0, false},
    {"gfx90", 9, 0, false},
    {"compute_90af", 9, 0, false},
};

std::vector<std::string> ranked(const std::vector<std::string>& targets, int major, int minor)
{
    std::vector<std::string> order;
    for (const auto& fit : rank_targets(targets, major, minor)) order.push_back(targets[fit.index] + ":" + fit.how);
    return order;
}

}  // namespace

TEST_CASE("each target loads on the devices the CUDA documentation says, and no other")
{
    for (const auto& row : rules) {
        CAPTURE(row.target);
        CAPTURE(row.major);
        CAPTURE(row.minor);
        CHECK(target_runs_on(parse_target(row.target), row.major, row.minor) == row.runs);
        bool ranked_at_all = !rank_targets({row.target}, row.major, row.minor).empty();
        CHECK(ranked_at_all == row.runs);
    }
}

TEST_CASE("an sm_100a cubin is never offered to a 10.3 device; sm_100f and sm_100 are, as compatible cubins")
{
    std::vector<std::string> targets = {"sm_100a", "sm_100f", "sm_100", "compute_100a", "compute_100f", "compute_100"};
    CHECK(ranked(targets, 10, 3) == std::vector<std::string>{"sm_100f:compatible cubin", "sm_100:compatible cubin",
                                                             "compute_100f:ptx", "compute_100:ptx"});
    CHECK(ranked(targets, 10, 0) == std::vector<std::string>{"sm_100a:cubin", "sm_100f:cubin", "sm_100:cubin",
                                                             "compute_100a:ptx", "compute_100f:ptx",
                                                             "compute_100:ptx"});
    CHECK(ranked(targets, 12, 0) == std::vector<std::string>{"compute_100:ptx"});
}

TEST_CASE("a target name is taken apart into kind, number and feature suffix")
{
    CHECK(parse_target("sm_90a").cubin);
    CHECK(parse_target("sm_90a").number == 90);
    CHECK(parse_target("sm_90a").feature == 'a');
    CHECK(parse_target("compute_100f").feature == 'f');
    CHECK(parse_target("compute_100f").number == 100);
    CHECK_FALSE(parse_target("compute_100f").cubin);
    CHECK(parse_target("sm_121").feature == 0);
}

TEST_SUITE_END();
