// Source rules that CI enforces by reading the tree (RSEQMC_SOURCE_DIR):
//   * no test of which kernel ABI runs outside the ABI modules (sim/kernel/)
//     and the version parser that selects one (sim/kernel_model.cc): the
//     Machine and the tools ask the ABI (sim/kernel/abi.h) instead;
//   * sim/ never includes model/.
// Tests may name ABIs (they choose one per run) and are not scanned.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace rseqmc {
namespace {

namespace fs = std::filesystem;

// A comparison with, or a switch over, a KernelModel value or a kernel
// version: `== KernelModel::x`, `KernelModel::x !=`, `case KernelModel::`,
// `kernel.model ==`, `model == `.
const std::regex& VersionTest() {
  static const std::regex re(
      R"([=!]=\s*KernelModel::|KernelModel::\w+\s*[=!]=|case\s+KernelModel::|kernel\.model\s*[=!<>]=?|switch\s*\([^)]*kernel[^)]*\))");
  return re;
}

std::vector<std::string> Findings(const fs::path& root, const std::regex& re,
                                  const std::vector<std::string>& exempt_prefixes) {
  std::vector<std::string> out;
  for (const char* dir : {"sim", "model", "tools", "kernel", "scenarios"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      const std::string rel = fs::relative(e.path(), root).generic_string();
      bool skip = false;
      for (const std::string& p : exempt_prefixes) skip = skip || rel.rfind(p, 0) == 0;
      if (skip) continue;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (std::regex_search(line, re)) out.push_back(rel + ":" + std::to_string(n) + ": " + line);
      }
    }
  }
  return out;
}

fs::path SourceDir() { return fs::path(RSEQMC_SOURCE_DIR); }

TEST(SourceRulesTest, TheVersionPatternCatchesWhatItMustAndNotTheRest) {
  for (const char* bad : {"if (opt_.kernel.model != KernelModel::kLegacy418) {", "x == KernelModel::k619",
                          "case KernelModel::kLegacy60: return 1;", "KernelModel::k619 != m"}) {
    EXPECT_TRUE(std::regex_search(std::string(bad), VersionTest())) << bad;
  }
  for (const char* ok : {"abi_->RseqPreempt(*this, t);", "out->schedule.kernel = opt_.kernel.model;",
                         "KernelVersion v{KernelModel::k619, \"6.19\"};"}) {
    EXPECT_FALSE(std::regex_search(std::string(ok), VersionTest())) << ok;
  }
}

TEST(SourceRulesTest, NoKernelVersionTestOutsideTheAbiModules) {
  const auto found = Findings(SourceDir(), VersionTest(), {"sim/kernel/", "sim/kernel_model.cc"});
  std::ostringstream msg;
  for (const std::string& f : found) msg << f << "\n";
  EXPECT_TRUE(found.empty()) << "move these rules into an ABI module (sim/kernel/):\n" << msg.str();
}

TEST(SourceRulesTest, SimNeverIncludesModel) {
  static const std::regex include_model(R"(#\s*include\s*"model/)");
  std::vector<std::string> found;
  for (const std::string& f : Findings(SourceDir(), include_model, {"model/", "tools/", "kernel/", "scenarios/"})) {
    found.push_back(f);
  }
  EXPECT_TRUE(found.empty()) << found.size() << " include(s) of model/ in sim/, first: " << found.front();
}

}  // namespace
}  // namespace rseqmc
