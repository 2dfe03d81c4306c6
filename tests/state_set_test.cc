// The visited set's table (model/state_set.h, ProbeTable): exact contents,
// slot order and sizes through growth, and keys forced to collide in their
// segment and home slot.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <utility>
#include <vector>

#include "model/state_set.h"
#include "sim/state_hash.h"

namespace rseqmc {
namespace {

using Key = std::pair<uint64_t, uint64_t>;
using Table = ProbeTable<Key>;

// A first word naming segment `seg` and home slot `home` (low bits), made
// distinct by `high` (bits 48..55, which neither names).
uint64_t Word(uint64_t seg, uint64_t home, uint64_t high) { return seg << 32 | home | high << 48; }

std::vector<Key> Contents(const Table& t) {
  std::vector<Key> out;
  t.ForEach([&out](const Key& k) { out.push_back(k); });
  return out;
}

// Linear probing in table order: a key whose home slot is taken goes to the
// next free one, and ForEach walks the slots in order.
TEST(ProbeTable, ProbesLinearlyFromTheHomeSlot) {
  Table t;
  const Key a{Word(3, 5, 0x11), 1}, b{Word(3, 5, 0x22), 2}, c{Word(3, 6, 0x33), 3}, d{Word(3, 15, 0x44), 4};
  const Key e{Word(3, 15, 0x55), 5};  // wraps round to slot 0
  for (const Key& k : {a, b, c, d, e}) EXPECT_TRUE(t.Insert(k));
  EXPECT_EQ(Contents(t), (std::vector<Key>{e, a, b, c, d}));
  for (const Key& k : {a, b, c, d, e}) EXPECT_FALSE(t.Insert(k));
  EXPECT_EQ(t.size(), 5u);
  // Only segment 3 is allocated: 16 slots of 16 bytes.
  EXPECT_EQ(t.bytes(), 16u * 16);
}

// A segment doubles when a key would make it more than 3/4 full: 12 keys fit
// in 16 slots, the 13th makes 32, the 25th 64; every key is kept, in the
// order of its home slot in the larger table.
TEST(ProbeTable, GrowsAtThreeQuartersAndKeepsEveryKey) {
  Table t;
  std::vector<Key> keys;
  for (uint64_t i = 0; i < 25; ++i) keys.push_back({Word(7, 63 - i, 0x80 + i), i});
  for (size_t i = 0; i < 12; ++i) EXPECT_TRUE(t.Insert(keys[i]));
  EXPECT_EQ(t.bytes(), 16u * 16);
  EXPECT_TRUE(t.Insert(keys[12]));
  EXPECT_EQ(t.bytes(), 32u * 16);
  for (size_t i = 13; i < 24; ++i) EXPECT_TRUE(t.Insert(keys[i]));
  EXPECT_EQ(t.bytes(), 32u * 16);
  EXPECT_TRUE(t.Insert(keys[24]));
  EXPECT_EQ(t.bytes(), 64u * 16);
  EXPECT_EQ(t.size(), 25u);
  // Homes 63 - i in 64 slots: all distinct, so table order is reverse
  // insertion order.
  std::vector<Key> want(keys.rbegin(), keys.rend());
  EXPECT_EQ(Contents(t), want);
  for (const Key& k : keys) EXPECT_FALSE(t.Insert(k));
}

// Keys that agree in segment and home slot (forced collisions) are told
// apart by the whole key, through growth: keys that differ only in the
// second word, or only in bits of the first that name no slot.
TEST(ProbeTable, FullCollisionsAreToldApartByTheKey) {
  Table t;
  std::vector<Key> keys;
  for (uint64_t i = 0; i < 100; ++i) keys.push_back({Word(0, 0, 0x5a), i});
  for (const Key& k : keys) EXPECT_TRUE(t.Insert(k));
  for (const Key& k : keys) EXPECT_FALSE(t.Insert(k));
  EXPECT_EQ(t.size(), 100u);
  // 100 keys need 256 slots (192 is 3/4 of them; 128's 96 is too few).
  EXPECT_EQ(t.bytes(), 256u * 16);
  // One run of 100 slots from slot 0, in insertion order (no run wrapped
  // round the end of a smaller table, so growth kept the order).
  EXPECT_EQ(Contents(t), keys);
  EXPECT_TRUE(t.Insert({Word(0, 9, 0), 1000}));
  EXPECT_TRUE(t.Insert({Word(0, 9, 1), 1000}));
  EXPECT_FALSE(t.Insert({Word(0, 9, 0), 1000}));
  EXPECT_EQ(t.size(), 102u);
}

// Segments are independent: filling one does not grow the others.
TEST(ProbeTable, SegmentsGrowAlone) {
  Table t;
  for (uint64_t i = 0; i < 13; ++i) EXPECT_TRUE(t.Insert({Word(1, i, 1), 0}));
  EXPECT_TRUE(t.Insert({Word(2, 0, 1), 0}));
  EXPECT_EQ(t.bytes(), 32u * 16 + 16u * 16);
  EXPECT_EQ(t.size(), 14u);
  t.Clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.bytes(), 0u);
  EXPECT_TRUE(Contents(t).empty());
  EXPECT_TRUE(t.Insert({Word(1, 0, 1), 0}));
}

// Hash compaction's table: 8-byte keys in 8-byte slots.
TEST(ProbeTable, SixtyFourBitKeys) {
  ProbeTable<uint64_t> t;
  for (uint64_t i = 0; i < 12; ++i) EXPECT_TRUE(t.Insert(Word(5, i, 3) + (i << 40)));
  for (uint64_t i = 0; i < 12; ++i) EXPECT_FALSE(t.Insert(Word(5, i, 3) + (i << 40)));
  EXPECT_EQ(t.bytes(), 16u * 8);
  std::vector<uint64_t> got;
  t.ForEach([&got](uint64_t k) { got.push_back(k); });
  ASSERT_EQ(got.size(), 12u);
  for (uint64_t i = 0; i < 12; ++i) EXPECT_EQ(got[i], Word(5, i, 3) + (i << 40));
}

// Against a sorted reference over many random keys: exactly the inserted
// keys come back, and exactly the new ones were reported new.
TEST(ProbeTable, MatchesAReferenceSet) {
  Table t;
  std::vector<Key> ref;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    // Every 5th key repeats an earlier one.
    const Key k = i % 5 == 4 ? ref[static_cast<size_t>(x % ref.size())] : Key{x, x * 31};
    if (i % 5 == 4) {
      EXPECT_FALSE(t.Insert(k));
    } else {
      EXPECT_TRUE(t.Insert(k));
      ref.push_back(k);
    }
  }
  std::vector<Key> got = Contents(t);
  std::sort(got.begin(), got.end());
  std::sort(ref.begin(), ref.end());
  EXPECT_EQ(got, ref);
  EXPECT_EQ(t.size(), ref.size());
}

// The state hash's AVX2 path (taken on this CPU when it has AVX2) computes
// XXH3-128 exactly as the SSE2 path does, at every length class XXH3 treats
// differently (0-16, 17-128, 129-240 bytes, and the long path's stripes,
// blocks and tail), and on unaligned input; so stateful search visits the
// same states on any x86-64. Known value: XXH3-128 of the empty input.
TEST(StateHash, Avx2AndSse2PathsAgree) {
  EXPECT_EQ(Xxh3_128Sse2("", 0), (std::pair<uint64_t, uint64_t>{0x6001c324468d497full, 0x99aa06d3014798d8ull}));
  EXPECT_EQ(Xxh3_128("", 0), Xxh3_128Sse2("", 0));
  std::vector<uint8_t> buf(4100);
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (uint8_t& b : buf) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  for (size_t n = 0; n <= 4096; n += n < 300 ? 1 : 61) {
    for (size_t off : {size_t{0}, size_t{3}}) {
      ASSERT_EQ(Xxh3_128(buf.data() + off, n), Xxh3_128Sse2(buf.data() + off, n)) << n << " bytes at +" << off;
    }
  }
  std::printf("state hash path on this CPU: %s\n", Xxh3_128UsesAvx2() ? "AVX2" : "SSE2");
}

}  // namespace
}  // namespace rseqmc
