// SHA-256 through OpenSSL's libcrypto (EVP interface).
#include "cache/cache.hpp"
#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <openssl/evp.h>

#include <memory>

namespace ck {

namespace {

std::string to_hex(const unsigned char* bytes, unsigned length)
{
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(length * 2);
    for (unsigned i = 0; i < length; ++i) {
        hex.push_back(digits[bytes[i] >> 4]);
        hex.push_back(digits[bytes[i] & 0xf]);
    }
    return hex;
}

}  // namespace

std::string sha256_hex(const std::string& data)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1)
        throw Error("SHA-256 failed in libcrypto");
    return to_hex(digest, length);
}

std::string sha256_file(const std::filesystem::path& file)
{
    return sha256_hex(util::read_file(file));
}

std::string cache_key(const nlohmann::json& inputs)
{
    // nlohmann::json keeps object keys sorted, so dump() is canonical.
    return sha256_hex(inputs.dump());
}

}  // namespace ck
