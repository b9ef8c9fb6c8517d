// The cubin's parameter layout (EIATTR_KPARAM_INFO, read without a driver)
// against the driver's own (cuFuncGetParamInfo, CUDA 12.4), for every cubin
// in a cache root: the evidence that build's and status's check on machines
// without a GPU reads what the driver reads. Run on a GPU machine:
//   cubin_param_info <cache root>
//   cubin_param_info --cubin <file> <entry>...   (cubins no build publishes:
//                                                  layouts build refuses)
// Prints one line per cubin; exits 1 on any difference, 77 (skipped) without
// a GPU. The driver is the runtime's, loaded with dlopen.
#include "compilers/cubin_parameters.hpp"
#include "runtime/cuda_driver.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string describe(const std::vector<ck::CubinParameter>& layout)
{
    std::ostringstream out;
    for (const auto& p : layout) out << (p.ordinal ? " " : "") << p.offset << "+" << p.size;
    return out.str();
}

// The driver's layout: cuFuncGetParamInfo until it reports no more parameters.
std::vector<ck::CubinParameter> driver_layout(ck::CudaDriver& driver, CUfunction function, CUresult& failure)
{
    std::vector<ck::CubinParameter> layout;
    for (std::size_t index = 0;; ++index) {
        std::size_t offset = 0, size = 0;
        CUresult result = driver.function_param_info(function, index, &offset, &size);
        if (result == CUDA_ERROR_INVALID_VALUE) break;
        if (result != CUDA_SUCCESS) {
            failure = result;
            break;
        }
        layout.push_back({index, offset, size});
    }
    return layout;
}

bool same(const std::vector<ck::CubinParameter>& a, const std::vector<ck::CubinParameter>& b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].offset != b[i].offset || a[i].size != b[i].size) return false;
    return true;
}

// Kernels compared, and those whose layouts differ.
struct Comparison {
    int compared = 0;
    int differ = 0;
};

// One kernel of one cubin: the cubin's reading against the driver's, a line.
void compare(ck::CudaDriver& cuda, const std::string& cubin, const std::string& entry, const std::string& label,
             Comparison& counts)
{
    auto read = ck::read_cubin_parameters(cubin, entry, label);
    CUmodule module;
    CUfunction function;
    if (cuda.module_load_data(&module, cubin.data()) != CUDA_SUCCESS) {
        std::printf("%-60s not loaded on this device\n", label.c_str());
        return;
    }
    if (cuda.module_get_function(&function, module, entry.c_str()) != CUDA_SUCCESS) {
        std::printf("%-60s no function %s\n", label.c_str(), entry.c_str());
        cuda.module_unload(module);
        ++counts.differ;
        return;
    }
    CUresult failure = CUDA_SUCCESS;
    auto driver = driver_layout(cuda, function, failure);
    cuda.module_unload(module);
    ++counts.compared;
    bool agree = failure == CUDA_SUCCESS && read && same(*read, driver);
    counts.differ += agree ? 0 : 1;
    std::printf("%-60s %2zu params  %s  cubin: %s  driver: %s\n", label.c_str(), driver.size(),
                agree ? "equal " : "DIFFER", read ? describe(*read).c_str() : "(no .nv.info)",
                describe(driver).c_str());
}

void compare_cache(ck::CudaDriver& cuda, const fs::path& root, Comparison& counts)
{
    for (const auto& item : fs::recursive_directory_iterator(root / "cuda")) {
        if (item.path().filename() != "manifest.json") continue;
        auto manifest = nlohmann::json::parse(read_file(item.path()));
        for (const auto& artifact : manifest["artifacts"]) {
            std::string file = artifact["file"];
            if (file.size() < 6 || file.substr(file.size() - 6) != ".cubin") continue;
            std::string label =
                manifest["module"].get<std::string>() + " [" + artifact["target"].get<std::string>() + "]";
            compare(cuda, read_file(item.path().parent_path() / file), manifest["entry_symbol"], label, counts);
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    bool files = argc >= 4 && std::string(argv[1]) == "--cubin";
    if (argc != 2 && !files) {
        std::fprintf(stderr, "usage: cubin_param_info <cache root> | --cubin <file> <entry>...\n");
        return 2;
    }
    std::string why;
    auto cuda = ck::load_cuda_driver(ck::default_cuda_driver_names(), &why);
    CUdevice device;
    CUcontext context;
    if (!cuda || cuda->init() != CUDA_SUCCESS || cuda->device_get(&device, 0) != CUDA_SUCCESS ||
        cuda->primary_context_retain(&context, device) != CUDA_SUCCESS ||
        cuda->context_set_current(context) != CUDA_SUCCESS) {
        std::fprintf(stderr, "skipped: no CUDA device (%s)\n", why.c_str());
        return 77;
    }
    Comparison counts;
    if (files) {
        std::string cubin = read_file(argv[2]);
        for (int i = 3; i < argc; ++i)
            compare(*cuda, cubin, argv[i], fs::path(argv[2]).filename().string() + " " + argv[i], counts);
    } else {
        compare_cache(*cuda, argv[1], counts);
    }
    std::printf("%d cubins compared, %d differ\n", counts.compared, counts.differ);
    return counts.compared > 0 && counts.differ == 0 ? 0 : 1;
}
