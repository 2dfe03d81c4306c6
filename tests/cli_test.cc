// End-to-end tests of the rseqmc command line: exit codes, help, error
// messages for bad flags / -D / tokens / files, `list`, and the replay
// round trip (a printed token replays the identical timeline). They run the
// built binary (RSEQMC_BINARY) on fixtures under tests/data/ and on whatever
// built-in scenarios exist.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scenarios/builtin.h"
#include "tests/cli_runner.h"
#include "tests/json_check.h"

namespace rseqmc {
namespace {

using testing::CliResult;
using testing::Describe;
using testing::Fixture;
using testing::RunCli;

// The value of the "schedule:" line (the token), or "".
std::string TokenOf(const std::string& out) {
  const size_t at = out.find("\nschedule: ");
  if (at == std::string::npos) return "";
  const size_t start = at + 11;
  const size_t end = out.find_first_of(" \n", start);
  return out.substr(start, end - start);
}

// Everything before the "schedule:" line: the timeline, symbols, outcomes, verdict.
std::string TimelineOf(const std::string& out) { return out.substr(0, out.find("\nschedule: ")); }

TEST(CliTest, HelpMentionsEveryFlag) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"help"}, {"help", "run"}, {"run", "--help"}, {"run", "-h"}}) {
    CliResult r = RunCli(args);
    EXPECT_EQ(r.code, 0) << Describe(args, r);
    for (const char* flag : {"--seed", "--schedule", "--kernel", "-D", "--define", "--trace", "--max-steps", "--help"}) {
      EXPECT_NE(r.out.find(flag), std::string::npos) << flag << " missing from\n" << Describe(args, r);
    }
  }
  CliResult top = RunCli({"--help"});
  EXPECT_NE(top.out.find("rseqmc list"), std::string::npos) << top.out;
  CliResult list = RunCli({"help", "list"});
  EXPECT_EQ(list.code, 0);
  EXPECT_NE(list.out.find("usage: rseqmc list"), std::string::npos) << list.out;
}

TEST(CliTest, UsageErrorsExitTwoWithAMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;  // must appear on stderr
  };
  const std::string counter = Fixture("cli_counter.rsq");
  const std::vector<Case> cases = {
      {{}, "no command"},
      {{"frobnicate"}, "frobnicate"},
      {{"--bogus"}, "--bogus"},
      {{"run", counter, "--bogus"}, "--bogus"},
      {{"run", counter, "--seed"}, "seed"},
      {{"run", counter, "--seed", "abc"}, "abc"},
      {{"run", counter, "--seed", "1", "--seed", "2"}, "seed"},
      {{"run", counter, "--seed", "1", "--schedule", "rsq1.AA"}, "exclude"},
      {{"run", "--schedule", "rsq1.AA"}, "needs FILE"},
      {{"run", counter, counter}, ""},
      {{"run", counter, "--trace", "xml"}, "xml"},
      {{"run", counter, "--max-steps", "0"}, "max-steps"},
      {{"run", counter, "--max-steps", "12x"}, "12x"},
      {{"run", counter, "--kernel", "banana"}, "banana"},
      {{"run", counter, "--kernel", "3.10"}, "3.10"},
      {{"list", "extra"}, "extra"},
      {{"list", "--bogus"}, "--bogus"},
      {{"help", "frobnicate"}, "frobnicate"},
  };
  for (const Case& c : cases) {
    CliResult r = RunCli(c.args);
    EXPECT_EQ(r.code, 2) << Describe(c.args, r);
    EXPECT_FALSE(r.err.empty()) << Describe(c.args, r);
    EXPECT_NE(r.err.find(c.message), std::string::npos) << "wanted '" << c.message << "'\n" << Describe(c.args, r);
  }
}

TEST(CliTest, BadDefinesExitTwoWithAMessage) {
  const std::string fail = Fixture("cli_fail.rsq");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"WANT", "NAME=VALUE"},        // no '='
      {"WANT=abc", "abc"},           // not an integer
      {"WANT=", "not a 64-bit integer"},
      {"WANT=99999999999999999999", "99999999999999999999"},  // overflow
      {"9WANT=1", "9WANT"},           // not an identifier
      {"NOPE=1", "NOPE"},            // the scenario has no such constant
  };
  for (const auto& [define, message] : cases) {
    const std::vector<std::string> args = {"run", fail, "-D", define};
    CliResult r = RunCli(args);
    EXPECT_EQ(r.code, 2) << Describe(args, r);
    EXPECT_NE(r.err.find(message), std::string::npos) << "wanted '" << message << "'\n" << Describe(args, r);
    // Like every bad-input error, each says how to fix it.
    EXPECT_NE(r.err.find("\n  hint: "), std::string::npos) << Describe(args, r);
  }
}

TEST(CliTest, DefinesOverrideConstants) {
  const std::string fail = Fixture("cli_fail.rsq");
  CliResult failing = RunCli({"run", fail});
  EXPECT_EQ(failing.code, 1) << Describe({"run", fail}, failing);
  EXPECT_NE(failing.out.find("FAIL"), std::string::npos) << failing.out;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"run", fail, "-D", "WANT=1"}, {"run", fail, "-DWANT=1"}, {"run", fail, "--define", "WANT=0x1"},
           {"run", fail, "-D", "WANT=5", "-D", "WANT=1"}}) {
    CliResult r = RunCli(args);
    EXPECT_EQ(r.code, 0) << Describe(args, r);
    EXPECT_NE(r.out.find("-D WANT=1"), std::string::npos) << "replay line keeps -D\n" << r.out;
  }
}

TEST(CliTest, ExitCodeFollowsTheVerdict) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string out;  // must appear on stdout
  };
  const std::vector<Case> cases = {
      {{"run", Fixture("cli_counter.rsq")}, 0, "verdict: PASS"},
      {{"run", Fixture("cli_counter.rsq"), "--seed", "0x2a", "--kernel", "4.18"}, 0, "4.18"},
      {{"run", Fixture("cli_counter.rsq"), "-D", "OPS=3", "-D", "THREADS=3"}, 0, "w2"},
      {{"run", Fixture("cli_fail.rsq")}, 1, "FAIL  x == WANT"},
      {{"run", Fixture("cli_assert.rsq")}, 1, "FAIL (assert)"},
      {{"run", Fixture("cli_spin.rsq"), "--max-steps", "50"}, 1, "livelock"},
  };
  for (const Case& c : cases) {
    CliResult r = RunCli(c.args);
    EXPECT_EQ(r.code, c.code) << Describe(c.args, r);
    EXPECT_NE(r.out.find(c.out), std::string::npos) << "wanted '" << c.out << "'\n" << Describe(c.args, r);
    EXPECT_NE(TokenOf(r.out).find("rsq1."), std::string::npos) << Describe(c.args, r);
    EXPECT_NE(r.out.find("\nreplay:   "), std::string::npos) << Describe(c.args, r);
  }
}

// A report that cannot be written (stdout on a full disk) is lost: the exit
// status says so (2, with a message) instead of 0 "every verdict as
// expected", and instead of a run's 1, which would read as a failed property.
// `run` and `replay` of a thread that spins forever, with --max-steps 10^9
// (minutes of stepping): Ctrl-C (SIGINT once the handler is installed) and
// --time-limit end the execution at the next poll inside it. What ran is
// reported, marked INCOMPLETE with no verdict, its timeline left out (millions
// of steps), exit 3; no --html page is written for it. The runner's 60 s are
// a hang guard only.
TEST(CliTest, SigintAndTimeLimitStopALongExecution) {
  const std::string spin = Fixture("cli_spin.rsq");
  const std::string html = ::testing::TempDir() + "/sigint_run.html";
  std::remove(html.c_str());
  const std::vector<std::string> run = {"run", spin, "--max-steps", "1000000000", "--html", html};
  const CliResult r = RunCli(run, testing::Interrupt{true, 0.3});
  EXPECT_EQ(r.code, 3) << Describe(run, r);
  EXPECT_NE(r.out.find("verdict: NONE (the execution was stopped before its end)"), std::string::npos)
      << Describe(run, r);
  EXPECT_NE(r.out.find("stopped:  stopped by Ctrl-C at step "), std::string::npos) << Describe(run, r);
  EXPECT_NE(r.out.find("the execution is INCOMPLETE, no verdict"), std::string::npos) << Describe(run, r);
  EXPECT_NE(r.err.find("not written: the execution was stopped"), std::string::npos) << Describe(run, r);
  EXPECT_FALSE(std::ifstream(html).good()) << html << " was written";

  const std::string token = TokenOf(RunCli({"run", spin, "--max-steps", "50"}).out);
  ASSERT_FALSE(token.empty());
  const std::vector<std::string> replay = {"replay", spin, "--schedule", token, "--max-steps", "1000000000",
                                           "--time-limit", "0.2", "--json"};
  const CliResult j = RunCli(replay);
  EXPECT_EQ(j.code, 3) << Describe(replay, j);
  std::string error;
  EXPECT_TRUE(testing::IsValidJson(j.out.substr(0, j.out.find('\n')), &error)) << error << "\n" << j.out;
  EXPECT_NE(j.out.find("\"incomplete\":true"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"stopped\":\"stopped by --time-limit at step "), std::string::npos) << j.out;
  EXPECT_LT(j.out.size(), 100000u) << "the trace of millions of steps is left out";

  const std::vector<std::string> bad = {"run", spin, "--time-limit", "0"};
  const CliResult b = RunCli(bad);
  EXPECT_EQ(b.code, 2) << Describe(bad, b);
  EXPECT_NE(b.err.find("--time-limit 0"), std::string::npos) << Describe(bad, b);
}

TEST(CliTest, AnUnwritableReportExitsTwo) {
  const std::string want = "rseqmc: error: cannot write the report to standard output";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"check", Fixture("cli_counter.rsq"), "--kernel", "6.18"},
        std::vector<std::string>{"run", Fixture("cli_fail.rsq")}, std::vector<std::string>{"list"},
        std::vector<std::string>{"kernels"}}) {
    const CliResult r = RunCli(args, {}, "/dev/full");
    EXPECT_EQ(r.code, 2) << Describe(args, r);
    EXPECT_NE(r.err.find(want), std::string::npos) << Describe(args, r);
  }
}

TEST(CliTest, BadInputFilesExitTwoNamingThePlace) {
  CliResult bad = RunCli({"run", Fixture("cli_bad.rsq")});
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("cli_bad.rsq:3"), std::string::npos) << bad.err;

  CliResult missing = RunCli({"run", Fixture("no_such_file.rsq")});
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_NE(missing.err.find("no_such_file.rsq"), std::string::npos) << missing.err;

  CliResult dir = RunCli({"run", std::string(RSEQMC_SOURCE_DIR) + "/tests/data"});
  EXPECT_EQ(dir.code, 2) << dir.err;
  EXPECT_NE(dir.err.find("not a regular file"), std::string::npos) << dir.err;

  CliResult unknown = RunCli({"run", "no_such_builtin_scenario"});
  EXPECT_EQ(unknown.code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("rseqmc list"), std::string::npos) << unknown.err;
}

TEST(CliTest, BadTokensExitTwoWithAMessage) {
  const std::string counter = Fixture("cli_counter.rsq");
  for (const std::string token : {"garbage", "rsq1.", "rsq1.!!!!", "rsq9.AAAA", "rsq1.AAAAAAAAAAAAAAAAAAAAAAAAAAAA"}) {
    const std::vector<std::string> args = {"run", counter, "--schedule", token};
    CliResult r = RunCli(args);
    EXPECT_EQ(r.code, 2) << Describe(args, r);
    EXPECT_NE(r.err.find("token"), std::string::npos) << Describe(args, r);
    EXPECT_NE(r.err.find("\n  hint: "), std::string::npos) << Describe(args, r);
  }
  // A token made for another scenario, or for other -D values.
  const std::string fail_token = TokenOf(RunCli({"run", Fixture("cli_fail.rsq")}).out);
  ASSERT_FALSE(fail_token.empty());
  CliResult other = RunCli({"run", counter, "--schedule", fail_token});
  EXPECT_EQ(other.code, 2) << other.out << other.err;
  EXPECT_NE(other.err.find("token"), std::string::npos) << other.err;

  const std::string ops3_token = TokenOf(RunCli({"run", counter, "-D", "OPS=3"}).out);
  ASSERT_FALSE(ops3_token.empty());
  CliResult without_d = RunCli({"run", counter, "--schedule", ops3_token});
  EXPECT_EQ(without_d.code, 2) << without_d.out << without_d.err;
  // A token that is not exactly what rseqmc printed (a changed spare bit of
  // the last character, or an added character) is refused, not replayed as
  // the original.
  const std::string good = TokenOf(RunCli({"run", counter}).out);
  ASSERT_FALSE(good.empty());
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string damaged = good;
  if ((good.size() - 5) * 6 % 8 != 0) {
    damaged.back() = alphabet[alphabet.find(good.back()) ^ 1];
  } else {
    damaged += "A";
  }
  CliResult noncanonical = RunCli({"run", counter, "--schedule", damaged});
  EXPECT_EQ(noncanonical.code, 2) << noncanonical.out << noncanonical.err;
  EXPECT_NE(noncanonical.err.find("not in canonical form"), std::string::npos) << noncanonical.err;
  EXPECT_NE(noncanonical.err.find("\n  hint: copy the token exactly"), std::string::npos) << noncanonical.err;
  // A token fixes the kernel model; a contradicting --kernel is an error.
  const std::string t618 = TokenOf(RunCli({"run", counter, "--kernel", "6.18"}).out);
  CliResult contradiction = RunCli({"run", counter, "--schedule", t618, "--kernel", "4.18"});
  EXPECT_EQ(contradiction.code, 2) << contradiction.err;
  EXPECT_NE(contradiction.err.find("--kernel"), std::string::npos) << contradiction.err;
}

// Every execution printed with a token replays to the identical report. Runs
// on the fixtures and every built-in scenario, several seeds each; can never be
// skipped (DESIGN.md §12).
TEST(CliTest, ReplayingTheTokenPrintsTheIdenticalTimeline) {
  std::vector<std::vector<std::string>> runs;
  for (const char* f : {"cli_counter.rsq", "cli_fail.rsq", "cli_assert.rsq"}) {
    for (const char* seed : {"1", "2", "3", "77"}) runs.push_back({Fixture(f), "--seed", seed});
  }
  runs.push_back({Fixture("cli_counter.rsq"), "--seed", "5", "-D", "OPS=3", "--kernel", "4.18"});
  runs.push_back({Fixture("cli_spin.rsq"), "--max-steps", "40"});
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    for (const char* seed : {"1", "2"}) runs.push_back({b.name, "--seed", seed});
  }
  for (const std::vector<std::string>& run : runs) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), run.begin(), run.end());
    CliResult first = RunCli(args);
    ASSERT_TRUE(first.code == 0 || first.code == 1) << Describe(args, first);
    const std::string token = TokenOf(first.out);
    ASSERT_FALSE(token.empty()) << Describe(args, first);

    // Replay with the same FILE and the -D / --max-steps flags, but no seed or kernel.
    std::vector<std::string> replay_args = {"run", run[0], "--schedule", token};
    for (size_t i = 1; i + 1 < run.size(); ++i) {
      if (run[i] == "-D" || run[i] == "--max-steps") replay_args.insert(replay_args.end(), {run[i], run[i + 1]});
    }
    CliResult replay = RunCli(replay_args);
    EXPECT_EQ(replay.code, first.code) << Describe(replay_args, replay);
    EXPECT_EQ(TimelineOf(replay.out), TimelineOf(first.out)) << Describe(replay_args, replay);
    EXPECT_EQ(TokenOf(replay.out), token) << Describe(replay_args, replay);
    // The printed replay command names the same token.
    EXPECT_NE(first.out.find("--schedule " + token), std::string::npos) << first.out;
  }
}

// A seeded run whose schedule token is longer than Linux lets one argument be
// (MAX_ARG_STRLEN, 131,072 bytes with the NUL) printed a replay command that
// could not run: exec fails with "Argument list too long" (E2BIG). Such a run
// is now replayed by its seed and kernel, and the printed command reproduces
// the execution.
TEST(CliTest, ALongRunsReplayCommandFitsInOneArgument) {
  const std::vector<std::string> args = {"run", Fixture("cli_pingpong.rsq"), "--max-steps", "600000"};
  CliResult first = RunCli(args);
  ASSERT_EQ(first.code, 1) << first.err;  // it never ends: livelock (a cycle found past the budget's midpoint)
  ASSERT_GT(TokenOf(first.out).size(), 131071u);
  const size_t at = first.out.find("\nreplay:   ");
  ASSERT_NE(at, std::string::npos);
  const std::string line = first.out.substr(at + 11, first.out.find('\n', at + 1) - at - 11);
  EXPECT_LT(line.size(), 1024u);
  EXPECT_EQ(line.find("--schedule"), std::string::npos) << line;
  EXPECT_NE(line.find(" run " + Fixture("cli_pingpong.rsq") + " --seed 1 --kernel "), std::string::npos) << line;
  // The printed command, without its argv0: every word is plain (ShellQuote left it unquoted).
  std::vector<std::string> replay_args;
  std::istringstream words(line);
  for (std::string w; words >> w;) replay_args.push_back(w);
  ASSERT_GT(replay_args.size(), 1u);
  replay_args.erase(replay_args.begin());
  CliResult replay = RunCli(replay_args);
  EXPECT_EQ(replay.code, first.code) << replay.err;
  EXPECT_TRUE(TimelineOf(replay.out) == TimelineOf(first.out)) << "the seeded replay differs";
  EXPECT_TRUE(TokenOf(replay.out) == TokenOf(first.out));
}

TEST(CliTest, JsonIsOneValidObjectPerExecution) {
  for (const char* f : {"cli_counter.rsq", "cli_fail.rsq", "cli_assert.rsq"}) {
    const std::vector<std::string> args = {"run", Fixture(f), "--trace", "json"};
    CliResult r = RunCli(args);
    ASSERT_TRUE(r.code == 0 || r.code == 1) << Describe(args, r);
    ASSERT_FALSE(r.out.empty());
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line\n" << r.out;
    std::string error;
    EXPECT_TRUE(testing::IsValidJson(r.out, &error)) << error << "\n" << r.out;
    for (const char* key : {"\"scenario\":", "\"kernel\":", "\"verdict\":", "\"message\":", "\"steps\":",
                            "\"events\":", "\"symbols\":", "\"threads\":", "\"properties\":", "\"trace\":",
                            "\"schedule\":\"rsq1.", "\"seed\":", "\"replay\":"}) {
      EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
    }
  }
  CliResult assert_run = RunCli({"run", Fixture("cli_assert.rsq"), "--trace", "json"});
  EXPECT_NE(assert_run.out.find("\"verdict\":\"assert\""), std::string::npos) << assert_run.out;
  EXPECT_NE(assert_run.out.find("\\\"not\\\""), std::string::npos) << "escaped quotes\n" << assert_run.out;
}

TEST(CliTest, ListShowsEveryBuiltinScenario) {
  CliResult r = RunCli({"list"});
  EXPECT_EQ(r.code, 0) << r.err;
  if (BuiltinScenarios().empty()) {
    EXPECT_NE(r.out.find("no built-in scenarios"), std::string::npos) << r.out;
  }
  std::set<std::string> listed;  // first word of each line
  size_t lines = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line); ++lines) listed.insert(line.substr(0, line.find(' ')));
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    EXPECT_TRUE(listed.count(b.name)) << b.name << " missing from\n" << r.out;
  }
  EXPECT_EQ(lines, std::max<size_t>(1, BuiltinScenarios().size())) << r.out;
}

TEST(CliTest, RunWithoutFileRunsEveryBuiltinOnce) {
  CliResult r = RunCli({"run"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    EXPECT_NE(r.out.find("\n" + b.name + " "), std::string::npos) << b.name << " missing from\n" << r.out;
  }
  CliResult json = RunCli({"run", "--trace", "json", "--seed", "3"});
  EXPECT_EQ(json.code, 0) << json.err;
  std::istringstream lines(json.out);
  std::string line;
  size_t n = 0;
  while (std::getline(lines, line)) {
    if (BuiltinScenarios().empty()) break;
    ++n;
    std::string error;
    EXPECT_TRUE(testing::IsValidJson(line, &error)) << error << "\n" << line;
  }
  EXPECT_EQ(n, BuiltinScenarios().size());
}

TEST(CliTest, BuiltinScenariosRunByName) {
  for (const BuiltinScenario& b : BuiltinScenarios()) {
    CliResult r = RunCli({"run", b.name});
    EXPECT_TRUE(r.code == 0 || r.code == 1) << Describe({"run", b.name}, r);
    EXPECT_NE(r.out.find("verdict: "), std::string::npos) << r.out;
    CliResult by_path = RunCli({"run", b.path});  // "scenarios/x.rsq" from the source root
    EXPECT_TRUE(by_path.code == 0 || by_path.code == 1) << Describe({"run", b.path}, by_path);
  }
}

}  // namespace
}  // namespace rseqmc
