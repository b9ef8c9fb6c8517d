// Explaining a miss in words: the first key input that differs from the
// latest entry's. Every input the key schemas (cuda_job/cuda_job.cpp,
// host/host_key.cpp) add needs a phrase here.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace ck {

/// Names the first input that differs between two key-input documents, in
/// words ("header my_sim/common.cuh changed", "compiler: nvrtc 12.4 -> nvrtc
/// 13.0"), or "" when they are equal.
std::string describe_input_change(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace ck
