// XXH3-128 compiled with -mavx2 (sim/CMakeLists.txt), called by Xxh3_128
// (sim/state_hash.cc) only when the CPU has AVX2. Nothing but xxhash.h here,
// whose functions XXH_INLINE_ALL makes static: an inline function of another
// header used here would be compiled with AVX2, and the linker could keep
// that copy for the whole program and fault on a CPU without AVX2.
#define XXH_INLINE_ALL
#include <xxhash.h>

XXH128_hash_t RseqmcXxh3_128Avx2(const void* data, size_t bytes);

XXH128_hash_t RseqmcXxh3_128Avx2(const void* data, size_t bytes) { return XXH3_128bits(data, bytes); }
