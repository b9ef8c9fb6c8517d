#include "util/code_identity.hpp"

#include "util/checksummed.hpp"

#include <link.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>

namespace ck::util {

namespace fs = std::filesystem;

namespace {

// The loaded object whose segments hold this function: the program or the
// shared library it is linked into.
fs::path file_of_code()
{
    struct Search {
        std::uintptr_t address;
        std::optional<std::string> name;  ///< "" for the main program
    } search{reinterpret_cast<std::uintptr_t>(&file_of_code), std::nullopt};
    ::dl_iterate_phdr(
        [](struct dl_phdr_info* object, std::size_t, void* data) {
            auto* search = static_cast<Search*>(data);
            for (int i = 0; i < object->dlpi_phnum; ++i) {
                const auto& segment = object->dlpi_phdr[i];
                std::uintptr_t start = object->dlpi_addr + segment.p_vaddr;
                if (segment.p_type == PT_LOAD && search->address >= start &&
                    search->address < start + segment.p_memsz) {
                    search->name = object->dlpi_name ? object->dlpi_name : "";
                    return 1;
                }
            }
            return 0;
        },
        &search);
    if (!search.name) return {};
    // The main program has no name here (dladdr would give argv[0]): the kernel knows its file.
    return search.name->empty() ? fs::path("/proc/self/exe") : fs::path(*search.name);
}

std::string identity_now()
{
    fs::path named = file_of_code();
    if (named.empty()) return "";
    std::error_code error;
    fs::path file = fs::canonical(named, error);
    struct stat code {};
    if (error || ::stat(file.c_str(), &code) != 0) return "";
    return file.string() + ":" + std::to_string(code.st_size) + ":" + std::to_string(ns_of(code.st_mtim));
}

}  // namespace

const std::string& code_identity()
{
    // The code running is the one loaded: a file replaced on disk later is
    // another build, which this process does not run.
    static const std::string identity = identity_now();
    return identity;
}

}  // namespace ck::util
