// A built-in scenario for tests, with those of `defines` that it declares as
// constants (so one set of -D values can be applied to every built-in).
#ifndef RSEQMC_TESTS_BUILTIN_SCENARIO_H_
#define RSEQMC_TESTS_BUILTIN_SCENARIO_H_

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "scenarios/builtin.h"
#include "scenarios/parser.h"
#include "sim/kernel/abi.h"
#include "sim/simulator.h"

namespace rseqmc::testing {

// Throws std::runtime_error for an unknown name.
inline Scenario Builtin(const std::string& name, const std::map<std::string, int64_t>& defines = {}) {
  const BuiltinScenario* b = FindBuiltinScenario(name);
  if (b == nullptr) throw std::runtime_error("no built-in scenario " + name);
  const Scenario plain = ParseScenario(b->text, b->path);
  std::map<std::string, int64_t> declared;
  for (const auto& [k, v] : defines) {
    if (plain.FindConstant(k) >= 0) declared.emplace(k, v);
  }
  return ParseScenario(b->text, b->path, declared);
}

// Calls f(builtin, scenario, run options) for every built-in scenario under
// every kernel ABI that runs it (RunOptions::kernel set, the rest default),
// inside a SCOPED_TRACE naming both; returns the number of calls.
template <class F>
int ForEachBuiltinUnderEachAbi(F&& f) {
  int runs = 0;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    const Scenario s = ParseScenario(b.text, b.path);
    for (const KernelAbi* abi : AllAbis()) {
      if (abi->NotApplicable(s)) continue;
      SCOPED_TRACE(b.name + " under " + abi->info().name);
      RunOptions ro;
      ro.kernel.model = abi->info().model;
      f(b, s, ro);
      ++runs;
    }
  }
  return runs;
}

}  // namespace rseqmc::testing

#endif  // RSEQMC_TESTS_BUILTIN_SCENARIO_H_
