// RapidCheck properties run from a GoogleTest TEST with their own number of
// cases (RC_GTEST_PROP always runs RapidCheck's default, 100).
#ifndef RSEQMC_TESTS_GEN_RC_CASES_H_
#define RSEQMC_TESTS_GEN_RC_CASES_H_

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <rapidcheck.h>

namespace rseqmc::testgen {

// Runs `prop` for `cases` successful cases (unless RC_PARAMS sets max_success).
template <typename Testable>
void CheckCases(int cases, Testable&& prop) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* env = std::getenv("RC_PARAMS");
  if (env == nullptr || std::string(env).find("max_success") == std::string::npos) params.maxSuccess = cases;
  const auto result = rc::detail::checkProperty(rc::detail::toProperty(std::forward<Testable>(prop)), metadata, params);
  if (result.template is<rc::detail::SuccessResult>()) {
    if (!result.template get<rc::detail::SuccessResult>().distribution.empty()) {
      rc::detail::printResultMessage(result, std::cout);
      std::cout << std::endl;
    }
  } else {
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    FAIL() << ss.str();
  }
}

}  // namespace rseqmc::testgen

#endif  // RSEQMC_TESTS_GEN_RC_CASES_H_
