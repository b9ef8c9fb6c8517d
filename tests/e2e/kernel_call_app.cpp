// Calls any kernel of a catalog on arguments described in a text file, so a
// test can run a tree's cached Pyccel kernels from C++ on the inputs it gave
// the Python extension (test_struphy_host_calls.py).
//
//   kernel-call-app SRC CACHE_DIR CALLS
//   kernel-call-app --bundle BUNDLE CALLS     (each call's package is ignored)
//
// CALLS holds blocks of lines, one block per call:
//
//   call <package folder> <kernel>
//   array <dtype> <file> <ndim> <shape...> <strides in elements...>
//   scalar <dtype> <value>            (floats in C99 hex, complex as two)
//   end
//
// and between blocks `shell <command>` (run, e.g. a build while this
// process holds its catalogs) and `reopen` (drop the catalogs: the next call
// opens them again).
//
// Each array's file holds the whole buffer the view points into; after the
// call the buffer is written back. Prints "<kernel>: <implementation>" per
// call, or "<kernel>: error: <message>" and goes on with the next call; and
// first "warning: <text>" per warning of each catalog it opens.
#include <cunumpy_kernels/kernel_catalog.hpp>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Buffer {
    std::string path;
    std::vector<char> bytes;
};

struct Call {
    std::string package;
    std::string kernel;
    std::vector<std::string> argument_lines;
    std::string shell;  ///< a command to run instead of a call
    bool reopen = false;
};

ck::ElementType element_type(const std::string& name)
{
    for (int value = 0; value <= static_cast<int>(ck::ElementType::complex128); ++value) {
        auto type = static_cast<ck::ElementType>(value);
        if (name == ck::to_string(type)) return type;
    }
    throw std::runtime_error("unknown dtype " + name);
}

std::vector<char> read_bytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

ck::Argument scalar(ck::ElementType type, std::istringstream& in)
{
    std::string text, imaginary;
    in >> text;
    switch (type) {
        case ck::ElementType::boolean:
            return text == "1" || text == "True";
        case ck::ElementType::int8:
            return static_cast<std::int8_t>(std::stoll(text));
        case ck::ElementType::int16:
            return static_cast<std::int16_t>(std::stoll(text));
        case ck::ElementType::int32:
            return static_cast<std::int32_t>(std::stoll(text));
        case ck::ElementType::int64:
            return static_cast<std::int64_t>(std::stoll(text));
        case ck::ElementType::float32:
            return std::strtof(text.c_str(), nullptr);
        case ck::ElementType::float64:
            return std::strtod(text.c_str(), nullptr);
        case ck::ElementType::complex64:
            in >> imaginary;
            return std::complex<float>(std::strtof(text.c_str(), nullptr), std::strtof(imaginary.c_str(), nullptr));
        case ck::ElementType::complex128:
            in >> imaginary;
            return std::complex<double>(std::strtod(text.c_str(), nullptr), std::strtod(imaginary.c_str(), nullptr));
        default:
            throw std::runtime_error("scalar dtype " + std::string(ck::to_string(type)) + " is not handled here");
    }
}

ck::Argument array(ck::ElementType type, std::istringstream& in, std::vector<std::unique_ptr<Buffer>>& buffers)
{
    auto buffer = std::make_unique<Buffer>();
    int ndim = 0;
    in >> buffer->path >> ndim;
    std::vector<std::int64_t> shape(ndim), strides(ndim);
    for (auto& extent : shape) in >> extent;
    for (auto& stride : strides) in >> stride;
    buffer->bytes = read_bytes(buffer->path);
    auto view = ck::make_strided_view(buffer->bytes.data(), type, shape, strides, ck::Memory::host);
    buffers.push_back(std::move(buffer));
    return view;
}

std::vector<Call> read_calls(const std::string& path)
{
    std::ifstream in(path);
    std::vector<Call> calls;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string word;
        words >> word;
        if (word == "call") {
            calls.emplace_back();
            words >> calls.back().package >> calls.back().kernel;
        } else if (word == "array" || word == "scalar") {
            calls.back().argument_lines.push_back(line);
        } else if (word == "shell") {
            calls.emplace_back();
            calls.back().shell = line.substr(line.find("shell") + 6);
        } else if (word == "reopen") {
            calls.emplace_back();
            calls.back().reopen = true;
        }
    }
    return calls;
}

void run(ck::KernelCatalog& catalog, const Call& call)
{
    std::vector<std::unique_ptr<Buffer>> buffers;
    std::vector<ck::Argument> arguments;
    for (const auto& line : call.argument_lines) {
        std::istringstream words(line);
        std::string kind, dtype;
        words >> kind >> dtype;
        auto type = element_type(dtype);
        arguments.push_back(kind == "array" ? array(type, words, buffers) : scalar(type, words));
    }
    auto& kernel = catalog[call.kernel];
    kernel.call(arguments);
    for (const auto& buffer : buffers)
        std::ofstream(buffer->path, std::ios::binary)
            .write(buffer->bytes.data(), static_cast<std::streamsize>(buffer->bytes.size()));
    std::printf("%s: %s\n", call.kernel.c_str(), kernel.selected().c_str());
}

}  // namespace

ck::KernelCatalog open_catalog(const std::string& package, const ck::Config& config)
{
    ck::CatalogOptions options;
    options.load.config = config;
    auto catalog = ck::KernelCatalog::from_package(package, options);
    for (const auto& warning : catalog.warnings()) std::printf("warning: %s\n", warning.c_str());
    return catalog;
}

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: kernel-call-app SRC CACHE_DIR CALLS | --bundle BUNDLE CALLS\n");
        return 2;
    }
    bool bundle = std::string(argv[1]) == "--bundle";
    std::map<std::string, ck::KernelCatalog> catalogs;
    ck::Config config;
    try {
        if (bundle) {
            auto catalog = ck::KernelCatalog::from_bundle(argv[2]);
            for (const auto& warning : catalog.warnings()) std::printf("warning: %s\n", warning.c_str());
            catalogs.emplace("", std::move(catalog));
        } else {
            config = ck::load_config(argv[1]);
            config.cache_dir = argv[2];
        }
    } catch (const ck::Error& error) {
        std::fprintf(stderr, "kernel-call-app: %s\n", error.what());
        return 1;
    }
    int failed = 0;
    for (const auto& call : read_calls(argv[3])) {
        if (!call.shell.empty()) {
            std::fflush(stdout);
            if (std::system(call.shell.c_str()) != 0) std::printf("shell: failed: %s\n", call.shell.c_str());
            continue;
        }
        if (call.reopen) {
            if (!bundle) catalogs.clear();
            continue;
        }
        try {
            std::string package = bundle ? "" : call.package;
            auto found = catalogs.find(package);
            if (found == catalogs.end()) found = catalogs.emplace(package, open_catalog(package, config)).first;
            run(found->second, call);
        } catch (const std::exception& error) {
            std::printf("%s: error: %s\n", call.kernel.c_str(), error.what());
            ++failed;
        }
        std::fflush(stdout);
    }
    return failed == 0 ? 0 : 1;
}
