// libFuzzer target for the `.rsq` parser (DESIGN.md §10: the parser is fuzzed).
//
// Any input must either parse or raise InputError; nothing else may escape,
// and AddressSanitizer catches memory errors. A scenario that parses must
// survive the round trip: printing it and parsing the text gives an equal
// scenario, and printing that again gives the same text. A mismatch aborts.
// Built with -DRSEQMC_FUZZ=ON by clang; run through tools/fuzz-parser.sh.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "scenarios/parser.h"
#include "scenarios/printer.h"
#include "sim/diag.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "parser_fuzz: %s\n--- printed text ---\n%s\n", what, text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  rseqmc::Scenario s;
  try {
    s = rseqmc::ParseScenario(text, "fuzz.rsq");
  } catch (const rseqmc::InputError& e) {
    if (e.Format().empty()) Fail("empty diagnostic", std::string(text));
    return 0;
  }
  std::string printed = rseqmc::PrintScenario(s);
  rseqmc::Scenario again;
  try {
    again = rseqmc::ParseScenario(printed, "printed.rsq");
  } catch (const rseqmc::InputError& e) {
    Fail(("printed text does not parse: " + e.Format()).c_str(), printed);
  }
  if (!(again == s)) Fail("round trip changed the scenario", printed);
  if (rseqmc::PrintScenario(again) != printed) Fail("printing is not idempotent", printed);
  return 0;
}
