// See sim/state_hash.h.
#include "sim/state_hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#if defined(__x86_64__)
// sim/state_hash_avx2.cc, compiled with -mavx2.
XXH128_hash_t RseqmcXxh3_128Avx2(const void* data, size_t bytes);
#endif

namespace rseqmc {

bool Xxh3_128UsesAvx2() {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
#else
  return false;
#endif
}

std::pair<uint64_t, uint64_t> Xxh3_128Sse2(const void* data, size_t bytes) {
  const XXH128_hash_t h = XXH3_128bits(data, bytes);
  return {h.low64, h.high64};
}

MemoryHash MemoryWordTerm(uint64_t index, uint64_t value) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  const XXH128_hash_t h = XXH3_128bits_withSeed(bytes, sizeof bytes, index);
  return {h.low64, h.high64};
}

MemoryHash MemoryImageHash(const uint8_t* data, size_t bytes) {
  MemoryHash h;
  for (size_t i = 0; i * 8 < bytes; ++i) {
    uint64_t v = 0;
    const size_t n = bytes - i * 8 < 8 ? bytes - i * 8 : 8;
    for (size_t b = 0; b < n; ++b) v |= static_cast<uint64_t>(data[i * 8 + b]) << (8 * b);
    h.Add(MemoryWordTerm(i, v));
  }
  return h;
}

std::pair<uint64_t, uint64_t> Xxh3_128(const void* data, size_t bytes) {
#if defined(__x86_64__)
  if (Xxh3_128UsesAvx2()) {
    const XXH128_hash_t h = RseqmcXxh3_128Avx2(data, bytes);
    return {h.low64, h.high64};
  }
#endif
  return Xxh3_128Sse2(data, bytes);
}

}  // namespace rseqmc
