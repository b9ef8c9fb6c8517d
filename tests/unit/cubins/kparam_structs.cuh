// Structs of the cubin reader's test kernels (kparam.cu): padding inside
// (char before double), at the end (int after double), an array view field
// (cunumpy's Array2D, as cunumpy/array_view.cuh lays it out), and one past
// the old 4 KiB parameter limit.
#pragma once

template <typename T>
struct Array2D {
    T* data;
    long long shape[2];
    long long strides[2];
};

struct Padded {
    char flag;
    double value;
    int count;
};

struct Viewish {
    int n;
    Array2D<double> view;
    bool last;
};

struct Huge {
    int values[2000];
};
