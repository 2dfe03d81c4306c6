// StateStorage: what stateful search's visited set keeps of each state
// (`rseqmc check --state-storage`); the set itself, and what each mode costs
// and risks, is model/state_set.h. A header of its own so that
// ExploreOptions (model/explorer.h) names the mode without the set.
#ifndef RSEQMC_MODEL_STATE_STORAGE_H_
#define RSEQMC_MODEL_STATE_STORAGE_H_

#include <cstdint>
#include <optional>
#include <string>

namespace rseqmc {

// What the visited set keeps of each state (model/state_set.h).
enum class StateStorage : uint8_t { kHash128, kHash64, kBitstate };
// "hash128", "hash64", "bitstate".
inline const char* StateStorageName(StateStorage m) {
  switch (m) {
    case StateStorage::kHash128: return "hash128";
    case StateStorage::kHash64: return "hash64";
    case StateStorage::kBitstate: return "bitstate";
  }
  return "hash128";
}
// The mode named by `name`, or nullopt for an unknown name.
inline std::optional<StateStorage> ParseStateStorage(const std::string& name) {
  for (StateStorage m : {StateStorage::kHash128, StateStorage::kHash64, StateStorage::kBitstate}) {
    if (name == StateStorageName(m)) return m;
  }
  return std::nullopt;
}
// kBitstate's array: 2^27 bits = 16 MiB by default, 2^10 .. 2^40 bits allowed.
inline constexpr uint32_t kDefaultBitstateLog2 = 27;
inline constexpr uint32_t kMinBitstateLog2 = 10;
inline constexpr uint32_t kMaxBitstateLog2 = 40;

}  // namespace rseqmc

#endif  // RSEQMC_MODEL_STATE_STORAGE_H_
