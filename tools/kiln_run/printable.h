// Text from a program (method, operator and delegate names, the runtime's messages that
// quote them) on its way to the terminal. A corrupted or hostile .pte can hold any bytes
// there: escape sequences, invalid UTF-8.
#pragma once

#include <cstddef>
#include <string>

namespace kiln::host {

/// `text` with every byte outside printable ASCII (and the backslash) written as \xNN,
/// so that nothing from a program reaches the terminal raw.
std::string printable(const char* text, size_t length);
std::string printable(const std::string& text);

}  // namespace kiln::host
