#include "actors/model/http/fair_gate.hpp"

#include <algorithm>

namespace parley::http {

bool fair_gate::arrive(const std::string& gate, std::size_t limit, const wait_key& key,
                       id_type id) {
  auto& g = gates_[gate];
  g.limit = limit;
  auto& p = places_[id];
  p.gate = gate;
  p.key = key;
  if (g.waiting == 0 && has_room(g)) {
    ++g.running;
    p.running = true;
    return true;
  }
  auto& t = g.by_tenant[key.tenant];
  if (t.by_thread.empty()) g.tenant_order.push_back(key.tenant);
  auto& q = t.by_thread[key.thread];
  if (q.empty()) t.thread_order.push_back(key.thread);
  q.push_back(id);
  ++g.waiting;
  return false;
}

std::vector<fair_gate::id_type> fair_gate::leave(id_type id) {
  std::vector<id_type> admitted;
  auto i = places_.find(id);
  if (i == places_.end()) return admitted;
  auto p = std::move(i->second);
  places_.erase(i);
  auto& g = gates_[p.gate];
  if (p.running)
    --g.running;
  else
    forget_waiting(g, p.key, id);
  while (g.waiting > 0 && has_room(g)) {
    auto next = pop_next(g);
    ++g.running;
    places_[next].running = true;
    admitted.push_back(next);
  }
  if (g.running == 0 && g.waiting == 0) gates_.erase(p.gate);
  return admitted;
}

// The first waiting request of the first thread of the first tenant; the
// thread and the tenant go to the back of their rounds if more of theirs wait.
fair_gate::id_type fair_gate::pop_next(gate_state& g) {
  auto tenant = g.tenant_order.front();
  g.tenant_order.pop_front();
  auto& t = g.by_tenant[tenant];
  auto thread = t.thread_order.front();
  t.thread_order.pop_front();
  auto& q = t.by_thread[thread];
  auto id = q.front();
  q.pop_front();
  --g.waiting;
  if (q.empty())
    t.by_thread.erase(thread);
  else
    t.thread_order.push_back(thread);
  if (t.by_thread.empty())
    g.by_tenant.erase(tenant);
  else
    g.tenant_order.push_back(tenant);
  return id;
}

void fair_gate::forget_waiting(gate_state& g, const wait_key& key, id_type id) {
  auto t = g.by_tenant.find(key.tenant);
  if (t == g.by_tenant.end()) return;
  auto q = t->second.by_thread.find(key.thread);
  if (q == t->second.by_thread.end()) return;
  auto& ids = q->second;
  ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
  --g.waiting;
  if (!ids.empty()) return;
  t->second.by_thread.erase(q);
  auto& order = t->second.thread_order;
  order.erase(std::remove(order.begin(), order.end(), key.thread), order.end());
  if (!t->second.by_thread.empty()) return;
  g.by_tenant.erase(t);
  g.tenant_order.erase(std::remove(g.tenant_order.begin(), g.tenant_order.end(), key.tenant),
                       g.tenant_order.end());
}

std::size_t fair_gate::running(const std::string& gate) const {
  auto i = gates_.find(gate);
  return i == gates_.end() ? 0 : i->second.running;
}

std::size_t fair_gate::waiting(const std::string& gate) const {
  auto i = gates_.find(gate);
  return i == gates_.end() ? 0 : i->second.waiting;
}

}  // namespace parley::http
