// SHA-256 fed in pieces, for digests that share a prefix: a module's text is
// hashed once, and both its own digest and cunumpy's key (the text followed
// by the build settings) come from that one pass.
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace ck {

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
