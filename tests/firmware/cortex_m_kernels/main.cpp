// The cortex_m:: kernel cases on the firmware: every case of
// tests/python/cortex_m/make_kernel_cases.py (embedded at build time) runs through the
// operator registry in the flavour this firmware's kernels were compiled for (MVE on
// the Cortex-M55, DSP on the M4/M33) and is compared with ExecuTorch's reference
// output. One line per case on the UART (with the kernel's instruction count, from the
// board's counter under QEMU's -icount); the exit status says it all: 0 every case
// passed, 2 an output differs, 1 a kernel failed or the case file is malformed.
#include <cstdint>

#include "examples/arm/platform/board.h"
#include "kernels/cortex_m/register_cortex_m_kernels.h"
#include "kernels/cortex_m/util/flavour.h"
#include "tests/cpp/kernels/cortex_m/kernel_cases.h"

extern "C" const uint8_t kiln_cortex_m_cases[];
extern "C" const uint8_t kiln_cortex_m_cases_end[];

namespace {

namespace cases = kiln_test::cortex_m_cases;

// Outputs and scratch tensors of one case, and the kernels' temp allocator: in the
// board's large RAM (the linker script's .bss.kiln_sram* input sections).
__attribute__((section(".bss.kiln_sram.cases_work"), aligned(16))) uint8_t g_work[KILN_CASES_WORK_BYTES];
__attribute__((section(".bss.kiln_sram.cases_temp"), aligned(16))) uint8_t g_temp[KILN_CASES_TEMP_BYTES];

struct Tally {
  uint32_t passed = 0;
  uint32_t differed = 0;
  uint32_t failed = 0;
};

void report(void* context, const cases::CaseOutcome& o) {
  Tally& tally = *static_cast<Tally*>(context);
  const char* verdict = "ok";
  if (o.error != kiln::Error::Ok) {
    verdict = "KERNEL FAILED";
    ++tally.failed;
  } else if (o.differing != 0) {
    verdict = "DIFFERS";
    ++tally.differed;
  } else {
    ++tally.passed;
  }
  // With QEMU's -icount shift=0 one instruction takes one virtual nanosecond.
  const unsigned long instructions =
      static_cast<unsigned long>(o.kernel_ticks * 1000000000ull / board_tick_hz());
  board_printf("case %3u %-8s %.*s: %.*s, %u elements, max difference %ld (error 0x%x), ~%lu instructions\n",
               static_cast<unsigned>(o.index), verdict, static_cast<int>(o.op_length), o.op,
               static_cast<int>(o.name_length), o.name, static_cast<unsigned>(o.elements),
               static_cast<long>(o.max_difference), static_cast<unsigned>(o.error), instructions);
}

}  // namespace

int main() {
  board_printf("cortex_m kernel cases, %s flavour\n", kiln::cortex_m::kernel_flavour());
  const kiln::Error registered = kiln::register_cortex_m_kernels();
  if (registered != kiln::Error::Ok) {
    board_printf("registering the cortex_m kernels failed: 0x%x\n", static_cast<unsigned>(registered));
    return KILN_EXIT_RUNTIME_ERROR;
  }
  Tally tally;
  const cases::CaseMemory memory{g_work, sizeof(g_work), g_temp, sizeof(g_temp), board_ticks};
  const size_t size = static_cast<size_t>(kiln_cortex_m_cases_end - kiln_cortex_m_cases);
  const kiln::Error error = cases::run_cases(kiln_cortex_m_cases, size, memory, report, &tally);
  board_printf("%u passed, %u differ from ExecuTorch's reference, %u failed (%s flavour)\n",
               static_cast<unsigned>(tally.passed), static_cast<unsigned>(tally.differed),
               static_cast<unsigned>(tally.failed), kiln::cortex_m::kernel_flavour());
  if (error != kiln::Error::Ok || tally.failed != 0) return KILN_EXIT_RUNTIME_ERROR;
  if (tally.differed != 0 || tally.passed == 0) return KILN_EXIT_OUTPUT_MISMATCH;
  return KILN_EXIT_OK;
}
