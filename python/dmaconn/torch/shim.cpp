/* SPDX-License-Identifier: BSD-3-Clause */
// dmaconn's detectors as c10d DMA-connectivity detectors.
//
// Built by dmaconn.torch against the installed PyTorch's own headers and
// libraries, and loaded with ctypes after `import torch`.  It links only
// libtorch_cpu and libc10; libdmaconn is dlopen'ed from the path the Python
// package already loaded it from, so both share one library (one cache, one
// warning handler).  Nothing here touches CUDA.
//
// C entry points (called through ctypes):
//   int dmaconn_torch_shim_abi(void);
//   int dmaconn_torch_shim_register(int torch_type, const char *torch_connection,
//                                   const char *library, int dmaconn_type,
//                                   const char *dmaconn_connection,
//                                   char *error, size_t error_size);

#if __has_include(<torch/csrc/distributed/c10d/symm_mem/DMAConnectivity.hpp>)
#include <torch/csrc/distributed/c10d/symm_mem/DMAConnectivity.hpp>
#elif __has_include(<torch/csrc/distributed/c10d/DMAConnectivity.hpp>)
#include <torch/csrc/distributed/c10d/DMAConnectivity.hpp>
#else
#error "this PyTorch has no DMAConnectivity.hpp (c10d's DMA connectivity registry)"
#endif

#include <dlfcn.h>

#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

// Bumped when the C entry points change; dmaconn.torch checks it.
constexpr int kShimAbi = 1;

// The few functions of libdmaconn's C API used here (include/dmaconn.h);
// declared, not included, since an installed Python package ships no header.
struct DmaconnApi {
  int (*detect)(int type, const char* connection, void** out);
  int (*size)(const void* r);
  const int* (*matrix)(const void* r);
  void (*release)(void* r);
  const char* (*last_error)();
};

template <typename Fn>
bool dc_torch_symbol(void* handle, const char* name, Fn* out, std::string* error) {
  void* sym = dlsym(handle, name);
  if (!sym) {
    *error = std::string("libdmaconn lacks ") + name;
    return false;
  }
  *out = reinterpret_cast<Fn>(sym);
  return true;
}

// One table per library path, kept (and the library kept loaded) for the
// life of the process: registered detectors point at it.
const DmaconnApi* dc_torch_api(const std::string& path, std::string* error) {
  static std::mutex lock;
  static std::map<std::string, std::unique_ptr<DmaconnApi>> apis;
  std::lock_guard<std::mutex> guard(lock);
  auto it = apis.find(path);
  if (it != apis.end())
    return it->second.get();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    *error = "cannot load " + path + ": " + (why ? why : "unknown error");
    return nullptr;
  }
  auto api = std::make_unique<DmaconnApi>();
  if (!dc_torch_symbol(handle, "dmaconn_detect", &api->detect, error) ||
      !dc_torch_symbol(handle, "dmaconn_result_size", &api->size, error) ||
      !dc_torch_symbol(handle, "dmaconn_result_matrix", &api->matrix, error) ||
      !dc_torch_symbol(handle, "dmaconn_result_release", &api->release, error) ||
      !dc_torch_symbol(handle, "dmaconn_last_error", &api->last_error, error)) {
    dlclose(handle);
    return nullptr;
  }
  const DmaconnApi* out = api.get();
  apis.emplace(path, std::move(api));
  return out;
}

class DmaconnDetector : public c10d::DMAConnectivityDetector {
 public:
  DmaconnDetector(
      c10::DeviceType torch_type,
      std::string torch_connection,
      const DmaconnApi* api,
      int dmaconn_type,
      std::string dmaconn_connection)
      : torch_type_(torch_type),
        torch_connection_(std::move(torch_connection)),
        api_(api),
        dmaconn_type_(dmaconn_type),
        dmaconn_connection_(std::move(dmaconn_connection)) {}

  // A fresh DMAConnectivity each call; c10d caches the first one per pair.
  c10::intrusive_ptr<c10d::DMAConnectivity> detect() override {
    void* raw = nullptr;
    int err = api_->detect(dmaconn_type_, dmaconn_connection_.c_str(), &raw);
    if (err != 0) {
      const char* why = api_->last_error();
      TORCH_CHECK(
          false,
          "dmaconn: ",
          torch_type_,
          " over ",
          torch_connection_,
          ": ",
          why && *why ? why : "detection failed");
    }
    std::unique_ptr<void, void (*)(void*)> result(raw, api_->release);
    const int n = api_->size(result.get());
    const int* flat = api_->matrix(result.get());
    std::vector<std::vector<int>> matrix(
        static_cast<size_t>(n), std::vector<int>(static_cast<size_t>(n), 0));
    for (int i = 0; i < n && flat; i++)
      for (int j = 0; j < n; j++)
        matrix[i][j] = flat[static_cast<size_t>(i) * n + j];
    return c10::make_intrusive<c10d::DMAConnectivity>(
        torch_type_, torch_connection_, std::move(matrix));
  }

 private:
  c10::DeviceType torch_type_;
  std::string torch_connection_;
  const DmaconnApi* api_;
  int dmaconn_type_;
  std::string dmaconn_connection_;
};

void dc_torch_set_error(char* buffer, size_t size, const std::string& message) {
  if (buffer && size)
    std::snprintf(buffer, size, "%s", message.c_str());
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int dmaconn_torch_shim_abi(void) {
  return kShimAbi;
}

// Registers (torch_type, torch_connection) in c10d, answered by dmaconn's
// (dmaconn_type, dmaconn_connection).  Replaces whatever c10d had for that
// pair, as c10d's registry always does.  0 on success; -1 with a message in
// error otherwise.
__attribute__((visibility("default"))) int dmaconn_torch_shim_register(
    int torch_type,
    const char* torch_connection,
    const char* library,
    int dmaconn_type,
    const char* dmaconn_connection,
    char* error,
    size_t error_size) {
  try {
    if (!torch_connection || !library || !dmaconn_connection) {
      dc_torch_set_error(error, error_size, "a NULL argument");
      return -1;
    }
    // c10::DeviceType is an int8_t enum: check the range before the cast.
    const auto type = static_cast<c10::DeviceType>(static_cast<int8_t>(torch_type));
    if (torch_type < 0 || torch_type > 127 || !c10::isValidDeviceType(type)) {
      dc_torch_set_error(
          error, error_size, "not a c10 DeviceType: " + std::to_string(torch_type));
      return -1;
    }
    std::string why;
    const DmaconnApi* api = dc_torch_api(library, &why);
    if (!api) {
      dc_torch_set_error(error, error_size, why);
      return -1;
    }
    c10d::register_dma_connectivity_detector(
        type,
        torch_connection,
        c10::make_intrusive<DmaconnDetector>(
            type, torch_connection, api, dmaconn_type, dmaconn_connection));
    return 0;
  } catch (const std::exception& e) {
    dc_torch_set_error(error, error_size, e.what());
  } catch (...) {
    dc_torch_set_error(error, error_size, "unknown C++ exception");
  }
  return -1;
}

} // extern "C"
