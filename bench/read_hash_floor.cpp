// The floor of a warm check (issue 14): a process that only reads and
// SHA-256-hashes a list of files, one path a line in the file named by its
// argument, and prints how many files and bytes it hashed. bench/warm_check.py
// times it against `build` and `status` over the same tree.
#include <openssl/evp.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::cerr << "usage: read-hash-floor FILE-LIST\n";
        return 2;
    }
    std::ifstream list(argv[1]);
    std::string path;
    std::size_t files = 0, bytes = 0;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    while (std::getline(list, path)) {
        std::ifstream file(path, std::ios::binary);
        if (!file) {
            std::cerr << path << ": cannot be read\n";
            return 1;
        }
        std::string content((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        EVP_Digest(content.data(), content.size(), digest, &length, EVP_sha256(), nullptr);
        ++files;
        bytes += content.size();
    }
    std::printf("%zu files, %zu bytes\n", files, bytes);
    return 0;
}
