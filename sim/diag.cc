#include "sim/diag.h"

namespace rseqmc {

namespace {
std::string Compose(const std::string& file, SourceLoc loc, const std::string& message, const std::string& line,
                    const std::string& hint) {
  std::string s;
  if (!file.empty()) s += file + ":";
  if (loc.line != 0) {
    s += std::to_string(loc.line) + ":";
    if (loc.column != 0) s += std::to_string(loc.column) + ":";
  }
  if (!s.empty()) s += " ";
  s += "error: " + message + "\n";
  if (!line.empty()) {
    // Control bytes (a NUL in a string, say) are shown as '?', one column
    // each, so that the caret stays under its column and a NUL does not cut
    // the message short where it is printed as a C string.
    std::string shown = line;
    for (char& c : shown) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
    }
    s += "  " + shown + "\n";
    if (loc.column != 0) s += "  " + std::string(loc.column - 1, ' ') + "^\n";
  }
  if (!hint.empty()) s += "  hint: " + hint + "\n";
  return s;
}
}  // namespace

InputError::InputError(std::string file, SourceLoc loc, std::string message, std::string source_line,
                       std::string hint)
    : std::runtime_error(Compose(file, loc, message, source_line, hint)),
      file_(std::move(file)),
      loc_(loc),
      message_(std::move(message)),
      source_line_(std::move(source_line)),
      hint_(std::move(hint)) {
  formatted_ = what();
}

std::string InputError::Format() const { return formatted_; }

}  // namespace rseqmc
