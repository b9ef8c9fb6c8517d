#include "cli.hpp"

int main(int argc, char** argv) { return ck::cli::run(argc, argv); }
