/* Bad input for the importer's tests: `neg` is outside the supported subset,
 * so importing `negate` must fail with the address and the instruction. */
long negate(long x) {
  __asm__("negq %0" : "+r"(x));
  return x;
}
