// ck::Error's constructor: its message is text a person reads, so the bytes of
// paths and names that are not UTF-8 are spelled out there, once for every
// error the library throws.
#include "cunumpy_kernels/error.hpp"

#include "util/byte_text.hpp"

namespace ck {

Error::Error(const std::string& message) : std::runtime_error(util::printable(message)) {}

}  // namespace ck
