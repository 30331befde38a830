#include "sim/prefix_cache.h"

#include "sim/engine.h"

namespace sb::sim {

std::vector<std::uint64_t> BlockKeys(std::span<const std::int64_t> ids, int block_tokens) {
  std::vector<std::uint64_t> keys;
  const auto block = static_cast<std::size_t>(block_tokens);
  std::uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (std::size_t start = 0; start + block <= ids.size(); start += block) {
    for (std::size_t i = start; i < start + block; ++i) {
      h = Mix64(h ^ static_cast<std::uint64_t>(ids[i]));
    }
    keys.push_back(h);
  }
  return keys;
}

std::size_t PrefixCache::LookupAndInsert(std::span<const std::uint64_t> keys) {
  if (capacity_ == 0) {
    return 0;
  }
  std::size_t hits = 0;
  while (hits < keys.size() && index_.contains(keys[hits])) {
    ++hits;
  }
  for (const std::uint64_t key : keys) {
    if (const auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      continue;
    }
    lru_.push_front(key);
    index_.emplace(key, lru_.begin());
    if (lru_.size() > capacity_) {
      index_.erase(lru_.back());
      lru_.pop_back();
    }
  }
  return hits;
}

}  // namespace sb::sim
