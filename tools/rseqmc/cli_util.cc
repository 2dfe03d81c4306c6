#include "tools/rseqmc/cli_util.h"

#include <sys/stat.h>
#include <unistd.h>

#include "sim/trace.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/diag.h"
#include "sim/kernel/abi.h"
#include "sim/trace_html.h"

namespace rseqmc::cli {

std::optional<uint64_t> ParseUint64(const std::string& text) {
  size_t i = 0;
  unsigned base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    i = 2;
  }
  if (i >= text.size()) return std::nullopt;
  uint64_t v = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    unsigned d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (base == 16 && c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (base == 16 && c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    if (v > (UINT64_MAX - d) / base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

std::optional<uint64_t> ParseByteSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  int shift = 0;
  std::string digits = text;
  switch (text.back()) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: break;
  }
  if (shift != 0) digits.pop_back();
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const std::optional<uint64_t> v = ParseUint64(digits);
  if (!v || *v > (UINT64_MAX >> shift)) return std::nullopt;
  return *v << shift;
}

std::optional<double> ParseSeconds(const std::string& text) {
  const size_t dot = text.find('.');
  const std::string whole = text.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : text.substr(dot + 1);
  auto digits = [](const std::string& t) { return t.find_first_not_of("0123456789") == std::string::npos; };
  if (whole.empty() || !digits(whole) || !digits(frac) || (dot != std::string::npos && frac.empty())) {
    return std::nullopt;
  }
  if (whole.size() > 9) return std::nullopt;  // beyond 30 years
  return std::stod(text);
}

std::map<std::string, int64_t> ParseDefines(const std::vector<std::string>& args) {
  std::map<std::string, int64_t> defines;
  for (const std::string& arg : args) {
    auto [name, value] = ParseDefine(arg);
    defines[name] = value;
  }
  return defines;
}

Scenario LoadScenario(const std::string& file_or_name, const std::map<std::string, int64_t>& defines) {
  std::error_code ec;
  const auto status = std::filesystem::status(file_or_name, ec);
  if (!ec && std::filesystem::is_regular_file(status)) return ParseScenarioFile(file_or_name, defines);
  if (!ec && std::filesystem::exists(status)) {
    throw InputError(file_or_name, {}, "not a regular file", "", "give a .rsq scenario file or a built-in name");
  }
  if (const BuiltinScenario* b = FindBuiltinScenario(file_or_name)) return ParseScenario(b->text, b->path, defines);
  throw InputError(file_or_name, {}, "no such file, and no built-in scenario of that name", "",
                   "run 'rseqmc list' to see the built-in scenarios");
}

KernelVersion ChosenKernel(const std::optional<KernelVersion>& chosen) {
  if (chosen) return *chosen;
  std::string note;
  KernelVersion k = DefaultKernelVersion(&note);
  if (!note.empty()) std::cerr << "rseqmc: note: " << note << "\n";
  return k;
}

KernelVersion ApplicableKernel(const KernelVersion& k, const Scenario& s) {
  if (!AbiFor(k.model).NotApplicable(s)) return k;
  for (const KernelAbi* abi : AllAbis()) {
    if (!abi->NotApplicable(s)) return {abi->info().model, abi->info().name};
  }
  return k;
}

KernelVersion ChosenKernel(const std::optional<KernelVersion>& chosen, const Scenario& s) {
  return chosen ? *chosen : ApplicableKernel(ChosenKernel(chosen), s);
}

void CheckHtmlTarget(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) || std::filesystem::file_size(path, ec) == 0 || ec) return;
  std::ifstream in(path, std::ios::binary);
  std::string head(TimelineHtmlSignatureSize(), '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  if (!IsTimelineHtml(head)) {
    throw InputError(path, {}, "exists and is not an rseqmc timeline page; refusing to overwrite it", "",
                     "give --html a new file name (a page an earlier --html wrote is replaced)");
  }
}

void WriteHtmlFile(const std::string& path, const std::string& page) {
  CheckHtmlTarget(path);
  auto fail = [&path](int err) {
    return InputError(path, {}, "cannot write the file: " + std::string(std::strerror(err)), "",
                      "check the directory exists and is writable");
  };
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    // A device or a pipe (/dev/stdout): written in place.
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << page;
    out.close();
    if (!out) throw fail(errno);
    return;
  }
  // A complete page or none: written beside it, then renamed over it, so an
  // interrupted or failed write never leaves half a page (or a truncated
  // earlier one) at `path`.
  std::string tmp = path + ".rseqmc-XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) throw fail(errno);
  size_t done = 0;
  while (done < page.size()) {
    const ssize_t n = write(fd, page.data() + done, page.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      close(fd);
      unlink(tmp.c_str());
      throw fail(err);
    }
    done += static_cast<size_t>(n);
  }
  const mode_t mask = umask(0);  // mkstemp made it 0600; an ordinary new file's mode instead
  umask(mask);
  if (fchmod(fd, 0666 & ~mask) != 0 || close(fd) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    throw fail(err);
  }
}

std::string JsonQuote(const std::string& s) { return rseqmc::JsonQuote(std::string_view(s)); }

std::string ExpectText(Verdict v) {
  return v == Verdict::kPass ? "pass" : std::string("fail ") + VerdictName(v);
}

}  // namespace rseqmc::cli
