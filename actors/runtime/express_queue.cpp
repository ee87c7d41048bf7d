#include "actors/runtime/express_queue.hpp"

namespace parley {

namespace {
thread_local bool this_thread_express = false;
}  // namespace

void enqueue_express_from_this_thread(bool express) { this_thread_express = express; }

bool enqueues_express() noexcept { return this_thread_express; }

}  // namespace parley
