#include "backends/arm/runtime/npu_completion.h"

#include "backends/arm/registers/ethos_u_registers.h"
#include "runtime/platform/log.h"

namespace kiln::ethos_u {

Error completion_error(uint32_t status, uint32_t qread, uint32_t qsize) {
  namespace bits = regs::status;
  if ((status & bits::kBusError) != 0) {
    KILN_LOG(Error, "ethos-u: bus abort (STATUS 0x%08x: interface %u, channel %u) at command stream byte %u",
             status, (status >> bits::kFaultingInterfaceShift) & 1u, (status >> bits::kFaultingChannelShift) & 0xfu,
             qread);
    return Error::NpuBusError;
  }
  if ((status & bits::kEccFault) != 0) {
    KILN_LOG(Error, "ethos-u: ECC fault in the NPU's internal memory (STATUS 0x%08x)", status);
    return Error::NpuBusError;
  }
  if ((status & (bits::kCmdParseError | bits::kBranchFault)) != 0) {
    KILN_LOG(Error, "ethos-u: the NPU could not parse the command stream at byte %u (STATUS 0x%08x)", qread,
             status);
    return Error::NpuCommandStreamParseError;
  }
  if ((status & bits::kWeightDecoderFault) != 0) {
    KILN_LOG(Error, "ethos-u: the weight decoder faulted at command stream byte %u (STATUS 0x%08x)", qread,
             status);
    return Error::NpuWeightStreamInvalid;
  }
  if ((status & bits::kCmdEndReached) == 0 || qread != qsize) {
    KILN_LOG(Error, "ethos-u: the NPU stopped at command stream byte %u of %u without reaching its end "
             "(STATUS 0x%08x)", qread, qsize, status);
    return Error::NpuEndOfStreamNotReached;
  }
  return Error::Ok;
}

}  // namespace kiln::ethos_u
