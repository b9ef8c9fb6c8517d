// A temporary folder for one test, removed when the test ends, with helpers
// to write files into it. Tests never touch the user's home or cache.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace ck::test {

class TempTree {
public:
    TempTree()
    {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ck-test.XXXXXX";
        if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
        root_ = std::filesystem::canonical(pattern);
    }
    ~TempTree()
    {
        std::error_code ignored;
        std::filesystem::remove_all(root_, ignored);
    }
    TempTree(const TempTree&) = delete;
    TempTree& operator=(const TempTree&) = delete;

    const std::filesystem::path& root() const { return root_; }
    std::filesystem::path operator/(const std::string& relative) const { return root_ / relative; }

    /// Writes `content` to `relative`, creating folders.
    std::filesystem::path write(const std::string& relative, const std::string& content) const
    {
        auto path = root_ / relative;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << content;
        return path;
    }

    /// A kernel folder `<package>/<name>` with a host module and, if `cuda`
    /// is not empty, `<name>_cuda.cu` holding it.
    std::filesystem::path kernel(const std::string& package, const std::string& name,
                                 const std::string& cuda = "") const
    {
        write(package + "/" + name + "/" + name + "_kernels.py",
              "def " + name + "(x: 'float[:]', n: int):\n    pass\n");
        if (!cuda.empty()) write(package + "/" + name + "/" + name + "_cuda.cu", cuda);
        return root_ / package / name;
    }

private:
    std::filesystem::path root_;
};

}  // namespace ck::test
