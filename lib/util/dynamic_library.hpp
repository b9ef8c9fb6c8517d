// A dlopen handle, closed once. The runtime loads libcuda.so.1 and NVRTC this
// way so that binaries start on machines without them.
#pragma once

#include <string>
#include <vector>

namespace ck::util {

class DynamicLibrary {
public:
    DynamicLibrary() = default;
    ~DynamicLibrary();
    DynamicLibrary(DynamicLibrary&& other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
    DynamicLibrary(const DynamicLibrary&) = delete;
    DynamicLibrary& operator=(const DynamicLibrary&) = delete;

    /// Tries each name in turn (a soname or a path); returns the first that
    /// loads, or an empty library with `error` holding every dlerror().
    /// `keep_loaded` (RTLD_NODELETE) keeps the code mapped after dlclose: for
    /// libraries with process-wide state (NVRTC), so that their allocations
    /// stay attributable in leak reports.
    static DynamicLibrary open_first(const std::vector<std::string>& names, std::string* error,
                                     bool keep_loaded = false);

    bool loaded() const { return handle_ != nullptr; }
    void* symbol(const char* name) const;
    /// The file the library was loaded from.
    std::string path() const;

private:
    void* handle_ = nullptr;
};

}  // namespace ck::util
