// Command-line parsing shared by the rseqmc subcommands (Boost.Program_options):
// options must be spelled out (no guessing from a prefix), and every parse
// error becomes a cli::UsageError (exit code 2).
#ifndef RSEQMC_TOOLS_RSEQMC_OPTIONS_H_
#define RSEQMC_TOOLS_RSEQMC_OPTIONS_H_

#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "tools/rseqmc/cli_util.h"

namespace rseqmc::cli {

// Parses `args` against `all` (positional arguments per `positional`).
inline boost::program_options::variables_map ParseOptions(
    const std::vector<std::string>& args, const boost::program_options::options_description& all,
    const boost::program_options::positional_options_description& positional) {
  namespace po = boost::program_options;
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args)
                  .options(all)
                  .positional(positional)
                  .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

}  // namespace rseqmc::cli

#endif  // RSEQMC_TOOLS_RSEQMC_OPTIONS_H_
