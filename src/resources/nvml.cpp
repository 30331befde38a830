// NVML through dlopen: the C ABI of the calls used, declared here (nvml.h is not needed to
// build). Every call returns nvmlReturn_t; 0 is success, 3 is NVML_ERROR_NOT_SUPPORTED.
#include <cstdlib>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <fmt/format.h>

#include "resources/sources.h"

namespace sb::resources {

namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr unsigned kClockSm = 1;  // NVML_CLOCK_SM

struct nvmlMemory_t {
  unsigned long long total;  // NOLINT(runtime/int): NVML's ABI
  unsigned long long free;   // NOLINT(runtime/int)
  unsigned long long used;   // NOLINT(runtime/int)
};

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

struct Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;  // milliwatts
  nvmlReturn_t (*energy)(nvmlDevice_t,
                         unsigned long long*) = nullptr;  // NOLINT(runtime/int): millijoules
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, unsigned, unsigned*) = nullptr;  // MHz
};

template <typename F>
bool Bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

class Nvml final : public Source {
 public:
  Nvml(void* lib, Api api, std::vector<nvmlDevice_t> devices, std::string detail, bool memory,
       bool energy)
      : lib_(lib),
        api_(api),
        devices_(std::move(devices)),
        detail_(std::move(detail)),
        memory_(memory),
        energy_(energy) {}

  ~Nvml() override {
    api_.shutdown();
    dlclose(lib_);
  }

  std::string name() const override { return "nvml"; }

  std::string detail() const override { return detail_; }

  Result<void> Read(Fields& out) override {
    double used = 0, total = 0, power = 0, energy = 0, util = 0, clock = 0;
    int n_power = 0, n_util = 0, n_clock = 0;
    bool mem_ok = memory_, energy_ok = energy_;
    std::string first_error;
    auto note = [&](nvmlReturn_t rc, const char* what) {
      if (first_error.empty()) {
        first_error = fmt::format("{}: {}", what, Describe(rc));
      }
    };
    for (nvmlDevice_t d : devices_) {
      if (memory_) {
        nvmlMemory_t m{};
        if (nvmlReturn_t rc = api_.memory(d, &m); rc == kSuccess) {
          used += static_cast<double>(m.used);
          total += static_cast<double>(m.total);
        } else {
          mem_ok = false;
          note(rc, "nvmlDeviceGetMemoryInfo");
        }
      }
      unsigned mw = 0;
      if (nvmlReturn_t rc = api_.power(d, &mw); rc == kSuccess) {
        power += mw / 1e3;
        ++n_power;
      } else {
        note(rc, "nvmlDeviceGetPowerUsage");
      }
      if (energy_) {
        unsigned long long mj = 0;  // NOLINT(runtime/int)
        if (nvmlReturn_t rc = api_.energy(d, &mj); rc == kSuccess) {
          energy += static_cast<double>(mj) / 1e3;
        } else {
          energy_ok = false;
          note(rc, "nvmlDeviceGetTotalEnergyConsumption");
        }
      }
      nvmlUtilization_t u{};
      if (api_.utilization != nullptr && api_.utilization(d, &u) == kSuccess) {
        util += u.gpu;
        ++n_util;
      }
      unsigned mhz = 0;
      if (api_.clock != nullptr && api_.clock(d, kClockSm, &mhz) == kSuccess) {
        clock += mhz;
        ++n_clock;
      }
    }
    const auto n = static_cast<int>(devices_.size());
    // A sum over some of the GPUs would be a wrong figure, not a smaller one: all or nothing.
    if (mem_ok) {
      out[kGpuMemoryUsed] = used;
      out[kGpuMemoryTotal] = total;
    }
    if (n_power == n) {
      out[kGpuPower] = power;
    }
    if (energy_ok) {
      out[kGpuEnergy] = energy;
    }
    if (n_util == n) {
      out[kGpuUtil] = util / n;
    }
    if (n_clock == n) {
      out[kGpuSmClock] = clock / n;
    }
    if (!first_error.empty()) {
      return MakeError(ErrorCode::kSetup, first_error);
    }
    return {};
  }

 private:
  std::string Describe(nvmlReturn_t rc) const {
    const char* s = api_.error_string != nullptr ? api_.error_string(rc) : nullptr;
    return s != nullptr ? fmt::format("{} (NVML error {})", s, rc)
                        : fmt::format("NVML error {}", rc);
  }

  void* lib_;
  Api api_;
  std::vector<nvmlDevice_t> devices_;
  std::string detail_;
  bool memory_, energy_;
};

}  // namespace

Result<std::unique_ptr<Source>> OpenNvml(const std::string& library, std::string* notes) {
  std::string path = library;
  if (path.empty()) {
    const char* env = std::getenv(kNvmlLibraryEnv);
    path = env != nullptr && *env != '\0' ? env : kNvmlLibrary;
  }
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return MakeError(ErrorCode::kSetup, fmt::format("{} could not be loaded ({}): no NVIDIA driver",
                                                    path, why != nullptr ? why : "unknown"));
  }
  Api api;
  bool ok = (Bind(lib, "nvmlInit_v2", api.init) || Bind(lib, "nvmlInit", api.init)) &&
            Bind(lib, "nvmlShutdown", api.shutdown) &&
            (Bind(lib, "nvmlDeviceGetCount_v2", api.count) ||
             Bind(lib, "nvmlDeviceGetCount", api.count)) &&
            (Bind(lib, "nvmlDeviceGetHandleByIndex_v2", api.handle) ||
             Bind(lib, "nvmlDeviceGetHandleByIndex", api.handle)) &&
            Bind(lib, "nvmlDeviceGetMemoryInfo", api.memory) &&
            Bind(lib, "nvmlDeviceGetPowerUsage", api.power);
  if (!ok) {
    dlclose(lib);
    return MakeError(ErrorCode::kSetup,
                     fmt::format("{} lacks the NVML calls servebench uses (nvmlInit_v2, "
                                 "nvmlDeviceGetMemoryInfo, nvmlDeviceGetPowerUsage ...)",
                                 path));
  }
  Bind(lib, "nvmlErrorString", api.error_string);
  Bind(lib, "nvmlDeviceGetName", api.name);
  Bind(lib, "nvmlDeviceGetTotalEnergyConsumption", api.energy);
  Bind(lib, "nvmlDeviceGetUtilizationRates", api.utilization);
  Bind(lib, "nvmlDeviceGetClockInfo", api.clock);
  auto error = [&](nvmlReturn_t rc, const char* what) {
    const char* s = api.error_string != nullptr ? api.error_string(rc) : nullptr;
    return fmt::format("{} failed: {} (NVML error {})", what, s != nullptr ? s : "?", rc);
  };
  if (nvmlReturn_t rc = api.init(); rc != kSuccess) {
    std::string why = error(rc, "nvmlInit");
    dlclose(lib);
    return MakeError(ErrorCode::kSetup, why);
  }
  unsigned count = 0;
  if (nvmlReturn_t rc = api.count(&count); rc != kSuccess || count == 0) {
    std::string why = rc != kSuccess ? error(rc, "nvmlDeviceGetCount") : "NVML found no GPU";
    api.shutdown();
    dlclose(lib);
    return MakeError(ErrorCode::kSetup, why);
  }
  std::vector<nvmlDevice_t> devices;
  std::vector<std::string> names;
  bool memory = true, energy = api.energy != nullptr;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    if (nvmlReturn_t rc = api.handle(i, &d); rc != kSuccess) {
      std::string why = error(rc, "nvmlDeviceGetHandleByIndex");
      api.shutdown();
      dlclose(lib);
      return MakeError(ErrorCode::kSetup, why);
    }
    devices.push_back(d);
    char buf[96] = {};
    names.push_back(api.name != nullptr && api.name(d, buf, sizeof buf) == kSuccess
                        ? std::string(buf)
                        : fmt::format("GPU {}", i));
    nvmlMemory_t m{};
    // A unified-memory device (DGX Spark, Jetson) reports no dedicated memory.
    const nvmlReturn_t mem_rc = api.memory(d, &m);
    if (mem_rc == kNotSupported || (mem_rc == kSuccess && m.total == 0)) {
      memory = false;
    }
    unsigned long long mj = 0;  // NOLINT(runtime/int)
    if (energy && api.energy(d, &mj) != kSuccess) {
      energy = false;
    }
  }
  std::string detail =
      names.size() == 1 ? names.front() : fmt::format("{} × {}", names.size(), names.front());
  detail += energy ? "; energy from the total-energy counter" : "; energy from integrated power";
  if (!memory) {
    detail += "; no dedicated GPU memory (unified memory): the server's RSS stands in";
    if (notes != nullptr) {
      *notes =
          "NVML reports no dedicated GPU memory (a unified-memory device such as DGX Spark or "
          "Jetson): memory figures are the server process tree's RSS when servebench launched "
          "the server";
    }
  }
  return std::unique_ptr<Source>(
      std::make_unique<Nvml>(lib, api, std::move(devices), detail, memory, energy));
}

}  // namespace sb::resources
