// kiln-run's --etdump / --debug-buffer: the EtdumpWriter and its memory, and writing the
// files once the runs are done.
#pragma once

#include <memory>
#include <string>

#include "runtime/core/error.h"
#include "runtime/core/result.h"
#include "runtime/etdump/etdump_writer.h"
#include "runtime/host/host_buffer.h"
#include "tools/kiln_run/runner_options.h"

namespace kiln::host {

class EtdumpOutput {
 public:
  /// The writer over buffers of the sizes `options` asks for (nullptr without --etdump).
  static Result<std::unique_ptr<EtdumpOutput>> create(const Options& options);

  EtdumpWriter& writer() { return *writer_; }

  /// Writes the ETDump (and the debug buffer) to the files `options` named and prints
  /// what they hold. AccessFailed (logged) if a file cannot be written.
  Error save(std::string* while_doing);

 private:
  EtdumpOutput() = default;

  std::string etdump_path_;
  std::string debug_buffer_path_;
  HostBuffer events_;
  HostBuffer values_;
  std::unique_ptr<EtdumpWriter> writer_;
};

}  // namespace kiln::host
