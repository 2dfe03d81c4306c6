// api::ScenarioBuilder (include/rseqmc/rseqmc.h): assembles `.rsq` text
// (grammar: scenarios/README.md) and hands it to the one parser, so a built
// scenario is resolved and validated exactly like a file.
#include <optional>
#include <string>
#include <utility>

#include "rseqmc/rseqmc.h"

namespace rseqmc::api {
namespace {

std::string Int(int64_t v) { return std::to_string(v); }

// The declaration of a symbol: `var x: u64[4] = 0`, `percpu c: u64 stride 64 = 0`.
std::string Declaration(const std::string& kind, const std::string& name, const std::string& width, uint32_t count,
                        uint64_t stride, int64_t init) {
  std::string d = kind + " " + name + ": " + width;
  if (count != 1) d += "[" + std::to_string(count) + "]";
  if (stride != 0) d += " stride " + std::to_string(stride);
  return d + " = " + Int(init) + "\n";
}

}  // namespace

ScenarioBuilder::ScenarioBuilder(std::string name) : name_(std::move(name)) {}

ScenarioBuilder& ScenarioBuilder::Description(const std::string& text) {
  std::string one_line;
  for (char c : text) one_line += (c == '"' || c == '\n') ? '\'' : c;
  head_ += "description \"" + one_line + "\"\n";
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Cpus(uint32_t n) {
  head_ += "cpus " + std::to_string(n) + "\n";
  cpus_ = n;
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Const(const std::string& name, int64_t value) {
  head_ += "const " + name + " = " + Int(value) + "\n";
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Var(const std::string& name, const std::string& width, uint32_t count, int64_t init) {
  decls_ += Declaration("var", name, width, count, 0, init);
  return *this;
}

ScenarioBuilder& ScenarioBuilder::PerCpu(const std::string& name, const std::string& width, uint64_t stride_bytes,
                                         int64_t init) {
  decls_ += Declaration("percpu", name, width, 1, stride_bytes, init);
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Function(const std::string& name, const std::string& body) {
  funcs_ += "func " + name + "\n" + body + (body.empty() || body.back() == '\n' ? "" : "\n") + "end\n";
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Threads(const std::string& name, const std::string& entry, uint32_t count,
                                          std::optional<uint32_t> start_cpu) {
  const std::string cpu = start_cpu ? std::to_string(*start_cpu) : "(i % " + std::to_string(cpus_) + ")";
  tail_ += "thread " + name + " * " + std::to_string(count) + " entry " + entry + " cpu " + cpu + " affinity all\n";
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Signal(const std::string& signal, const std::string& handler) {
  tail_ += "signal " + signal + " handler " + handler + "\n";
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Property(const std::string& expression) {
  tail_ += "property " + expression + "\n";
  return *this;
}

ScenarioBuilder& ScenarioBuilder::Expect(const std::string& verdict) {
  tail_ += "expect " + verdict + "\n";
  return *this;
}

std::string ScenarioBuilder::Text() const { return "scenario " + name_ + "\n" + head_ + decls_ + funcs_ + tail_; }

Scenario ScenarioBuilder::Build(const Defines& defines) const {
  return Scenario::FromText(Text(), "<builder " + name_ + ">", defines);
}

}  // namespace rseqmc::api
