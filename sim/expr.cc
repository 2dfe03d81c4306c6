// Evaluation of final-state property expressions (sim/scenario.h Expr).
#include <limits>

#include "sim/simulator.h"

namespace rseqmc {

namespace {

struct Evaluator {
  const Scenario& s;
  const ExecutionResult& r;
  std::string error;

  const Symbol* Sym(const std::string& name) {
    const int i = s.program.FindSymbol(name);
    if (i < 0) {
      error = "unknown symbol '" + name + "'";
      return nullptr;
    }
    return &s.program.symbols[i];
  }

  int64_t Element(const Symbol& sym, int64_t cpu, int64_t index) {
    const int64_t blocks = sym.per_cpu ? s.num_cpus : 1;
    if (cpu < 0 || cpu >= blocks || index < 0 || index >= sym.count) {
      error = sym.name + "[" + (sym.per_cpu ? std::to_string(cpu) + "][" : "") + std::to_string(index) +
              "] is out of range";
      return 0;
    }
    const uint64_t a = sym.address + static_cast<uint64_t>(cpu) * sym.stride +
                       static_cast<uint64_t>(index) * static_cast<uint64_t>(sym.width);
    return static_cast<int64_t>(r.Read(a, static_cast<int>(sym.width)));
  }

  int64_t Eval(const Expr& e) {
    if (!error.empty()) return 0;
    switch (e.kind) {
      case Expr::Kind::kConst:
        return e.value;
      case Expr::Kind::kSymbol: {
        const Symbol* sym = Sym(e.name);
        return sym ? Element(*sym, 0, 0) : 0;
      }
      case Expr::Kind::kIndex: {
        const Symbol* sym = Sym(e.name);
        if (!sym) return 0;
        const int64_t a = Eval(e.args.at(0));
        if (e.args.size() == 1) {
          // sym[c] on a per-CPU scalar is CPU c's element; on an array, element c.
          return sym->per_cpu ? Element(*sym, a, 0) : Element(*sym, 0, a);
        }
        const int64_t b = Eval(e.args.at(1));
        return Element(*sym, a, b);
      }
      case Expr::Kind::kSum: {
        const Symbol* sym = Sym(e.name);
        if (!sym) return 0;
        uint64_t sum = 0;
        const uint32_t blocks = sym->per_cpu ? s.num_cpus : 1;
        for (uint32_t c = 0; c < blocks; ++c) {
          for (uint32_t i = 0; i < sym->count; ++i) sum += static_cast<uint64_t>(Element(*sym, c, i));
        }
        return static_cast<int64_t>(sum);
      }
      case Expr::Kind::kRet: {
        const int t = s.FindThread(e.name);
        if (t < 0 || static_cast<size_t>(t) >= r.threads.size()) {
          error = "unknown thread '" + e.name + "'";
          return 0;
        }
        if (!r.threads[t].exited) {
          error = "thread '" + e.name + "' did not return";
          return 0;
        }
        return r.threads[t].ret;
      }
      case Expr::Kind::kUnary: {
        const int64_t a = Eval(e.args.at(0));
        if (e.op == "-") return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
        return !a;
      }
      case Expr::Kind::kBinary: {
        const std::string& op = e.op;
        if (op == "&&") return Eval(e.args.at(0)) && Eval(e.args.at(1));
        if (op == "||") return Eval(e.args.at(0)) || Eval(e.args.at(1));
        const int64_t a = Eval(e.args.at(0));
        const int64_t b = Eval(e.args.at(1));
        const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
        if (op == "+") return static_cast<int64_t>(ua + ub);
        if (op == "-") return static_cast<int64_t>(ua - ub);
        if (op == "*") return static_cast<int64_t>(ua * ub);
        if (op == "/" || op == "%") {
          if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) {
            error = "division by zero or overflow";
            return 0;
          }
          return op == "/" ? a / b : a % b;
        }
        if (op == "==") return a == b;
        if (op == "!=") return a != b;
        if (op == "<") return a < b;
        if (op == "<=") return a <= b;
        if (op == ">") return a > b;
        if (op == ">=") return a >= b;
        error = "unknown operator '" + op + "'";
        return 0;
      }
    }
    return 0;
  }
};

}  // namespace

PropertyOutcome EvaluateProperty(const Scenario& s, const Expr& e, const ExecutionResult& r) {
  Evaluator ev{s, r, {}};
  PropertyOutcome o;
  o.value = ev.Eval(e);
  o.error = ev.error;
  o.holds = o.error.empty() && o.value != 0;
  return o;
}

}  // namespace rseqmc
