// SHA-256 through OpenSSL's libcrypto (EVP interface), and the lowercase hex
// every digest and key is written in. Cache keys, artifact checksums and the
// host keys all go through here.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace ck {

/// `length` bytes as 2 * length lowercase hex digits.
std::string to_hex(const unsigned char* bytes, std::size_t length);

/// SHA-256 of `data` as 64 lowercase hex digits. Throws Error when libcrypto
/// fails.
std::string sha256_hex(std::string_view data);

/// SHA-256 of a file's content. Throws SourceError when it cannot be read.
std::string sha256_file(const std::filesystem::path& file);

/// SHA-256 fed in pieces, for digests that share a prefix: a module's text is
/// hashed once, and both its own digest and cunumpy's key (the text followed
/// by the build settings) come from that one pass.
class Sha256Stream {
public:
    /// Throws Error when libcrypto cannot start a digest.
    Sha256Stream();
    Sha256Stream(const Sha256Stream& other);
    Sha256Stream& operator=(const Sha256Stream&) = delete;
    ~Sha256Stream();

    void update(std::string_view data);

    /// The digest of everything fed so far, as 64 lowercase hex digits; the
    /// stream can be fed further.
    std::string hex() const;

private:
    evp_md_ctx_st* context_;
};

}  // namespace ck
