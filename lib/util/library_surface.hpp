// The runtime library's surface: only ck::Error leaves it.
//
// An application catches ck::Error; anything else escaping a call (a
// std::filesystem error, a JSON or TOML parser's, bad_alloc) would end it in
// std::terminate. Public entry points run their work through
// at_library_surface, which lets a ck::Error through and turns any other
// exception of the library's own code into a ck::Error saying "internal error".
// Exceptions of the caller's own code that the library calls back (host
// kernels, warning sinks, per_kernel, n_threads_from) belong to the caller:
// run_caller_code carries them through the surface unchanged.
#pragma once

#include "cunumpy_kernels/error.hpp"

#include <exception>
#include <string>
#include <utility>

namespace ck::util {

/// An exception of the caller's code, on its way through the library to the
/// outermost surface, which rethrows it as it was.
struct CallerException {
    std::exception_ptr exception;
};

/// The library surfaces the calling thread is inside (RAII): only the
/// outermost translates, so that a public function another one calls, or a
/// worker thread of one, passes exceptions on to it untouched.
class SurfaceDepth {
public:
    SurfaceDepth() { ++depth(); }
    ~SurfaceDepth() { --depth(); }
    SurfaceDepth(const SurfaceDepth&) = delete;
    SurfaceDepth& operator=(const SurfaceDepth&) = delete;
    /// Whether this is the thread's outermost surface.
    bool outermost() const { return depth() == 1; }
    /// Whether the thread is inside a surface at all.
    static bool inside() { return depth() > 0; }

private:
    static int& depth();
};

/// `body()`'s result; a ck::Error passes, a caller's exception is rethrown as
/// it was, any other becomes Error("internal error in <entry>: ...").
template <typename Body>
decltype(auto) at_library_surface(const char* entry, Body&& body)
{
    SurfaceDepth surface;
    if (!surface.outermost()) return std::forward<Body>(body)();
    try {
        return std::forward<Body>(body)();
    } catch (const Error&) {
        throw;
    } catch (const CallerException& caller) {
        std::rethrow_exception(caller.exception);
    } catch (const std::exception& error) {
        throw Error(std::string("internal error in ") + entry + ": " + error.what() + "; please report it");
    } catch (...) {
        throw Error(std::string("internal error in ") + entry + ": an exception of unknown type; please report it");
    }
}

/// `code()`'s result, for code of the caller that the library calls: inside a
/// surface, an exception other than ck::Error travels as a CallerException.
template <typename Code>
decltype(auto) run_caller_code(Code&& code)
{
    if (!SurfaceDepth::inside()) return std::forward<Code>(code)();
    try {
        return std::forward<Code>(code)();
    } catch (const Error&) {
        throw;
    } catch (...) {
        throw CallerException{std::current_exception()};
    }
}

}  // namespace ck::util
