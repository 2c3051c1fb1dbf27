// C99 length modifiers for newlib's printf family on this toolchain.
//
// Debian's newlib is built without "C99 I/O formats": its printf prints "%zu" as "zu"
// instead of a number, and the runtime's messages (KILN_LOG) use %zu for every size.
// The firmware links with -Wl,--wrap=vsnprintf,--wrap=snprintf (examples/arm/CMakeLists.txt):
// each call lands here, the format is rewritten to what newlib understands, and
// newlib's own function does the work. On Arm EABI size_t and ptrdiff_t are 32-bit
// ints, so 'z' and 't' are dropped; intmax_t is long long, so 'j' becomes "ll".
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

_Static_assert(sizeof(size_t) == sizeof(unsigned int), "%z is rewritten as int-sized");
_Static_assert(sizeof(ptrdiff_t) == sizeof(int), "%t is rewritten as int-sized");

int __real_vsnprintf(char* buffer, size_t size, const char* format, va_list args);

/// Copies `format` into `out` with z/t dropped and j widened; 0 if it does not fit.
static int rewrite_format(const char* format, char* out, size_t out_size) {
  size_t used = 0;
  int in_conversion = 0;
  for (const char* p = format; *p != '\0'; ++p) {
    if (used + 3 > out_size) return 0;
    const char c = *p;
    if (!in_conversion) {
      out[used++] = c;
      if (c == '%' && p[1] == '%') {
        out[used++] = *++p;  // "%%": a literal percent sign
      } else if (c == '%') {
        in_conversion = 1;
      }
      continue;
    }
    if (c == 'z' || c == 't') continue;
    if (c == 'j') {
      out[used++] = 'l';
      out[used++] = 'l';
      continue;
    }
    out[used++] = c;
    // Flags, width, precision and the h/l/L/q lengths continue the conversion; its
    // letter ends it.
    for (const char* letter = "diouxXfFeEgGaAcspn"; *letter != '\0'; ++letter) {
      if (c == *letter) in_conversion = 0;
    }
  }
  out[used] = '\0';
  return 1;
}

int __wrap_vsnprintf(char* buffer, size_t size, const char* format, va_list args) {
  char rewritten[320];
  if (!rewrite_format(format, rewritten, sizeof(rewritten))) {
    return __real_vsnprintf(buffer, size, format, args);  // too long: print as given
  }
  return __real_vsnprintf(buffer, size, rewritten, args);
}

int __wrap_snprintf(char* buffer, size_t size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int written = __wrap_vsnprintf(buffer, size, format, args);
  va_end(args);
  return written;
}
