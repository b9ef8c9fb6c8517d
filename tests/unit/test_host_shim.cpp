// The host library's shim: Pyccel stubs read into callable functions and
// skips, and the generated C compiled against stand-in modules (written
// here as Pyccel's backends write them: the C backend's STC spans and
// `<module>__<function>`, the Fortran backend's `bind_c_<function>`
// wrappers over assumed-shape arrays) and called through the ABI the
// runtime uses. The compiled cases need gcc and Pyccel's STC
// (CK_TEST_PYTHON's), or gfortran; without them they say so and pass.
#include "host/host_library.hpp"
#include "host/host_shim.hpp"
#include "util/dynamic_library.hpp"
#include "util/file_util.hpp"
#include "util/subprocess.hpp"

#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <vector>

TEST_SUITE_BEGIN("host_shim");

using namespace ck;
namespace fs = std::filesystem;

namespace {

// As Pyccel 2.2.3 writes the stub of a module (types made canonical).
constexpr const char* example_stub = R"(#$ header metavar printer_imports="stdlib, stdint, stc/cspan"
from typing import TypeVar
from pyccel.decorators import low_level
from numpy import float32, int32, float64

@low_level('fake_kernels__copy2')
def copy2(a : 'float64[:,:](order=C)', out : 'float64[:]') -> None:
    ...

@low_level('fake_kernels__copyf')
def copyf(a : 'float64[:,:](order=F)', out : 'float64[:]') -> None:
    ...

@low_level('fake_kernels__copy3')
def copy3(a : 'int16[:,:,:](order=C)', out : 'int16[:]') -> None:
    ...

@low_level('fake_kernels__scalars')
def scalars(out : 'float64[:]', d : 'float', i : 'int', b : 'bool', f : 'float32', k : 'int32', z : 'complex') -> None:
    ...

@low_level('fake_kernels__types')
def types(a : 'bool[:]', b : 'int8[:]', c : 'int32[:]', d : 'int64[:]', e : 'float32[:]', g : 'complex64[:]', h : 'complex128[:]', count : 'int') -> None:
    ...

@low_level('fake_kernels__norm')
def norm(a : 'float64[:]') -> 'float':
    ...

@low_level('fake_kernels__push')
def push(markers : 'MarkerArguments', dt : 'float') -> None:
    ...

def unnamed(a : 'float64[:]') -> None:
    ...

class MarkerArguments:
    @low_level('fake_kernels__MarkerArguments__size')
    def size(self : 'MarkerArguments') -> None:
        ...
)";

// The C a Pyccel C build of the stub's callable functions would hold
// (compiled without NDEBUG: STC then checks every index; cspan_at evaluates
// its index more than once).
constexpr const char* example_header = R"(#ifndef FAKE_KERNELS_H
#define FAKE_KERNELS_H
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#define STC_CSPAN_INDEX_TYPE int64_t
#include <stc/cspan.h>
using_cspan(array_double_1d, double, 1);
using_cspan(array_double_2d, double, 2);
using_cspan(array_int16_t_1d, int16_t, 1);
using_cspan(array_int16_t_3d, int16_t, 3);
using_cspan(array_bool_1d, bool, 1);
using_cspan(array_int8_t_1d, int8_t, 1);
using_cspan(array_int32_t_1d, int32_t, 1);
using_cspan(array_int64_t_1d, int64_t, 1);
using_cspan(array_float_1d, float, 1);
using_cspan(array_float_complex_1d, float complex, 1);
using_cspan(array_double_complex_1d, double complex, 1);
void fake_kernels__copy2(array_double_2d a, array_double_1d out);
void fake_kernels__copyf(array_double_2d a, array_double_1d out);
void fake_kernels__copy3(array_int16_t_3d a, array_int16_t_1d out);
void fake_kernels__scalars(array_double_1d out, double d, int64_t i, bool b, float f, int32_t k, double complex z);
void fake_kernels__types(array_bool_1d a, array_int8_t_1d b, array_int32_t_1d c, array_int64_t_1d d, array_float_1d e,
                         array_float_complex_1d g, array_double_complex_1d h, int64_t count);
#endif
)";

constexpr const char* example_source = R"(#include "fake_kernels.h"
void fake_kernels__copy2(array_double_2d a, array_double_1d out)
{
    int64_t k = 0;
    for (int64_t i = 0; i < a.shape[0]; ++i)
        for (int64_t j = 0; j < a.shape[1]; ++j, ++k) *cspan_at(&out, k) = *cspan_at(&a, i, j);
}
void fake_kernels__copyf(array_double_2d a, array_double_1d out) { fake_kernels__copy2(a, out); }
void fake_kernels__copy3(array_int16_t_3d a, array_int16_t_1d out)
{
    int64_t n = 0;
    for (int64_t i = 0; i < a.shape[0]; ++i)
        for (int64_t j = 0; j < a.shape[1]; ++j)
            for (int64_t k = 0; k < a.shape[2]; ++k, ++n) *cspan_at(&out, n) = *cspan_at(&a, i, j, k);
}
void fake_kernels__scalars(array_double_1d out, double d, int64_t i, bool b, float f, int32_t k, double complex z)
{
    *cspan_at(&out, 0) = d;
    *cspan_at(&out, 1) = (double)i;
    *cspan_at(&out, 2) = b ? 1.0 : 0.0;
    *cspan_at(&out, 3) = f;
    *cspan_at(&out, 4) = k;
    *cspan_at(&out, 5) = creal(z);
    *cspan_at(&out, 6) = cimag(z);
}
void fake_kernels__types(array_bool_1d a, array_int8_t_1d b, array_int32_t_1d c, array_int64_t_1d d, array_float_1d e,
                         array_float_complex_1d g, array_double_complex_1d h, int64_t count)
{
    for (int64_t i = 0; i < count; ++i) {
        *cspan_at(&a, i) = !*cspan_at(&a, i);
        *cspan_at(&b, i) += 1;
        *cspan_at(&c, i) += 1;
        *cspan_at(&d, i) += 1;
        *cspan_at(&e, i) += 1;
        *cspan_at(&g, i) *= I;
        *cspan_at(&h, i) *= I;
    }
}
)";

// The runtime's side of the ABI (doc/host-libraries.md).
struct HostArray {
    void* data;
    std::int64_t element_type;
    std::int64_t ndim;
    const std::int64_t* shape;
    const std::int64_t* strides;
};

using Entry = int (*)(void* const*, std::int64_t, char*, std::size_t);

template <typename T>
HostArray array_of(std::vector<T>& values, std::vector<std::int64_t>& shape, std::vector<std::int64_t>& strides)
{
    return {values.data(), static_cast<std::int64_t>(element_type_of<T>()), static_cast<std::int64_t>(shape.size()),
            shape.data(), strides.data()};
}

// A linked host library of the stand-in module, or none (with the reason
// printed) where gcc or STC is missing.
class ExampleLibrary {
public:
    ExampleLibrary()
    {
        const char* python = std::getenv("CK_TEST_PYTHON");
        if (!python || !*python || util::find_in_path("gcc").empty()) {
            MESSAGE("skipped: no gcc, or CK_TEST_PYTHON unset");
            return;
        }
        std::string why;
        auto stc = find_stc(python, "GNU", &why);
        if (!stc) {
            MESSAGE("skipped: " << why);
            return;
        }
        fs::path folder = tree_.root() / "pkg" / "__pyccel__";
        tree_.write("pkg/__pyccel__/fake_kernels.pyi", example_stub);
        tree_.write("pkg/__pyccel__/fake_kernels.h", example_header);
        tree_.write("pkg/__pyccel__/fake_kernels.c", example_source);
        auto compiled =
            util::run_process({"gcc", "-O2", "-fPIC", "-c", "-I", folder.string(), "-I", stc->include_dir.string(),
                               (folder / "fake_kernels.c").string(), "-o", (folder / "fake_kernels.o").string()});
        REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.output);
        fs::create_directories(tree_ / "scratch");
        HostLibraryRequest request{{folder, "fake_kernels"},
                                   {},
                                   ShimBackend::c,
                                   *stc,
                                   false,
                                   tree_.root() / "pkg" / host_library_file("fake_kernels"),
                                   tree_ / "scratch"};
        build_ = build_host_library(request);
        REQUIRE_MESSAGE(build_.ok, build_.problem);
        std::string error;
        library_ = util::DynamicLibrary::open_first({request.output.string()}, &error);
        REQUIRE_MESSAGE(library_.loaded(), error);
    }

    bool ready() const { return library_.loaded(); }
    const HostLibraryBuild& build() const { return build_; }

    // Calls `name` with `args`; "" on success, else the shim's message.
    std::string call(const char* name, std::vector<void*> args) const
    {
        void* symbol = library_.symbol(name);
        REQUIRE(symbol != nullptr);
        auto entry = reinterpret_cast<Entry>(symbol);
        char error[512] = "";
        int status = entry(args.data(), static_cast<std::int64_t>(args.size()), error, sizeof error);
        return status == 0 ? "" : (error[0] ? error : "failed without a message");
    }

private:
    test::TempTree tree_;
    HostLibraryBuild build_;
    util::DynamicLibrary library_;
};

// The Fortran backend's side of the stand-in: the module (Python's a[i, j]
// is a(j, i) for a C-order array: Pyccel reverses its dimensions) and its
// bind_c wrappers, as Pyccel 2.2.3 prints them.
constexpr const char* fortran_stub = R"(from pyccel.decorators import low_level
from numpy import float64

@low_level('copy2')
def copy2(a : 'float64[:,:](order=C)', out : 'float64[:]') -> None:
    ...

@low_level('copyf')
def copyf(a : 'float64[:,:](order=F)', out : 'float64[:]') -> None:
    ...

@low_level('scalars')
def scalars(out : 'float64[:]', d : 'float', i : 'int', b : 'bool', f : 'float32', k : 'int32', z : 'complex') -> None:
    ...
)";

constexpr const char* fortran_module = R"(module fake_kernels
  use, intrinsic :: ISO_C_Binding, only : f64 => C_DOUBLE, i64 => C_INT64_T, f32 => C_FLOAT, i32 => C_INT32_T, &
        c64 => C_DOUBLE_COMPLEX, b1 => C_BOOL
  implicit none
contains
  subroutine copy2(a, out)
    real(f64), intent(in) :: a(0:,0:)
    real(f64), intent(inout) :: out(0:)
    integer(i64) :: i, j, k
    k = 0_i64
    do i = 0_i64, size(a, 2_i64, i64) - 1_i64
      do j = 0_i64, size(a, 1_i64, i64) - 1_i64
        out(k) = a(j, i)
        k = k + 1_i64
      end do
    end do
  end subroutine copy2
  subroutine copyf(a, out)
    real(f64), intent(in) :: a(0:,0:)
    real(f64), intent(inout) :: out(0:)
    integer(i64) :: i, j, k
    k = 0_i64
    do i = 0_i64, size(a, 1_i64, i64) - 1_i64
      do j = 0_i64, size(a, 2_i64, i64) - 1_i64
        out(k) = a(i, j)
        k = k + 1_i64
      end do
    end do
  end subroutine copyf
  subroutine scalars(out, d, i, b, f, k, z)
    real(f64), intent(inout) :: out(0:)
    real(f64), value :: d
    integer(i64), value :: i
    logical(b1), value :: b
    real(f32), value :: f
    integer(i32), value :: k
    complex(c64), value :: z
    out(0) = d
    out(1) = real(i, f64)
    out(2) = merge(1.0_f64, 0.0_f64, b)
    out(3) = real(f, f64)
    out(4) = real(k, f64)
    out(5) = real(z, f64)
    out(6) = aimag(z)
  end subroutine scalars
end module fake_kernels
)";

constexpr const char* fortran_wrappers = R"(module bind_c_fake_kernels
  use, intrinsic :: ISO_C_Binding, only : C_F_Pointer, c_ptr, f64 => C_DOUBLE, i64 => C_INT64_T, &
        f32 => C_FLOAT, i32 => C_INT32_T, c64 => C_DOUBLE_COMPLEX, b1 => C_BOOL
  use fake_kernels
  implicit none
contains
  subroutine bind_c_copy2(bound_a, a_base_shape_1, a_base_shape_2, a_ubound_1, a_ubound_2, a_stride_1, &
        a_stride_2, bound_out, out_base_shape_1, out_ubound_1, out_stride_1) bind(c)
    type(c_ptr), value :: bound_a, bound_out
    integer(i64), value :: a_base_shape_1, a_base_shape_2, a_ubound_1, a_ubound_2, a_stride_1, a_stride_2
    integer(i64), value :: out_base_shape_1, out_ubound_1, out_stride_1
    real(f64), pointer :: a(:, :)
    real(f64), pointer :: out(:)
    call C_F_Pointer(bound_a, a, [a_base_shape_2, a_base_shape_1])
    call C_F_Pointer(bound_out, out, [out_base_shape_1])
    call copy2(a = a(1_i64:a_ubound_2:a_stride_2, 1_i64:a_ubound_1:a_stride_1), &
          out = out(1_i64:out_ubound_1:out_stride_1))
  end subroutine bind_c_copy2
  subroutine bind_c_copyf(bound_a, a_base_shape_1, a_base_shape_2, a_ubound_1, a_ubound_2, a_stride_1, &
        a_stride_2, bound_out, out_base_shape_1, out_ubound_1, out_stride_1) bind(c)
    type(c_ptr), value :: bound_a, bound_out
    integer(i64), value :: a_base_shape_1, a_base_shape_2, a_ubound_1, a_ubound_2, a_stride_1, a_stride_2
    integer(i64), value :: out_base_shape_1, out_ubound_1, out_stride_1
    real(f64), pointer :: a(:, :)
    real(f64), pointer :: out(:)
    call C_F_Pointer(bound_a, a, [a_base_shape_1, a_base_shape_2])
    call C_F_Pointer(bound_out, out, [out_base_shape_1])
    call copyf(a = a(1_i64:a_ubound_1:a_stride_1, 1_i64:a_ubound_2:a_stride_2), &
          out = out(1_i64:out_ubound_1:out_stride_1))
  end subroutine bind_c_copyf
  subroutine bind_c_scalars(bound_out, out_base_shape_1, out_ubound_1, out_stride_1, d, i, b, f, k, z) bind(c)
    type(c_ptr), value :: bound_out
    integer(i64), value :: out_base_shape_1, out_ubound_1, out_stride_1
    real(f64), value :: d
    integer(i64), value :: i
    logical(b1), value :: b
    real(f32), value :: f
    integer(i32), value :: k
    complex(c64), value :: z
    real(f64), pointer :: out(:)
    call C_F_Pointer(bound_out, out, [out_base_shape_1])
    call scalars(out = out(1_i64:out_ubound_1:out_stride_1), d = d, i = i, b = b, f = f, k = k, z = z)
  end subroutine bind_c_scalars
end module bind_c_fake_kernels
)";

// The stand-in's Fortran build linked into a host library, or none (with
// the reason printed) where gfortran is missing.
class FortranLibrary {
public:
    FortranLibrary()
    {
        if (util::find_in_path("gfortran").empty()) {
            MESSAGE("skipped: no gfortran");
            return;
        }
        fs::path folder = tree_.root() / "pkg" / "__pyccel__";
        tree_.write("pkg/__pyccel__/fake_kernels.pyi", fortran_stub);
        tree_.write("pkg/__pyccel__/fake_kernels.f90", fortran_module);
        tree_.write("pkg/__pyccel__/bind_c_fake_kernels_wrapper.f90", fortran_wrappers);
        for (std::string stem : {"fake_kernels", "bind_c_fake_kernels_wrapper"}) {
            auto compiled =
                util::run_process({"gfortran", "-O2", "-fPIC", "-c", "-J", folder.string(), "-I", folder.string(),
                                   (folder / (stem + ".f90")).string(), "-o", (folder / (stem + ".o")).string()});
            REQUIRE_MESSAGE(compiled.exit_code == 0, compiled.output);
        }
        fs::create_directories(tree_ / "scratch");
        HostLibraryRequest request{{folder, "fake_kernels"},
                                   {},
                                   ShimBackend::fortran,
                                   std::nullopt,
                                   false,
                                   tree_.root() / "pkg" / host_library_file("fake_kernels"),
                                   tree_ / "scratch"};
        HostLibraryBuild build = build_host_library(request);
        REQUIRE_MESSAGE(build.ok, build.problem);
        std::string error;
        library_ = util::DynamicLibrary::open_first({request.output.string()}, &error);
        REQUIRE_MESSAGE(library_.loaded(), error);
    }

    bool ready() const { return library_.loaded(); }

    std::string call(const char* name, std::vector<void*> args) const
    {
        void* symbol = library_.symbol(name);
        REQUIRE(symbol != nullptr);
        auto entry = reinterpret_cast<Entry>(symbol);
        char error[512] = "";
        int status = entry(args.data(), static_cast<std::int64_t>(args.size()), error, sizeof error);
        return status == 0 ? "" : (error[0] ? error : "failed without a message");
    }

private:
    test::TempTree tree_;
    util::DynamicLibrary library_;
};

}  // namespace

TEST_CASE("A Pyccel stub gives each callable function its symbol and typed parameters")
{
    StubReading reading = read_pyccel_stub(example_stub);
    REQUIRE(reading.functions.size() == 5);
    const ShimFunction& copyf = reading.functions[1];
    CHECK(copyf.name == "copyf");
    CHECK(copyf.symbol == "fake_kernels__copyf");
    REQUIRE(copyf.parameters.size() == 2);
    CHECK(copyf.parameters[0].rank == 2);
    CHECK(copyf.parameters[0].order == 'F');
    CHECK(copyf.parameters[0].type == ElementType::float64);
    const ShimFunction& scalars = reading.functions[3];
    REQUIRE(scalars.parameters.size() == 7);
    CHECK(scalars.parameters[1].rank == 0);
    CHECK(scalars.parameters[2].type == ElementType::int64);  // Python's int is Pyccel's int64_t
    CHECK(scalars.parameters[3].type == ElementType::boolean);
    CHECK(scalars.parameters[4].type == ElementType::float32);
    CHECK(scalars.parameters[6].type == ElementType::complex128);
    CHECK(reading.functions[2].parameters[0].rank == 3);
    CHECK(reading.functions[2].parameters[0].type == ElementType::int16);
}

TEST_CASE("Functions the shim cannot call are named with the reason, methods are not read")
{
    StubReading reading = read_pyccel_stub(example_stub);
    REQUIRE(reading.skipped.size() == 3);
    CHECK(reading.skipped[0].name == "norm");
    CHECK(reading.skipped[0].reason == "it returns a value");
    CHECK(reading.skipped[1].name == "push");
    CHECK(reading.skipped[1].reason ==
          "parameter 'markers': type 'MarkerArguments' is not a NumPy scalar or array type");
    CHECK(reading.skipped[2].name == "unnamed");
    CHECK(reading.skipped[2].reason == "the stub names no compiled symbol");
}

TEST_CASE("Types the shim does not handle are skips: optionals, strings, fixed dimensions, unsigned types")
{
    StubReading reading = read_pyccel_stub(
        "@low_level('m__a')\ndef a(x : 'float64[:]|None') -> None:\n"
        "@low_level('m__b')\ndef b(s : 'str') -> None:\n"
        "@low_level('m__c')\ndef c(x : 'float64[3]') -> None:\n"
        "@low_level('m__d')\ndef d(x : 'uint8[:]') -> None:\n");
    CHECK(reading.functions.empty());
    REQUIRE(reading.skipped.size() == 4);
    CHECK(reading.skipped[0].reason.find("suffix |None") != std::string::npos);
    CHECK(reading.skipped[1].reason == "parameter 's': type 'str' is not a NumPy scalar or array type");
    CHECK(reading.skipped[2].reason.find("only `:` dimensions") != std::string::npos);
    CHECK(reading.skipped[3].name == "d");
}

TEST_CASE("The description lists every function's parameters and every skip, as the runtime reads it")
{
    StubReading reading = read_pyccel_stub(example_stub);
    std::string text = host_library_description(reading);
    CHECK(text.find("function copyf fake_kernels__copyf 2\nparameter a float64 2 F\nparameter out float64 1 A\n") !=
          std::string::npos);
    CHECK(text.find("skipped push parameter 'markers'") != std::string::npos);
    CHECK(generate_host_shim("fake_kernels", reading, ShimBackend::c).find("#include \"fake_kernels.h\"") !=
          std::string::npos);
    std::string fortran = generate_host_shim("fake_kernels", reading, ShimBackend::fortran);
    CHECK(fortran.find("fake_kernels.h") == std::string::npos);
    CHECK(fortran.find("void bind_c_fake_kernels__copyf(void*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, "
                       "void*, int64_t, int64_t, int64_t);") != std::string::npos);
}

TEST_CASE("A C-order 2D view and a strided one reach the function without copies")
{
    ExampleLibrary library;
    if (!library.ready()) return;
    CHECK(library.build().skipped.size() == 3);
    std::vector<double> storage = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // 3 x 4
    std::vector<double> out(6, -1);
    std::vector<std::int64_t> shape = {3, 2}, strides = {4, 2};  // storage[:, ::2]
    std::vector<std::int64_t> out_shape = {6}, out_strides = {1};
    HostArray a = array_of(storage, shape, strides);
    HostArray o = array_of(out, out_shape, out_strides);
    CHECK(library.call("ck_host__copy2", {&a, &o}) == "");
    CHECK(out == std::vector<double>{0, 2, 4, 6, 8, 10});
    std::vector<std::int64_t> column_shape = {2, 3}, column_strides = {1, 4};  // storage[:2, :3] read as F order
    HostArray f = array_of(storage, column_shape, column_strides);
    CHECK(library.call("ck_host__copyf", {&f, &o}) == "");
    CHECK(out == std::vector<double>{0, 4, 8, 1, 5, 9});
}

TEST_CASE("A 3D array, negative strides and every scalar type pass as declared")
{
    ExampleLibrary library;
    if (!library.ready()) return;
    std::vector<std::int16_t> cube(24);
    for (std::size_t i = 0; i < cube.size(); ++i) cube[i] = static_cast<std::int16_t>(i);
    std::vector<std::int16_t> out(24, -1);
    std::vector<std::int64_t> shape = {2, 3, 4}, strides = {12, 4, 1}, flat = {24}, unit = {1};
    HostArray a = array_of(cube, shape, strides);
    HostArray o = array_of(out, flat, unit);
    CHECK(library.call("ck_host__copy3", {&a, &o}) == "");
    CHECK(out == cube);
    std::vector<double> row = {1, 2, 3, 4};
    std::vector<double> reversed(4);
    std::vector<std::int64_t> one_row = {1, 4}, backwards = {4, -1}, four = {4};
    HostArray r = {row.data() + 3, static_cast<std::int64_t>(ElementType::float64), 2, one_row.data(),
                   backwards.data()};
    HostArray ro = array_of(reversed, four, unit);
    CHECK(library.call("ck_host__copy2", {&r, &ro}) == "");
    CHECK(reversed == std::vector<double>{4, 3, 2, 1});
    std::vector<double> values(7);
    std::vector<std::int64_t> seven = {7};
    HostArray v = array_of(values, seven, unit);
    double d = 0.1;
    std::int64_t i = -(std::int64_t{1} << 40);
    bool b = true;
    float f = 0.25f;
    std::int32_t k = -7;
    std::complex<double> z(1.5, -2.5);
    CHECK(library.call("ck_host__scalars", {&v, &d, &i, &b, &f, &k, &z}) == "");
    CHECK(values == std::vector<double>{0.1, static_cast<double>(i), 1, 0.25, -7, 1.5, -2.5});
}

TEST_CASE("Every array element type Pyccel's C backend prints reaches the function")
{
    ExampleLibrary library;
    if (!library.ready()) return;
    std::vector<std::int64_t> two = {2}, unit = {1};
    std::vector<std::uint8_t> flags = {0, 1};
    std::vector<std::int8_t> i8 = {1, -2};
    std::vector<std::int32_t> i32 = {1, -2};
    std::vector<std::int64_t> i64 = {1, -2};
    std::vector<float> f32 = {1, -2};
    std::vector<std::complex<float>> c64 = {{1, 2}, {3, 4}};
    std::vector<std::complex<double>> c128 = {{1, 2}, {3, 4}};
    HostArray a{flags.data(), static_cast<std::int64_t>(ElementType::boolean), 1, two.data(), unit.data()};
    HostArray b = array_of(i8, two, unit), c = array_of(i32, two, unit), d = array_of(i64, two, unit);
    HostArray e = array_of(f32, two, unit), g = array_of(c64, two, unit), h = array_of(c128, two, unit);
    std::int64_t count = 2;
    CHECK(library.call("ck_host__types", {&a, &b, &c, &d, &e, &g, &h, &count}) == "");
    CHECK(flags == std::vector<std::uint8_t>{1, 0});
    CHECK(i8 == std::vector<std::int8_t>{2, -1});
    CHECK(i32 == std::vector<std::int32_t>{2, -1});
    CHECK(i64 == std::vector<std::int64_t>{2, -1});
    CHECK(f32 == std::vector<float>{2, -1});
    CHECK(c64 == std::vector<std::complex<float>>{{-2, 1}, {-4, 3}});
    CHECK(c128 == std::vector<std::complex<double>>{{-2, 1}, {-4, 3}});
}

TEST_CASE("A wrong element type, rank, order, an empty array or argument count is refused, naming the argument")
{
    ExampleLibrary library;
    if (!library.ready()) return;
    std::vector<double> storage(12);
    std::vector<float> floats(12);
    std::vector<double> out(12);
    std::vector<std::int64_t> shape = {3, 4}, strides = {4, 1}, flat = {12}, unit = {1};
    HostArray o = array_of(out, flat, unit);
    HostArray wrong_type = array_of(floats, shape, strides);
    CHECK(library.call("ck_host__copy2", {&wrong_type, &o}) ==
          "argument a: expected a 2D float64 array, got a 2D float32 array");
    HostArray flat_a = array_of(storage, flat, unit);
    CHECK(library.call("ck_host__copy2", {&flat_a, &o}) ==
          "argument a: expected a 2D float64 array, got a 1D float64 array");
    std::vector<std::int64_t> f_strides = {1, 3};
    HostArray f_order = array_of(storage, shape, f_strides);
    CHECK(library.call("ck_host__copy2", {&f_order, &o}) == "argument a: expected C order (strides not increasing)");
    HostArray c_order = array_of(storage, shape, strides);
    CHECK(library.call("ck_host__copyf", {&c_order, &o}) ==
          "argument a: expected Fortran order (strides not decreasing)");
    std::vector<std::int64_t> empty = {0, 4};
    HostArray none = array_of(storage, empty, strides);
    CHECK(library.call("ck_host__copy2", {&none, &o}) ==
          "argument a: dimension 0 has size 0; Pyccel's arrays may not be empty");
    std::vector<std::int64_t> huge = {std::int64_t{1} << 32, 1};
    HostArray too_big = array_of(storage, huge, strides);
    CHECK(library.call("ck_host__copy2", {&too_big, &o}).find("exceeds Pyccel's 32-bit array index") !=
          std::string::npos);
    CHECK(library.call("ck_host__copy2", {&c_order}) == "copy2 takes 2 arguments, got 1");
}

TEST_CASE("Fortran backend: C- and Fortran-order views, strided ones, reach the bind_c wrappers as sections")
{
    FortranLibrary library;
    if (!library.ready()) return;
    std::vector<double> storage = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // 3 x 4
    std::vector<double> out(6, -1);
    std::vector<std::int64_t> out_shape = {6}, unit = {1};
    HostArray o = array_of(out, out_shape, unit);
    std::vector<std::int64_t> shape = {3, 2}, strides = {4, 2};  // storage[:, ::2]
    HostArray a = array_of(storage, shape, strides);
    CHECK(library.call("ck_host__copy2", {&a, &o}) == "");
    CHECK(out == std::vector<double>{0, 2, 4, 6, 8, 10});
    std::vector<std::int64_t> rows_shape = {2, 3}, rows_strides = {8, 1};  // storage[::2, :3]
    HostArray rows = array_of(storage, rows_shape, rows_strides);
    CHECK(library.call("ck_host__copy2", {&rows, &o}) == "");
    CHECK(out == std::vector<double>{0, 1, 2, 8, 9, 10});
    std::vector<std::int64_t> column_shape = {2, 3}, column_strides = {1, 4};  // storage[:2, :3] read as F order
    HostArray f = array_of(storage, column_shape, column_strides);
    CHECK(library.call("ck_host__copyf", {&f, &o}) == "");
    CHECK(out == std::vector<double>{0, 4, 8, 1, 5, 9});
    std::vector<std::int64_t> every_other = {2, 3}, every_other_strides = {2, 4};  // F order, first step 2
    HostArray g = array_of(storage, every_other, every_other_strides);
    CHECK(library.call("ck_host__copyf", {&g, &o}) == "");
    CHECK(out == std::vector<double>{0, 4, 8, 2, 6, 10});
}

TEST_CASE("Fortran backend: every scalar type passes by value as bind(c) declares it")
{
    FortranLibrary library;
    if (!library.ready()) return;
    std::vector<double> values(7);
    std::vector<std::int64_t> seven = {7}, unit = {1};
    HostArray v = array_of(values, seven, unit);
    double d = 0.1;
    std::int64_t i = -(std::int64_t{1} << 40);
    bool b = true;
    float f = 0.25f;
    std::int32_t k = -7;
    std::complex<double> z(1.5, -2.5);
    CHECK(library.call("ck_host__scalars", {&v, &d, &i, &b, &f, &k, &z}) == "");
    CHECK(values == std::vector<double>{0.1, static_cast<double>(i), 1, 0.25, -7, 1.5, -2.5});
}

TEST_CASE("Fortran backend: negative strides, views that are no section and empty arrays are refused")
{
    FortranLibrary library;
    if (!library.ready()) return;
    std::vector<double> storage(12), out(12);
    std::vector<std::int64_t> flat = {12}, unit = {1};
    HostArray o = array_of(out, flat, unit);
    std::vector<std::int64_t> shape = {1, 4}, backwards = {4, -1};
    HostArray r{storage.data() + 3, static_cast<std::int64_t>(ElementType::float64), 2, shape.data(), backwards.data()};
    CHECK(library.call("ck_host__copy2", {&r, &o}) ==
          "argument a: stride -1 of dimension 1; Pyccel's Fortran wrapper takes positive strides only");
    std::vector<std::int64_t> odd_shape = {2, 3}, odd_strides = {2, 1};  // rows of 3, 2 apart: they overlap
    HostArray odd = array_of(storage, odd_shape, odd_strides);
    CHECK(library.call("ck_host__copy2", {&odd, &o}) ==
          "argument a: its strides are not a section of one array, as Pyccel's Fortran wrapper needs; pass a copy");
    std::vector<std::int64_t> empty = {0, 4}, strides = {4, 1};
    HostArray none = array_of(storage, empty, strides);
    CHECK(library.call("ck_host__copy2", {&none, &o}) ==
          "argument a: dimension 0 has size 0; Pyccel's arrays may not be empty");
    std::vector<float> floats(12);
    std::vector<std::int64_t> full = {3, 4};
    HostArray wrong = array_of(floats, full, strides);
    CHECK(library.call("ck_host__copy2", {&wrong, &o}) ==
          "argument a: expected a 2D float64 array, got a 2D float32 array");
}

TEST_SUITE_END();
