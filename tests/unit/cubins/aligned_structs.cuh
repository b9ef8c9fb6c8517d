// Structs aligned past 16 bytes, passed by value by aligned_params.cu.
#pragma once

struct __align__(16) A16 {
    double v[2];
};
struct __align__(32) A32 {
    double v[4];
};
struct __align__(64) A64 {
    double v[8];
};
struct __align__(32) A32Small {
    double v;
};
