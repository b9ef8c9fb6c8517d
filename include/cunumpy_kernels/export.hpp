// Symbol visibility of libcunumpy-kernels: the library is built with hidden
// visibility and exports only what include/ declares with CK_API.
#pragma once

// The headers use std::span and designated initialisers: C++20.
static_assert(__cplusplus >= 202002L, "cunumpy-kernels' headers need C++20 (-std=c++20, cpp_std=c++20, cxx_std_20)");

#if defined(CK_BUILDING_LIBRARY)
#define CK_API __attribute__((visibility("default")))
#else
#define CK_API
#endif
