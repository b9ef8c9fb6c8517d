# Fills (or, with "probe", reads) CuPy's on-disk kernel cache as cunumpy's
# first call of each CUDA kernel would, for explicit architectures, without a
# GPU. Run by cunumpy-kernels in the --python interpreter as
#     python -c <this text> REQUEST.json RESULT.json
# and embedded in the binary (lib/compilers/meson.build), so it always matches
# the tool that runs it.
#
# The key is CuPy's own: the kernel's source and options come from cunumpy's
# CudaKernel (compile_options(): the -I folders, cunumpy's header folder, the
# debug options, -DCUNUMPY_INCLUDE_HASH), and the compile goes through the
# function cupy.RawKernel and cupy.RawModule call, unmemoized. Two CuPy
# functions ask the device for its compute capability; they are given the
# architecture instead. Loading the compiled module needs a driver and fails
# after CuPy has saved its entry, which is all this needs.
import json
import os
import re
import sys
import time

request_path, result_path = sys.argv[1], sys.argv[2]
with open(request_path, encoding="utf-8") as f:
    request = json.load(f)
report = {"results": []}


def finish(**fields):
    report.update(fields)
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(report, f)
    sys.exit(0)


try:
    import cupy
    from cupy._core import raw
    from cupy.cuda import compiler, nvrtc
except ImportError as error:
    finish(unavailable=f"CuPy cannot be imported ({error}); install the CuPy of your CUDA "
           f"(pip install cupy-cuda13x) in {sys.executable}, or name the Python that has it with --python")
except Exception as error:  # CuPy makes its cache folder on import: a file in the way, no permission
    finish(unavailable=f"CuPy failed while importing ({type(error).__name__}: {error}); "
           f"CUPY_CACHE_DIR is {os.environ.get('CUPY_CACHE_DIR', '~/.cupy/kernel_cache')}")
report["cupy_version"] = cupy.__version__
# CuPy's key holds -I folders of its own installation: where it lives matters.
report["cupy_dir"] = os.path.dirname(cupy.__file__)

# The CuPy internals this relies on; CuPy 14 has them all.
get_raw_module = getattr(getattr(raw, "_get_raw_module", None), "__wrapped__", None)
arch_options = getattr(getattr(compiler, "_get_arch_for_options_for_nvrtc", None), "__wrapped__", None)
missing = [name for name, found in [
    ("cupy._core.raw._get_raw_module.__wrapped__", get_raw_module),
    ("cupy.cuda.compiler._get_arch_for_options_for_nvrtc.__wrapped__", arch_options),
    ("cupy.cuda.compiler._get_arch", getattr(compiler, "_get_arch", None)),
    ("cupy.cuda.compiler._get_max_compute_capability", getattr(compiler, "_get_max_compute_capability", None)),
    ("cupy.cuda.compiler._kernel_cache_backend", getattr(compiler, "_kernel_cache_backend", None)),
    ("cupy.cuda.compiler._get_bool_env_variable", getattr(compiler, "_get_bool_env_variable", None)),
] if found is None]
if missing:
    finish(unavailable=f"CuPy {cupy.__version__} is not supported (it lacks {', '.join(missing)}); "
           "CuPy 14 is, see the README")
if compiler._get_bool_env_variable("CUPY_CACHE_IN_MEMORY", False):
    finish(unavailable="CUPY_CACHE_IN_MEMORY is set: CuPy keeps no kernel cache on disk to fill")
try:
    major, minor = nvrtc.getVersion()
except Exception as error:  # CuPy raises its own error types when NVRTC cannot be loaded
    finish(unavailable=f"CuPy {cupy.__version__} cannot load NVRTC ({error}); "
           "set CUDA_PATH to the toolkit, or install cupy-cuda13x[ctk]")
report["nvrtc_version"] = f"{major}.{minor}"

try:
    from cunumpy._cuda_kernel import CudaKernel
except ImportError as error:
    finish(unavailable=f"cunumpy's CudaKernel cannot be imported ({error})")

backend = compiler._kernel_cache_backend
report["cache_dir"] = getattr(backend, "_cache_dir", os.environ.get("CUPY_CACHE_DIR", ""))


class Probed(Exception):
    """Raised by the recording backend in probe mode, before any compile."""


class RecordingBackend:
    """CuPy's own backend, noting the entry name asked for and whether it was there."""

    def __init__(self, inner, probe):
        self.inner, self.probe = inner, probe
        self.name, self.found, self.saved = None, False, False

    def load(self, name):
        payload = self.inner.load(name)
        self.name, self.found = name, payload is not None
        if self.probe:
            raise Probed()
        return payload

    def save(self, name, payload, source):
        self.inner.save(name, payload, source)
        self.name, self.saved = name, True


# CuPy's _get_arch, for a device of this compute capability: NVRTC's newest
# architecture caps it, as it does on a real device.
current_arch = [None]
tegra_archs = getattr(compiler, "_tegra_archs", ())


def arch_of_device():
    arch = current_arch[0]
    if arch in tegra_archs:
        return arch
    return min(arch, compiler._get_max_compute_capability(), key=int)


compiler._get_arch = arch_of_device
compiler._get_arch_for_options_for_nvrtc = arch_options


def compile_one(job, probe):
    kernel, arch = request["kernels"][job["kernel"]], job["arch"]
    recorder = RecordingBackend(backend, probe)
    compiler._kernel_cache_backend = recorder
    current_arch[0] = arch
    result = {"job": job["id"]}
    start = time.monotonic()
    message = ""
    try:
        cuda = CudaKernel.from_file(
            kernel["cuda_file"], kernel["name"],
            include_dirs=kernel["include_dirs"], options=tuple(kernel["options"]),
            template_args=kernel.get("template_args") or None, check_signature=False)
        expressions = (cuda.expression,) if cuda.template_args is not None else None
        # RawKernel/RawModule's call: backend, translate_cucomplex,
        # enable_cooperative_groups, jitify, name_expressions, log_stream.
        get_raw_module(cuda.source, None, tuple(cuda.compile_options()), "nvrtc", False, False, False,
                       expressions, None)
    except Probed:
        pass
    except Exception as error:  # after a save, this is the module load that needs a driver
        message = f"{type(error).__name__}: {error}"
        if recorder.name:  # NVRTC names CuPy's temporary copy of the source: name the kernel's file
            message = re.sub(r"[^\s(\"']*" + re.escape(recorder.name) + r"\.cu", lambda _: kernel["cuda_file"], message)
    finally:
        compiler._kernel_cache_backend = backend
    result["seconds"] = time.monotonic() - start
    result["file"] = recorder.name or ""
    if recorder.found:
        result["state"] = "hit"
    elif recorder.saved:
        result["state"] = "built"
    elif probe and recorder.name:
        result["state"] = "missing"
    else:
        result["state"] = "failed"
        result["message"] = message or "CuPy saved nothing"
    return result


for job in request["jobs"]:
    report["results"].append(compile_one(job, request.get("probe", False)))
finish()
