#include "bench/mock_model/connection_threads.hpp"

#include <system_error>
#include <thread>

namespace parley::mock_model {

void connection_threads::enqueue(std::function<void()> fn) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  if (!state_->queue_connections)
    state_->idle.wait(lock, [this] { return state_->running < state_->max_threads; });
  if (state_->running >= state_->max_threads) {
    state_->waiting.push_back(std::move(fn));
    return;
  }
  ++state_->running;
  lock.unlock();
  try {
    // Detached: the thread holds the shared state, so it may outlive this queue safely.
    std::thread(serve, state_, fn).detach();
  } catch (const std::system_error&) {
    // Out of threads: the connection waits for a running one to finish.
    lock.lock();
    --state_->running;
    state_->waiting.push_back(std::move(fn));
  }
}

void connection_threads::serve(std::shared_ptr<load> state, std::function<void()> fn) {
  for (;;) {
    fn();
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->waiting.empty()) {
      --state->running;
      state->idle.notify_all();
      return;
    }
    fn = std::move(state->waiting.front());
    state->waiting.pop_front();
  }
}

void connection_threads::shutdown() {
  // Idle keep-alive connections would hold this for their whole timeout: give streams a
  // moment to end, then let the process exit over the rest (main never destroys the server).
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->idle.wait_for(lock, shutdown_grace,
                        [this] { return state_->running == 0 && state_->waiting.empty(); });
}

std::size_t connection_threads::running(load& state) {
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.running;
}

}  // namespace parley::mock_model
