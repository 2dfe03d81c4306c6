// The two hashes Machine::StateHash is made of:
//   * MemoryHash, of data memory: a sum of per-word terms that the machine
//     keeps up to date store by store (below), so that a state's hash does
//     not read all of memory;
//   * Xxh3_128: XXH3-128 (xxHash) of a buffer, over memory's MemoryHash and
//     the rest of the state (threads, run queues, events, observations),
//     with AVX2 where the CPU has it. Both paths compute the same function
//     (XXH3's result does not depend on the vector width;
//     tests/state_set_test.cc checks it), so the same state hashes, visited
//     sets and golden counts come out on any x86-64. AVX2 halved the time
//     of a whole state's 700-800 bytes (38 vs 71 ns, measured before memory
//     had its own kept hash; the buffer is now the few hundred bytes of the
//     rest).
#ifndef RSEQMC_SIM_STATE_HASH_H_
#define RSEQMC_SIM_STATE_HASH_H_

#include <cstddef>
#include <cstdint>
#include <utility>

namespace rseqmc {

// The hash of a data-memory image that Machine::StateHash combines with the
// rest of the state: H(mem) = sum over the image's 8-byte words i (offsets
// 8i from its start, the last word zero-padded) of G(i, w_i), modulo 2^128,
// where G(i, v) is XXH3-128 of v's 8 little-endian bytes with seed i. A sum
// of per-word terms ("incremental hashing", Bellare, Goldreich, Goldwasser,
// CRYPTO 1994; Zobrist hashing in game-tree search) changes by
// G(i, new) - G(i, old) when word i is stored to, so the machine keeps it
// up to date store by store (Machine::Store) and a state's hash costs the
// small rest of the state instead of all of memory (issue 14/18: at
// percpu_list PER=64 memory is several KB, the rest a few hundred bytes).
// Two distinct images collide with probability about 2^-128 when G behaves
// as a random function, as the 128-bit hash of the whole image did.
struct MemoryHash {
  uint64_t lo = 0, hi = 0;
  friend bool operator==(const MemoryHash&, const MemoryHash&) = default;
  // *this += t and *this -= t, modulo 2^128.
  void Add(const MemoryHash& t) {
    lo += t.lo;
    hi += t.hi + (lo < t.lo ? 1 : 0);
  }
  void Sub(const MemoryHash& t) {
    const uint64_t borrow = lo < t.lo ? 1 : 0;
    lo -= t.lo;
    hi -= t.hi + borrow;
  }
};
// G(index, value): the term of word `index` holding `value`.
MemoryHash MemoryWordTerm(uint64_t index, uint64_t value);
// H of the `bytes` bytes at `data`, from scratch (the sum of every word's term).
MemoryHash MemoryImageHash(const uint8_t* data, size_t bytes);

// {low64, high64} of XXH3-128 of the `bytes` bytes at `data` (seed 0).
std::pair<uint64_t, uint64_t> Xxh3_128(const void* data, size_t bytes);
// The same, always through the SSE2 code (for tests).
std::pair<uint64_t, uint64_t> Xxh3_128Sse2(const void* data, size_t bytes);
// True if Xxh3_128 takes the AVX2 code on this CPU.
bool Xxh3_128UsesAvx2();

}  // namespace rseqmc

#endif  // RSEQMC_SIM_STATE_HASH_H_
