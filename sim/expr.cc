// Evaluation of final-state property expressions (sim/scenario.h Expr).
#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "sim/simulator.h"

namespace rseqmc {

namespace {

CompiledExpr::Op OpOf(const std::string& op) {
  using Op = CompiledExpr::Op;
  static const std::pair<const char*, Op> kOps[] = {
      {"&&", Op::kAnd}, {"||", Op::kOr},  {"+", Op::kAdd}, {"-", Op::kSub}, {"*", Op::kMul},
      {"/", Op::kDiv},  {"%", Op::kMod},  {"==", Op::kEq}, {"!=", Op::kNe}, {"<", Op::kLt},
      {"<=", Op::kLe},  {">", Op::kGt},   {">=", Op::kGe},
  };
  for (const auto& [text, o] : kOps) {
    if (op == text) return o;
  }
  return Op::kUnknown;
}

// The binary operators that cannot fail, on their operands' values (&& and
// || as values: the caller short-circuits where an operand could fail).
// False for / and % (which can) and an unknown operator.
[[gnu::always_inline]] inline bool ApplyTotal(CompiledExpr::Op op, int64_t a, int64_t b, int64_t& v) {
  using Op = CompiledExpr::Op;
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case Op::kAnd: v = a && b; return true;
    case Op::kOr: v = a || b; return true;
    case Op::kAdd: v = static_cast<int64_t>(ua + ub); return true;
    case Op::kSub: v = static_cast<int64_t>(ua - ub); return true;
    case Op::kMul: v = static_cast<int64_t>(ua * ub); return true;
    case Op::kEq: v = a == b; return true;
    case Op::kNe: v = a != b; return true;
    case Op::kLt: v = a < b; return true;
    case Op::kLe: v = a <= b; return true;
    case Op::kGt: v = a > b; return true;
    case Op::kGe: v = a >= b; return true;
    default: return false;
  }
}

}  // namespace

CompiledExpr::CompiledExpr(const Scenario& s, const Expr& e) : s_(&s) {
  Compile(e);
  size_t depth = 0;
  if (!CompilePostfix(0, depth)) postfix_.clear();
}

bool CompiledExpr::CompilePostfix(uint32_t i, size_t& depth) {
  const Node& n = nodes_[i];
  PostfixOp p;
  p.op = n.op;
  switch (n.kind) {
    case Expr::Kind::kConst:
      p.kind = PostfixOp::Kind::kConst;
      p.value = n.value;
      break;
    case Expr::Kind::kSymbol:
    case Expr::Kind::kSum: {
      if (n.sym < 0) return false;  // Eval's "unknown symbol"
      const Symbol& sym = s_->program.symbols[n.sym];
      if (sym.count == 0) return false;  // element 0 is out of range
      p.kind = n.kind == Expr::Kind::kSymbol ? PostfixOp::Kind::kLoad : PostfixOp::Kind::kSum;
      p.width = static_cast<uint8_t>(sym.width);
      p.count = sym.count;
      p.blocks = sym.per_cpu ? s_->num_cpus : 1;
      p.stride = sym.stride;
      p.value = static_cast<int64_t>(sym.address);
      break;
    }
    case Expr::Kind::kUnary:
      if (n.num_operands < 1 || !CompilePostfix(n.operands[0], depth)) return false;
      p.kind = PostfixOp::Kind::kUnary;
      postfix_.push_back(p);
      return true;
    case Expr::Kind::kBinary:
      if (n.num_operands < 2 || n.op == Op::kUnknown || n.op == Op::kDiv || n.op == Op::kMod) return false;
      if (!CompilePostfix(n.operands[0], depth) || !CompilePostfix(n.operands[1], depth)) return false;
      p.kind = PostfixOp::Kind::kBinary;
      postfix_.push_back(p);
      --depth;
      return true;
    default:  // kIndex (range checks), kRet (the thread may not have returned)
      return false;
  }
  if (++depth > kMaxPostfixDepth) return false;
  postfix_.push_back(p);
  return true;
}

int64_t CompiledExpr::EvalPostfix(const ExecutionResult& r) const {
  // ExecutionResult::Read's semantics (0 outside memory), inline, with a
  // fixed-size copy per width (a memcpy of a variable size became a byte
  // loop: half of this function's time).
  const auto read = [&r](uint64_t a, int bytes) -> uint64_t {
    if (a < kDataBase || a - kDataBase + bytes > r.memory.size()) return 0;
    const uint8_t* const p = r.memory.data() + (a - kDataBase);
    if (bytes == 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    uint32_t v;  // Width is 8 or 4 bytes
    std::memcpy(&v, p, 4);
    return v;
  };
  int64_t stack[kMaxPostfixDepth];
  size_t top = 0;
  for (const PostfixOp& p : postfix_) {
    switch (p.kind) {
      case PostfixOp::Kind::kConst: stack[top++] = p.value; break;
      case PostfixOp::Kind::kLoad: stack[top++] = static_cast<int64_t>(read(static_cast<uint64_t>(p.value), p.width)); break;
      case PostfixOp::Kind::kSum: {
        uint64_t sum = 0;
        for (uint32_t c = 0; c < p.blocks; ++c) {
          const uint64_t base = static_cast<uint64_t>(p.value) + c * p.stride;
          for (uint32_t k = 0; k < p.count; ++k) sum += read(base + static_cast<uint64_t>(k) * p.width, p.width);
        }
        stack[top++] = static_cast<int64_t>(sum);
        break;
      }
      case PostfixOp::Kind::kUnary: {
        const int64_t a = stack[top - 1];
        stack[top - 1] = p.op == Op::kNeg ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : !a;
        break;
      }
      case PostfixOp::Kind::kBinary: {
        const int64_t b = stack[--top];
        int64_t v = 0;
        ApplyTotal(p.op, stack[top - 1], b, v);  // only total operators are compiled (CompilePostfix)
        stack[top - 1] = v;
        break;
      }
    }
  }
  return stack[0];
}

uint32_t CompiledExpr::Compile(const Expr& e) {
  const uint32_t i = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back(Node{});
  Node n;
  n.src = &e;
  n.kind = e.kind;
  n.value = e.value;
  switch (e.kind) {
    case Expr::Kind::kConst:
      break;
    case Expr::Kind::kSymbol:
    case Expr::Kind::kSum:
    case Expr::Kind::kIndex:
      n.sym = s_->program.FindSymbol(e.name);
      break;
    case Expr::Kind::kRet:
      n.thread = s_->FindThread(e.name);
      break;
    case Expr::Kind::kUnary:
      n.op = e.op == "-" ? Op::kNeg : Op::kNot;
      break;
    case Expr::Kind::kBinary:
      n.op = OpOf(e.op);
      break;
  }
  // Operands: at most the two any kind reads. A tree with fewer than its kind
  // needs fails only if evaluation reaches the missing one (Operand).
  if (e.kind == Expr::Kind::kIndex || e.kind == Expr::Kind::kUnary || e.kind == Expr::Kind::kBinary) {
    n.num_operands = static_cast<uint8_t>(std::min<size_t>(e.args.size(), 2));
    for (uint8_t k = 0; k < n.num_operands; ++k) n.operands[k] = Compile(e.args[k]);
  }
  nodes_[i] = n;
  return i;
}

uint32_t CompiledExpr::Operand(const Node& n, int k) {
  if (k >= n.num_operands) throw std::out_of_range("property expression with too few operands");
  return n.operands[k];
}

int64_t CompiledExpr::Element(const Symbol& sym, int64_t cpu, int64_t index, const ExecutionResult& r,
                              std::string& error) const {
  const int64_t blocks = sym.per_cpu ? s_->num_cpus : 1;
  if (cpu < 0 || cpu >= blocks || index < 0 || index >= sym.count) {
    error = sym.name + "[" + (sym.per_cpu ? std::to_string(cpu) + "][" : "") + std::to_string(index) +
            "] is out of range";
    return 0;
  }
  const uint64_t a = sym.address + static_cast<uint64_t>(cpu) * sym.stride +
                     static_cast<uint64_t>(index) * static_cast<uint64_t>(sym.width);
  return static_cast<int64_t>(r.Read(a, static_cast<int>(sym.width)));
}

int64_t CompiledExpr::Eval(uint32_t i, const ExecutionResult& r, std::string& error) const {
  if (!error.empty()) return 0;
  const Node& n = nodes_[i];
  switch (n.kind) {
    case Expr::Kind::kConst:
      return n.value;
    case Expr::Kind::kSymbol:
    case Expr::Kind::kIndex:
    case Expr::Kind::kSum: {
      if (n.sym < 0) {
        error = "unknown symbol '" + n.src->name + "'";
        return 0;
      }
      const Symbol& sym = s_->program.symbols[n.sym];
      if (n.kind == Expr::Kind::kSymbol) return Element(sym, 0, 0, r, error);
      if (n.kind == Expr::Kind::kIndex) {
        const int64_t a = Eval(Operand(n, 0), r, error);
        if (n.src->args.size() == 1) {
          // sym[c] on a per-CPU scalar is CPU c's element; on an array, element c.
          return sym.per_cpu ? Element(sym, a, 0, r, error) : Element(sym, 0, a, r, error);
        }
        const int64_t b = Eval(Operand(n, 1), r, error);
        return Element(sym, a, b, r, error);
      }
      uint64_t sum = 0;
      const uint32_t blocks = sym.per_cpu ? s_->num_cpus : 1;
      for (uint32_t c = 0; c < blocks; ++c) {
        for (uint32_t k = 0; k < sym.count; ++k) sum += static_cast<uint64_t>(Element(sym, c, k, r, error));
      }
      return static_cast<int64_t>(sum);
    }
    case Expr::Kind::kRet: {
      if (n.thread < 0 || static_cast<size_t>(n.thread) >= r.threads.size()) {
        error = "unknown thread '" + n.src->name + "'";
        return 0;
      }
      if (!r.threads[n.thread].exited) {
        error = "thread '" + n.src->name + "' did not return";
        return 0;
      }
      return r.threads[n.thread].ret;
    }
    case Expr::Kind::kUnary: {
      const int64_t a = Eval(Operand(n, 0), r, error);
      if (n.op == Op::kNeg) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));
      return !a;
    }
    case Expr::Kind::kBinary: {
      if (n.op == Op::kAnd) return Eval(Operand(n, 0), r, error) && Eval(Operand(n, 1), r, error);
      if (n.op == Op::kOr) return Eval(Operand(n, 0), r, error) || Eval(Operand(n, 1), r, error);
      const int64_t a = Eval(Operand(n, 0), r, error);
      const int64_t b = Eval(Operand(n, 1), r, error);
      if (n.op == Op::kDiv || n.op == Op::kMod) {
        if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) {
          error = "division by zero or overflow";
          return 0;
        }
        return n.op == Op::kDiv ? a / b : a % b;
      }
      int64_t v = 0;
      if (ApplyTotal(n.op, a, b, v)) return v;
      error = "unknown operator '" + n.src->op + "'";
      return 0;
    }
  }
  return 0;
}

PropertyOutcome CompiledExpr::Evaluate(const ExecutionResult& r) const {
  PropertyOutcome o;
  o.value = postfix_.empty() ? Eval(0, r, o.error) : EvalPostfix(r);
  o.holds = o.error.empty() && o.value != 0;
  return o;
}

PropertyOutcome CompiledExpr::EvaluateTree(const ExecutionResult& r) const {
  PropertyOutcome o;
  o.value = Eval(0, r, o.error);
  o.holds = o.error.empty() && o.value != 0;
  return o;
}

PropertyOutcome EvaluateProperty(const Scenario& s, const Expr& e, const ExecutionResult& r) {
  return CompiledExpr(s, e).Evaluate(r);
}

}  // namespace rseqmc
