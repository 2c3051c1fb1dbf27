#include "tools/kiln_run/etdump_output.h"

#include <cstdio>
#include <filesystem>

#include "runtime/platform/log.h"

namespace kiln::host {
namespace {

Error write_file(const std::string& path, Span<const uint8_t> bytes) {
  std::error_code error;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  FILE* file = std::fopen(path.c_str(), "wb");
  const bool written = file != nullptr && std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  const bool closed = file != nullptr && std::fclose(file) == 0;
  if (!written || !closed) {
    KILN_LOG(Error, "cannot write %zu bytes to %s", bytes.size(), path.c_str());
    return Error::AccessFailed;
  }
  return Error::Ok;
}

}  // namespace

Result<std::unique_ptr<EtdumpOutput>> EtdumpOutput::create(const Options& options) {
  if (options.etdump_path.empty()) return std::unique_ptr<EtdumpOutput>();
  std::unique_ptr<EtdumpOutput> output(new EtdumpOutput());
  output->etdump_path_ = options.etdump_path;
  output->debug_buffer_path_ = options.debug_buffer_path;
  KILN_TRY_ASSIGN(output->events_, HostBuffer::allocate(options.etdump_bytes, "ETDump"));
  output->writer_ = std::make_unique<EtdumpWriter>(Span<uint8_t>(output->events_.data(), output->events_.size()));
  if (!options.debug_buffer_path.empty()) {
    KILN_TRY_ASSIGN(output->values_, HostBuffer::allocate(options.debug_buffer_bytes, "debug buffer"));
    output->writer_->set_debug_buffer({output->values_.data(), output->values_.size()});
  }
  return output;
}

Error EtdumpOutput::save(std::string* while_doing) {
  *while_doing = "writing the ETDump to " + etdump_path_;
  KILN_TRY_ASSIGN(const Span<const uint8_t> dump, writer_->write());
  KILN_TRY(write_file(etdump_path_, dump));
  std::printf("etdump: %zu events, %zu dropped%s, %zu bytes, times in ns -> %s\n", writer_->recorded_events(),
              writer_->dropped_events(), writer_->dropped_events() > 0 ? " (the buffer was full)" : "", dump.size(),
              etdump_path_.c_str());
  if (!debug_buffer_path_.empty()) {
    *while_doing = "writing the debug buffer to " + debug_buffer_path_;
    KILN_TRY(write_file(debug_buffer_path_, writer_->debug_buffer()));
    std::printf("debug buffer: %zu bytes of intermediate values, %zu value(s) dropped%s -> %s\n",
                writer_->debug_buffer_used(), writer_->dropped_values(),
                writer_->dropped_values() > 0 ? " (the buffer was full, or a rank too high)" : "",
                debug_buffer_path_.c_str());
  }
  while_doing->clear();
  return Error::Ok;
}

}  // namespace kiln::host
