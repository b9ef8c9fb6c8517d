#include "cache/cache.hpp"

namespace ck {

std::string cache_key(const nlohmann::json& inputs)
{
    // nlohmann::json keeps object keys sorted, so dump() is canonical.
    return sha256_hex(inputs.dump());
}

}  // namespace ck
