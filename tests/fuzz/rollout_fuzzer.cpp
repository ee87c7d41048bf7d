// libFuzzer target: a rollout file's bytes, as the local store reads them
// (cut into lines, torn tail dropped, decoded into a thread). A decoded
// thread is written back in parley's format and read again: the turns must
// survive the round trip (one in progress comes back interrupted).

#include <cstdint>
#include <cstdlib>
#include <string>

#include "actors/store/rollout_file.hpp"
#include "actors/store/rollout_format.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes{reinterpret_cast<const char*>(data), size};
  bool torn = false;
  auto lines = parley::store::split_rollout_lines(bytes, &torn);
  auto thread = parley::store::decode_rollout(lines, "fuzz.jsonl");
  if (!thread) return 0;
  auto again = parley::store::decode_rollout(parley::store::encode_thread(thread->meta), "again.jsonl");
  if (!again || again->meta.id != thread->meta.id
      || again->meta.turns.size() != thread->meta.turns.size())
    std::abort();
  // A turn still in progress (its action pending) is written back without
  // the action (a whole thread is written for a fork, which never copies
  // one), so it reads back as cut off: interrupted. Found by this fuzzer
  // once action records came in (corpus: regression-pending-action).
  for (size_t i = 0; i < thread->meta.turns.size(); ++i) {
    auto want = thread->meta.turns[i].status;
    if (want == parley::protocol::turn_status::in_progress)
      want = parley::protocol::turn_status::interrupted;
    if (again->meta.turns[i].status != want) std::abort();
  }
  return 0;
}
