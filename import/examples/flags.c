/* The lifter's flag model against the processor: one function per
 * (flag-setting instruction, width, condition), each `OP b, a; jCC` returning
 * 1 when the branch is taken. tests/import_flags_test.cc runs every function
 * natively (this object is linked into the test) and lifted in the simulator
 * on the same inputs; the results must be equal. */
#define BR(name, type, op, cc)                                                \
  long name(type a, type b) {                                                 \
    __asm__ __volatile__ goto(op "\n\tj" cc " %l[yes]" : : "r"(a), "r"(b) : "cc" : yes);   \
    return 0;                                                                 \
  yes:                                                                        \
    return 1;                                                                 \
  }
/* `sub` writes its operand: a copy of a is the destination. */
#define SUB(name, type, sfx, reg, cc)                                         \
  long name(type a, type b) {                                                 \
    type d = a;                                                               \
    __asm__ __volatile__ goto("sub" sfx " %" reg "1, %" reg "0\n\tj" cc " %l[yes]"         \
                 : "+r"(d) : "r"(b) : "cc" : yes);                            \
    return 0;                                                                 \
  yes:                                                                        \
    return 1;                                                                 \
  }

#define ALL(cc)                                                                     \
  BR(cmpq_##cc, long, "cmpq %1, %0", #cc)                                         \
  BR(cmpl_##cc, int, "cmpl %k1, %k0", #cc)                                        \
  BR(testq_##cc, long, "testq %1, %0", #cc)                                       \
  BR(testl_##cc, int, "testl %k1, %k0", #cc)                                      \
  SUB(subq_##cc, long, "q", "", #cc)                                              \
  SUB(subl_##cc, int, "l", "k", #cc)

ALL(e)
ALL(ne)
ALL(b)
ALL(ae)
ALL(be)
ALL(a)
ALL(l)
ALL(ge)
ALL(le)
ALL(g)
ALL(s)
ALL(ns)
