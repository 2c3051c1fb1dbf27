// The device model behind the NPU's registers on boards that have one (npu_device_model.cpp).
#pragma once

#include "backends/arm/vnpu/device/ethos_u_device.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The device board_npu_start() plugged in, or null before it (or on silicon). Tests use it
/// to inject faults (kiln_npu_device_inject_fault); the driver never does.
kiln_npu_device* board_npu_device_model(void);

#ifdef __cplusplus
}  // extern "C"
#endif
