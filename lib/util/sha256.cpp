#include "util/sha256.hpp"

#include "cunumpy_kernels/error.hpp"
#include "util/file_util.hpp"

#include <openssl/evp.h>

namespace ck {

namespace {

// SHA-256 fetched once: EVP_sha256() makes OpenSSL 3 fetch the algorithm
// from its providers again at every digest (crypto(7), "Explicit fetching"),
// a third of a 1 KB digest's time here. Never freed: it lives as long as the
// process, as the providers it comes from.
const EVP_MD* sha256_algorithm()
{
    static const EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
    return fetched ? fetched : EVP_sha256();
}

EVP_MD_CTX* new_context()
{
    EVP_MD_CTX* context = EVP_MD_CTX_new();
    if (!context) throw Error("libcrypto cannot allocate a digest");
    return context;
}

}  // namespace

std::string to_hex(const unsigned char* bytes, std::size_t length)
{
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(length * 2);
    for (std::size_t i = 0; i < length; ++i) {
        hex.push_back(digits[bytes[i] >> 4]);
        hex.push_back(digits[bytes[i] & 0xf]);
    }
    return hex;
}

std::string sha256_hex(std::string_view data)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (EVP_Digest(data.data(), data.size(), digest, &length, sha256_algorithm(), nullptr) != 1)
        throw Error("SHA-256 failed in libcrypto");
    return to_hex(digest, length);
}

std::string sha256_file(const std::filesystem::path& file) { return sha256_hex(util::read_file(file)); }

Sha256Stream::Sha256Stream() : context_(new_context())
{
    if (EVP_DigestInit_ex(context_, sha256_algorithm(), nullptr) != 1) {
        EVP_MD_CTX_free(context_);
        throw Error("SHA-256 failed in libcrypto");
    }
}

Sha256Stream::Sha256Stream(const Sha256Stream& other) : context_(new_context())
{
    if (EVP_MD_CTX_copy_ex(context_, other.context_) != 1) {
        EVP_MD_CTX_free(context_);
        throw Error("SHA-256 failed in libcrypto");
    }
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(context_); }

void Sha256Stream::update(std::string_view data)
{
    if (EVP_DigestUpdate(context_, data.data(), data.size()) != 1) throw Error("SHA-256 failed in libcrypto");
}

std::string Sha256Stream::hex() const
{
    Sha256Stream copy(*this);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    if (EVP_DigestFinal_ex(copy.context_, digest, &length) != 1) throw Error("SHA-256 failed in libcrypto");
    return to_hex(digest, length);
}

}  // namespace ck
