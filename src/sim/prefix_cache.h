// The simulator's prefix cache (`servebench sim --prefix-cache-tokens N --block-tokens B`), the
// ground truth that servebench's cached-prefill figures are checked against. Modelled on vLLM's
// automatic prefix caching: the prompt's token ids (chat template included) are cut into full
// blocks of B tokens; block k is keyed by a hash chained over blocks 0..k, so a block hits only
// when the whole prefix up to it was seen. A request's cached tokens are its leading blocks that
// hit, times B (a partial last block is never cached). Every full block of a request is then
// stored; the least recently used blocks are evicted beyond N / B blocks.
// Thread safety: none; the simulator's event-loop thread owns it.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace sb::sim {

// The chained keys of the full blocks of `ids`: key k hashes blocks 0..k. REQUIRES: block >= 1.
std::vector<std::uint64_t> BlockKeys(std::span<const std::int64_t> ids, int block_tokens);

class PrefixCache {
 public:
  // capacity_blocks == 0: every lookup misses and nothing is stored.
  explicit PrefixCache(std::size_t capacity_blocks) : capacity_(capacity_blocks) {}

  // How many leading keys are cached (each hit becomes most recently used); then stores every
  // key of the request as most recently used, evicting the least recently used beyond capacity.
  std::size_t LookupAndInsert(std::span<const std::uint64_t> keys);

  std::size_t size() const { return lru_.size(); }

 private:
  std::size_t capacity_;
  std::list<std::uint64_t> lru_;  // front = most recently used
  std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> index_;
};

}  // namespace sb::sim
