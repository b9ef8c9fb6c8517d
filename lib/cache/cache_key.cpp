#include "cache/cache.hpp"
#include "util/json_text.hpp"

namespace ck {

std::string cache_key(const nlohmann::json& inputs)
{
    // nlohmann::json keeps object keys sorted, so its text is canonical.
    return sha256_hex(util::json_text(inputs));
}

}  // namespace ck
