/* The virtual Ethos-U as a register-accurate device, with a C interface: a driver programs
 * it through 32-bit register reads and writes at the NPU's documented offsets
 * (backends/arm/registers/ethos_u_registers.h), exactly as it would program silicon.
 *
 * The caller gives the device its configuration (which Ethos-U it is), the memory its bus
 * reaches (ranges of bus addresses backed by host memory), the work memory of the virtual
 * NPU and an interrupt callback. Writing CMD.transition_to_running runs the command stream
 * at QBASE (QSIZE bytes of register commands) against the regions the base pointers
 * select; STATUS, QREAD, the IRQ and the PMU then say how it went, as on hardware. The
 * device never reads or writes outside the memory it was given, whatever the registers say.
 *
 * No heap: the caller provides the storage (kiln_npu_device_storage_bytes(), aligned to
 * kiln_npu_device_storage_alignment()). One device is one NPU: calls are not thread safe.
 * Usable from C and C++ (the C++ side channel for tracing is in npu_device.h). */
#ifndef KILN_VNPU_DEVICE_ETHOS_U_DEVICE_H
#define KILN_VNPU_DEVICE_ETHOS_U_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Results of the device's functions. */
typedef enum {
  /** Done. */
  KILN_NPU_DEVICE_OK = 0,
  /** A null pointer, storage too small or misaligned, a configuration that names no
   *  Ethos-U, or an invalid memory map (more than 16 ranges, overlapping ranges). */
  KILN_NPU_DEVICE_INVALID_ARGUMENT = 1,
  /** A register offset that is not a multiple of 4 or lies outside the register window. */
  KILN_NPU_DEVICE_BAD_OFFSET = 2
} kiln_npu_device_result;

/** `size` bytes at bus address `bus_address`, which the device reads and writes at
 *  `host`. A write into a range marked read_only is a bus error. */
typedef struct {
  uint64_t bus_address;
  uint8_t* host;
  size_t size;
  int read_only;
} kiln_npu_memory_range;

/** Called when the NPU's interrupt line rises (raised = 1) or falls (raised = 0). It may
 *  read and write the device's registers. */
typedef void (*kiln_npu_irq_callback)(void* context, int raised);

typedef struct {
  /** Which NPU: one of Vela's targets, e.g. "ethos-u55-128", "ethos-u85-256". */
  const char* target;
  /** The ID register's value; 0 for the product's (ethos_u_registers.h). */
  uint32_t id;
  /** The memory the NPU's bus reaches (copied; at most 16 ranges). */
  const kiln_npu_memory_range* memory;
  size_t num_memory;
  /** The virtual NPU's internal memory and decode scratch (vnpu::kRecommendedWorkMemoryBytes
   *  is enough for every model seen so far); must outlive the device. */
  uint8_t* work_memory;
  size_t work_memory_bytes;
  kiln_npu_irq_callback irq;
  void* irq_context;
  /** STATUS reads during which a reset stays in progress (0: a reset completes at once).
   *  The device is created with a power-on reset in progress. */
  uint32_t reset_status_reads;
  /** The virtual NPU's work bounds (0: its defaults, vnpu::Config): a stream that asks for
   *  more commands, operations or MACs never completes, as a looping NPU would not. */
  uint64_t max_commands;
  uint64_t max_operations;
  uint64_t max_macs;
} kiln_npu_device_config;

/** Faults a test or a fuzzer can inject into the next command stream the NPU starts. */
typedef enum {
  /** None: streams complete as they run. */
  KILN_NPU_FAULT_NONE = 0,
  /** The NPU runs and never completes: no interrupt, STATUS stays running, until a soft
   *  reset (or CMD.stop_request). */
  KILN_NPU_FAULT_HANG = 1,
  /** The NPU completes only after `status_reads` further STATUS reads (a long job). */
  KILN_NPU_FAULT_SLOW = 2
} kiln_npu_fault;

typedef struct kiln_npu_device kiln_npu_device;

/** Bytes and alignment of the storage a device needs. */
size_t kiln_npu_device_storage_bytes(void);
size_t kiln_npu_device_storage_alignment(void);

/** Builds a device in `storage` (`storage_bytes` long) and stores it in `*device`.
 *  Nothing to free: the device lives in the caller's storage. */
kiln_npu_device_result kiln_npu_device_create(void* storage, size_t storage_bytes,
                                              const kiln_npu_device_config* config,
                                              kiln_npu_device** device);

/** Replaces the memory the NPU's bus reaches (a board's memory map; on the host, per
 *  invocation). The NPU must not be running a stream. */
kiln_npu_device_result kiln_npu_device_set_memory(kiln_npu_device* device,
                                                  const kiln_npu_memory_range* memory,
                                                  size_t num_memory);

/** A 32-bit register read / write at byte offset `offset` from the NPU's base. Offsets
 *  inside the window that name no register read as zero and ignore writes. */
kiln_npu_device_result kiln_npu_device_read(kiln_npu_device* device, uint32_t offset,
                                            uint32_t* value);
kiln_npu_device_result kiln_npu_device_write(kiln_npu_device* device, uint32_t offset,
                                             uint32_t value);

/** Bytes of the device's register window (every register offset is below it): what a
 *  firmware maps or traps at the NPU's base address. 0 for a null device. */
uint32_t kiln_npu_device_window_bytes(const kiln_npu_device* device);

/** Injects `fault` into the next command stream the NPU starts (one shot). */
kiln_npu_device_result kiln_npu_device_inject_fault(kiln_npu_device* device, kiln_npu_fault fault,
                                                    uint32_t status_reads);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_VNPU_DEVICE_ETHOS_U_DEVICE_H */
