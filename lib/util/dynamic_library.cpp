#include "util/dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

namespace ck::util {

DynamicLibrary::~DynamicLibrary()
{
    if (handle_) ::dlclose(handle_);
}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept
{
    if (this != &other) {
        if (handle_) ::dlclose(handle_);
        handle_ = other.handle_;
        other.handle_ = nullptr;
    }
    return *this;
}

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& names, std::string* error, bool keep_loaded)
{
    DynamicLibrary library;
    int flags = RTLD_NOW | RTLD_LOCAL | (keep_loaded ? RTLD_NODELETE : 0);
    for (const auto& name : names) {
        library.handle_ = ::dlopen(name.c_str(), flags);
        if (library.handle_) return library;
        if (error) *error += std::string(error->empty() ? "" : "; ") + ::dlerror();
    }
    return library;
}

void* DynamicLibrary::symbol(const char* name) const { return handle_ ? ::dlsym(handle_, name) : nullptr; }

std::string DynamicLibrary::path() const
{
    link_map* map = nullptr;
    if (!handle_ || ::dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || !map) return {};
    return map->l_name;
}

}  // namespace ck::util
