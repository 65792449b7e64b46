/* SPDX-License-Identifier: BSD-3-Clause */
// A second c10d plug-in, for the tests: registers (HIP, "p2p") from a static
// initialiser, as third-party plug-ins do, answering [[0, 3], [3, 0]].
#if __has_include(<torch/csrc/distributed/c10d/symm_mem/DMAConnectivity.hpp>)
#include <torch/csrc/distributed/c10d/symm_mem/DMAConnectivity.hpp>
#else
#include <torch/csrc/distributed/c10d/DMAConnectivity.hpp>
#endif
namespace {
struct Fixed : c10d::DMAConnectivityDetector {
  c10::intrusive_ptr<c10d::DMAConnectivity> detect() override {
    return c10::make_intrusive<c10d::DMAConnectivity>(
        c10::DeviceType::HIP, "p2p", std::vector<std::vector<int>>{{0, 3}, {3, 0}});
  }
};
struct Registrar {
  Registrar() {
    c10d::register_dma_connectivity_detector(c10::DeviceType::HIP, "p2p", c10::make_intrusive<Fixed>());
  }
} registrar;
}  // namespace
