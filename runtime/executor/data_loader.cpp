#include "runtime/executor/data_loader.h"

namespace kiln {

// Out of line so that the vtable has one home.
DataLoader::~DataLoader() = default;

}  // namespace kiln
