// The built-in scenarios: every `.rsq` file under scenarios/ (planted bugs under
// scenarios/buggy/; the IR libraries they include are the `.rsqi` files), embedded in the library at build time by
// scenarios/embed.cmake, so the `rseqmc` binary and the tests need no source tree.
//
// Example:
//
//     for (const BuiltinScenario& b : BuiltinScenarios()) {
//       Scenario s = ParseScenario(b.text, b.path);
//       ...
//     }
//     const BuiltinScenario* c = FindBuiltinScenario("buggy/no_signature");
#ifndef RSEQMC_SCENARIOS_BUILTIN_H_
#define RSEQMC_SCENARIOS_BUILTIN_H_

#include <string>
#include <string_view>
#include <vector>

namespace rseqmc {

struct BuiltinScenario {
  std::string name;       // path relative to scenarios/ without ".rsq": "percpu_counter", "buggy/no_signature"
  std::string path;       // "scenarios/<relative path>.rsq": the file name used in diagnostics
  std::string_view text;  // the file's contents (static storage)
};

// All built-in scenarios: the top-level ones first, then those in
// subfolders (buggy/), each group sorted by name. The list is built once and
// never changes.
const std::vector<BuiltinScenario>& BuiltinScenarios();

// The built-in scenario called `name` ("percpu_counter"); also accepts the name
// with ".rsq" appended or with the "scenarios/" prefix of its path. Returns
// nullptr if there is none.
const BuiltinScenario* FindBuiltinScenario(std::string_view name);

// The text of the built-in IR library at `path` ("scenarios/alloc_common.rsqi":
// a `.rsqi` file under scenarios/, embedded like the scenarios, that scenarios
// pull in with `include`), or nullptr if there is none. The text has static
// storage.
const std::string_view* FindBuiltinLibrary(std::string_view path);

}  // namespace rseqmc

#endif  // RSEQMC_SCENARIOS_BUILTIN_H_
