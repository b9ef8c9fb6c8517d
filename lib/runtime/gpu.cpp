#include "cunumpy_kernels/error.hpp"
#include "cunumpy_kernels/gpu.hpp"

#include "runtime/gpu_state.hpp"

namespace ck {

namespace {

int attribute(CudaDriver& driver, CUdevice device, CUdevice_attribute which, const char* name)
{
    int value = 0;
    check_cuda(driver, driver.device_attribute(&value, which, device),
               std::string("cuDeviceGetAttribute(") + name + ")");
    return value;
}

}  // namespace

DeviceInfo read_device_info(CudaDriver& driver, CUdevice device, int ordinal)
{
    DeviceInfo info;
    info.ordinal = ordinal;
    char name[256] = {};
    check_cuda(driver, driver.device_name(name, sizeof name - 1, device), "cuDeviceGetName");
    info.name = name;
    info.cc_major = attribute(driver, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability");
    info.cc_minor = attribute(driver, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability");
    info.max_threads_per_block = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads");
    info.max_block[0] = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "block x");
    info.max_block[1] = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "block y");
    info.max_block[2] = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "block z");
    info.max_grid[0] = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "grid x");
    info.max_grid[1] = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "grid y");
    info.max_grid[2] = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "grid z");
    info.shared_per_block = attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, "shared memory");
    info.shared_per_block_optin =
        attribute(driver, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, "shared memory opt-in");
    return info;
}

Gpu::State::~State()
{
    // Only a test's Gpu is ever destroyed (the system one lives until exit).
    for (auto& [device, state] : devices)
        if (state->primary) driver->primary_context_release(device);
}

void Gpu::State::load()
{
    if (load_from_system) {
        std::string why;
        driver = load_cuda_driver(default_cuda_driver_names(), &why);
        if (!driver) {
            load_error = why;
            return;
        }
    }
    CUresult result = driver->init();
    if (result != CUDA_SUCCESS) load_error = "cuInit failed: " + driver->error_text(result);
}

CudaDriver& Gpu::State::load_driver()
{
    std::call_once(load_once, [this] { load(); });
    if (!load_error.empty()) throw CudaError(load_error);
    ready.store(true, std::memory_order_release);
    return *driver;
}

const DeviceState& Gpu::State::device_state(CUdevice device)
{
    {
        std::shared_lock lock(mutex);
        auto it = devices.find(device);
        if (it != devices.end()) return *it->second;
    }
    auto state = std::make_unique<DeviceState>();
    state->device = device;
    state->info = read_device_info(*driver, device, static_cast<int>(device));
    std::unique_lock lock(mutex);
    return *devices.try_emplace(device, std::move(state)).first->second;
}

const DeviceState& Gpu::State::device_of_context(CUcontext context)
{
    if (const DeviceState* first = first_device.load(std::memory_order_acquire);
        first && first_context.load(std::memory_order_relaxed) == context)
        return *first;
    {
        std::shared_lock lock(mutex);
        auto it = contexts.find(context);
        if (it != contexts.end()) return *it->second;
    }
    CUdevice device = 0;
    check_cuda(*driver, driver->context_get_device(&device), "cuCtxGetDevice");
    const DeviceState& state = device_state(device);
    std::unique_lock lock(mutex);
    contexts.emplace(context, &state);
    remember_first(context, state);
    return state;
}

void Gpu::State::remember_first(CUcontext context, const DeviceState& state)
{
    if (first_device.load(std::memory_order_relaxed)) return;
    first_context.store(context, std::memory_order_relaxed);
    first_device.store(&state, std::memory_order_release);
}

CurrentContext Gpu::State::other_context(CUcontext context)
{
    CudaDriver& d = *driver;
    if (context) return {context, &device_of_context(context)};

    int count = 0;
    check_cuda(d, d.device_count(&count), "cuDeviceGetCount");
    if (count == 0) throw CudaError("no CUDA device: the driver sees none (check CUDA_VISIBLE_DEVICES)");
    CUdevice device = 0;
    check_cuda(d, d.device_get(&device, 0), "cuDeviceGet(0)");
    const DeviceState& state = device_state(device);
    {
        std::unique_lock lock(mutex);
        auto& mutable_state = *devices.at(device);
        if (!mutable_state.primary)
            check_cuda(d, d.primary_context_retain(&mutable_state.primary, device), "cuDevicePrimaryCtxRetain");
        context = mutable_state.primary;
        contexts.emplace(context, &state);
        remember_first(context, state);
    }
    check_cuda(d, d.context_set_current(context), "cuCtxSetCurrent");
    return {context, &state};
}

// --- Gpu -------------------------------------------------------------------

std::shared_ptr<Gpu> Gpu::system()
{
    // Deliberately never destroyed: see the header.
    static Gpu* gpu = [] {
        auto state = std::make_unique<State>();
        state->load_from_system = true;
        return new Gpu(std::move(state));
    }();
    static std::shared_ptr<Gpu> shared(gpu, [](Gpu*) {});
    return shared;
}

Gpu::Gpu(std::unique_ptr<State> state) : state_(std::move(state)) {}

std::shared_ptr<Gpu> GpuAccess::over(std::shared_ptr<CudaDriver> driver)
{
    auto state = std::make_unique<Gpu::State>();
    state->driver = std::move(driver);
    return std::shared_ptr<Gpu>(new Gpu(std::move(state)));
}

Gpu::~Gpu() = default;

bool Gpu::available(std::string* why) const
{
    try {
        CudaDriver& d = state_->ready_driver();
        int count = 0;
        CUresult result = d.device_count(&count);
        if (result != CUDA_SUCCESS || count == 0) {
            if (why) *why = result != CUDA_SUCCESS ? "cuDeviceGetCount: " + d.error_text(result) : "no CUDA device";
            return false;
        }
        return true;
    } catch (const CudaError& error) {
        if (why) *why = error.what();
        return false;
    }
}

DeviceInfo Gpu::current_device() const { return state_->current_context().device->info; }

void Gpu::synchronize() const
{
    state_->current_context();
    check_cuda(*state_->driver, state_->driver->context_synchronize(), "cuCtxSynchronize");
}

DeviceBuffer Gpu::allocate(std::size_t bytes) const
{
    state_->current_context();
    CUdeviceptr address = 0;
    if (bytes > 0)
        check_cuda(*state_->driver, state_->driver->mem_alloc(&address, bytes),
                   "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
    return DeviceBuffer(shared_from_this(), address, bytes);
}

void Gpu::copy_to_device(std::uint64_t device_address, const void* host, std::size_t bytes) const
{
    if (bytes == 0) return;
    state_->current_context();
    check_cuda(*state_->driver, state_->driver->memcpy_htod(device_address, host, bytes), "cuMemcpyHtoD");
}

void Gpu::copy_to_host(void* host, std::uint64_t device_address, std::size_t bytes) const
{
    if (bytes == 0) return;
    state_->current_context();
    check_cuda(*state_->driver, state_->driver->memcpy_dtoh(host, device_address, bytes), "cuMemcpyDtoH");
}

}  // namespace ck
