// A stand-in for libnvidia-ml.so.1 with NVML's C ABI (the calls servebench uses), built by the
// tests because the hardware is absent here. Loaded by path (SERVEBENCH_NVML_LIB / --nvml-lib).
// Its devices are set through fake_nvml_set() (the tests dlopen the same file, so they share
// its state) or, for a whole servebench process, the environment:
//   FAKE_NVML_DEVICES=N (default 1), FAKE_NVML_POWER_MW (default 150000), FAKE_NVML_UNIFIED=1
//   (memory info not supported, as on DGX Spark), FAKE_NVML_NO_ENERGY=1 (no energy counter),
//   FAKE_NVML_INIT_ERROR=RC (nvmlInit_v2 fails with RC).
// Without a set energy, the energy counter advances as power × time since nvmlInit_v2
// (CLOCK_MONOTONIC), as a real counter would at a constant draw.
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <time.h>

namespace {

struct Device {
  int index;
};

constexpr int kMaxDevices = 8;
Device g_devices[kMaxDevices] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
std::mutex g_mu;
int g_count = 1;
unsigned g_power_mw = 150000;
bool g_unified = false;
bool g_no_energy = false;
long long g_energy_mj = -1;  // -1: derived from power × time
double g_init_s = 0;
unsigned long long g_mem_used = 20ULL << 30;
unsigned long long g_mem_total = 141ULL << 30;

double NowS() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

}  // namespace

extern "C" {

struct nvmlMemory_t {
  unsigned long long total, free, used;
};

struct nvmlUtilization_t {
  unsigned int gpu, memory;
};

// Test control: power in mW, energy in mJ (-1: power × time), memory used in bytes.
void fake_nvml_set(unsigned power_mw, long long energy_mj, unsigned long long mem_used) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_power_mw = power_mw;
  g_energy_mj = energy_mj;
  g_mem_used = mem_used;
}

int nvmlInit_v2() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (int rc = EnvInt("FAKE_NVML_INIT_ERROR", 0); rc != 0) {
    return rc;
  }
  g_count = EnvInt("FAKE_NVML_DEVICES", 1);
  g_power_mw = static_cast<unsigned>(EnvInt("FAKE_NVML_POWER_MW", 150000));
  g_unified = EnvInt("FAKE_NVML_UNIFIED", 0) != 0;
  g_no_energy = EnvInt("FAKE_NVML_NO_ENERGY", 0) != 0;
  g_energy_mj = -1;
  g_mem_used = 20ULL << 30;
  g_init_s = NowS();
  return 0;
}

int nvmlShutdown() {
  return 0;
}

const char* nvmlErrorString(int rc) {
  switch (rc) {
    case 0:
      return "Success";
    case 2:
      return "Invalid Argument";
    case 3:
      return "Not Supported";
    case 9:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(g_count);
  return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** device) {
  if (i >= static_cast<unsigned>(g_count) || i >= kMaxDevices) {
    return 2;
  }
  *device = &g_devices[i];
  return 0;
}

int nvmlDeviceGetName(void* device, char* name, unsigned length) {
  std::strncpy(name, static_cast<Device*>(device)->index >= 0 ? "Fake GPU H200" : "?", length);
  return 0;
}

int nvmlDeviceGetMemoryInfo(void*, nvmlMemory_t* m) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_unified) {
    return 3;  // NVML_ERROR_NOT_SUPPORTED: no dedicated memory
  }
  m->total = g_mem_total;
  m->used = g_mem_used;
  m->free = g_mem_total - g_mem_used;
  return 0;
}

int nvmlDeviceGetPowerUsage(void*, unsigned* mw) {
  std::lock_guard<std::mutex> lock(g_mu);
  *mw = g_power_mw;
  return 0;
}

int nvmlDeviceGetTotalEnergyConsumption(void*, unsigned long long* mj) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_no_energy) {
    return 3;
  }
  *mj = g_energy_mj >= 0 ? static_cast<unsigned long long>(g_energy_mj)
                         : static_cast<unsigned long long>(g_power_mw * (NowS() - g_init_s));
  return 0;
}

int nvmlDeviceGetUtilizationRates(void*, nvmlUtilization_t* u) {
  u->gpu = 87;
  u->memory = 40;
  return 0;
}

int nvmlDeviceGetClockInfo(void*, unsigned type, unsigned* mhz) {
  *mhz = type == 1 ? 1980 : 0;
  return 0;
}

}  // extern "C"
