#include "transport/chat/chat.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <poll.h>
#include <unistd.h>

#include "protocol/approvals.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"
#include "protocol/notifications.hpp"
#include "transport/chat/approval_queue.hpp"
#include "transport/chat/chat_render.hpp"
#include "transport/chat/visible_text.hpp"
#include "transport/child_process.hpp"

namespace parley {

namespace {

using protocol::json;

/// "\n" typed inside a line separates directives of one turn.
std::string unescape_newlines(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == 'n') {
      out += '\n';
      ++i;
    } else {
      out += line[i];
    }
  }
  return out;
}

/// Escapes are marked in reverse video when stdout is a terminal that takes
/// colours (NO_COLOR, https://no-color.org, turns that off).
escape_style terminal_escape_style() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  bool colours = ::isatty(STDOUT_FILENO) != 0 && (no_color == nullptr || *no_color == '\0')
                 && (term == nullptr || std::strcmp(term, "dumb") != 0);
  return colours ? escape_style::highlighted : escape_style::plain;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

class chat_session {
 public:
  explicit chat_session(const chat_options& options)
      : options_(options),
        interactive_(::isatty(STDIN_FILENO) != 0),
        style_(terminal_escape_style()),
        server_(options.server) {}

  int run() {
    if (!handshake()) return 1;
    prompt();
    bool input_open = true;
    std::string input_buffer;
    for (;;) {
      if (server_.has_buffered_line()) {
        handle_server_line(*server_.read_line(std::chrono::milliseconds(0)));
        continue;
      }
      bool wants_input = wants_input_now();
      if (wants_input) {
        show_current_approval();
        if (auto pos = input_buffer.find('\n'); pos != std::string::npos) {
          auto line = input_buffer.substr(0, pos);
          input_buffer.erase(0, pos + 1);
          handle_input(line);
          continue;
        }
        if (!input_open) {
          if (!input_buffer.empty()) {
            handle_input(input_buffer);
            input_buffer.clear();
            continue;
          }
          break;  // idle with nothing left, or asks nobody can answer
        }
      }
      // Whatever was printed is shown before waiting, also when stdout is a
      // pipe (a script reading the chat waits on it).
      std::cout.flush();
      pollfd fds[2] = {{server_.stdout_fd(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
      int rc = ::poll(fds, wants_input && input_open ? 2 : 1, -1);
      if (rc <= 0) continue;
      if (fds[0].revents != 0) {
        server_.pump();
        if (!server_.has_buffered_line() && server_.eof()) {
          std::cerr << "parley chat: the server exited\n";
          return 1;
        }
      }
      if (wants_input && input_open && fds[1].revents != 0) {
        char chunk[4096];
        auto n = ::read(STDIN_FILENO, chunk, sizeof chunk);
        if (n <= 0)
          input_open = false;
        else
          input_buffer.append(chunk, static_cast<size_t>(n));
      }
    }
    // Nobody is left to answer: what is still asked is declined (fail
    // closed), and so is anything asked from now on.
    closing_ = true;
    auto unanswered = queue_.abort_all();
    for (auto& id : unanswered) reply(id, "decline");
    if (!unanswered.empty())
      std::cout << "[approval] end of input: declined " << unanswered.size()
                << " pending approval(s)\n";
    print_stats();
    // Closing the server's input ends it in order: whatever is still pending
    // resolves as cancelled, and it exits.
    server_.close_stdin();
    while (auto line = server_.read_line(std::chrono::seconds(30))) handle_server_line(*line);
    int code = server_.wait();
    std::cout << "[parley chat] done: " << turns_completed_ << " turn(s), " << approvals_seen_
              << " approval(s)\n";
    return code;
  }

 private:
  struct thread_state {
    bool turn_active = false;
    std::deque<std::string> turns;  // texts waiting for the active turn to end
  };

  bool handshake() {
    send_request("initialize",
                 json{{"clientInfo", {{"name", "parley-chat"}, {"version", "0.1.0"}}},
                      {"capabilities", {{"experimentalApi", false}}}});
    auto init = wait_for_response();
    if (!init) return false;
    server_.write_line(R"({"method":"initialized"})");
    return start_thread();
  }

  /// Starts a thread and makes it the one following input lines go to.
  bool start_thread() {
    send_request("thread/start", json{{"approvalPolicy", options_.approval_policy}});
    auto started = wait_for_response();
    if (!started) return false;
    current_ = (*started)["thread"]["id"].get<std::string>();
    threads_[current_];
    std::cout << "[parley chat] thread " << shown(current_) << " (cwd "
              << shown((*started)["cwd"].get<std::string>()) << ", approvals "
              << options_.approval_policy << (options_.auto_accept ? ", auto-accept" : "")
              << ")\n";
    return true;
  }

  void send_request(const char* method, const json& params) {
    server_.write_line(protocol::encode_request(protocol::request_id{next_id_++}, method, params));
  }

  void reply(const protocol::request_id& id, const char* decision) {
    server_.write_line(protocol::dump_line(json{{"id", id}, {"result", {{"decision", decision}}}}));
  }

  std::optional<json> wait_for_response() {
    auto want = next_id_ - 1;
    while (auto line = server_.read_line(std::chrono::seconds(30))) {
      auto j = json::parse(*line, nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("id") && !j.contains("method") && j["id"] == want) {
        if (j.contains("error")) {
          std::cerr << "parley chat: "
                    << visible_text(j["error"].value("message", std::string{}), text_layout::lines)
                    << "\n";
          return std::nullopt;
        }
        return j["result"];
      }
      handle_server_line(*line);
    }
    std::cerr << "parley chat: no answer from the server\n";
    return std::nullopt;
  }

  /// Whether an input line has a meaning now. Piped input is consumed only
  /// when every active turn waits on an answer (or none is active), so a
  /// script is deterministic: "run: x" then "y" accepts x, and a turn of
  /// another thread asks its approval before the next line is read. At a
  /// terminal a person answers as soon as something is asked.
  bool wants_input_now() const {
    if (interactive_) return (!queue_.empty() && !options_.auto_accept) || !current_busy();
    for (const auto& [id, t] : threads_)
      if (t.turn_active && !queue_.has_thread(id)) return false;
    return true;
  }

  bool current_busy() const {
    auto it = threads_.find(current_);
    return it != threads_.end() && it->second.turn_active;
  }

  void prompt() {
    if (interactive_ && !current_busy() && queue_.empty()) std::cout << "> " << std::flush;
  }

  void handle_input(const std::string& raw) {
    auto line = trim(raw);
    if (!line.empty() && line[0] == '/') {
      run_command(line);
      return;
    }
    if (!queue_.empty()) {
      answer(line);
      return;
    }
    if (line.empty()) {
      prompt();
      return;
    }
    threads_[current_].turns.push_back(unescape_newlines(raw));
    start_next_turn(current_);
  }

  /// Lines starting with '/' are the chat's own commands, also while an
  /// approval is asked (so a script can start a second thread meanwhile).
  void run_command(const std::string& line) {
    // Piped input is not echoed: show the command under the question it
    // interrupts, as answers are.
    if (!interactive_ && !queue_.empty() && !options_.auto_accept) std::cout << line << "\n";
    auto space = line.find(' ');
    auto name = line.substr(0, space);
    auto rest = space == std::string::npos ? std::string{} : trim(line.substr(space + 1));
    if (name == "/stats") {
      print_stats();
    } else if (name == "/new") {
      if (!start_thread()) return;
      if (!rest.empty()) {
        threads_[current_].turns.push_back(unescape_newlines(rest));
        start_next_turn(current_);
      }
    } else {
      std::cout << "[parley chat] unknown command " << name
                << " (/new [TEXT] starts a thread, /stats shows approval counters)\n";
    }
    last_shown_.reset();  // the output moved on: show the question again
    prompt();
  }

  void start_next_turn(const std::string& thread) {
    auto& t = threads_[thread];
    if (t.turns.empty() || t.turn_active) return;
    auto text = std::move(t.turns.front());
    t.turns.pop_front();
    t.turn_active = true;
    turn_requests_[next_id_] = thread;
    send_request("turn/start",
                 json{{"threadId", thread},
                      {"input", json::array({{{"type", "text"}, {"text", text}, {"text_elements", json::array()}}})}});
  }

  void print_stats() {
    send_request("parley/stats", json::object());
    if (auto result = wait_for_response()) std::cout << chat_render::stats(*result) << std::flush;
  }

  /// Shows the current approval once per (request, queue length): when a
  /// request of another thread queues behind it, the position changes.
  void show_current_approval() {
    const auto* q = queue_.current();
    if (q == nullptr || options_.auto_accept) return;
    auto key = std::make_pair(q->id, queue_.size());
    if (last_shown_ == key) return;
    last_shown_ = key;
    std::cout << chat_render::approval(*q, 1, queue_.size(), style_) << chat_render::choices()
              << std::flush;
  }

  void answer(const std::string& line) {
    const char* decision = nullptr;
    switch (line.size() == 1 ? line[0] : '\0') {
      case 'y': decision = "accept"; break;
      case 's': decision = "acceptForSession"; break;
      case 'n': decision = "decline"; break;
      case 'c': decision = "cancel"; break;
      case 'a': decision = "cancel"; break;  // for every pending request, below
      default:
        std::cout << "  please answer y, s, n, c or a: " << std::flush;
        return;
    }
    bool all = line[0] == 'a';
    if (!interactive_) std::cout << line << " -> " << (all ? "abort all" : decision) << "\n";
    last_shown_.reset();
    if (all) {
      auto ids = queue_.abort_all();
      for (auto& id : ids) reply(id, decision);
      std::cout << "[approval] aborted " << ids.size() << " pending approval(s)\n";
    } else if (auto q = queue_.advance()) {
      reply(q->id, decision);
    }
  }

  void enqueue(const protocol::incoming_message& m, json context) {
    if (!queue_.enqueue(m.id, m.method, m.params, std::move(context))) return;
    ++approvals_seen_;
    if (closing_) {
      queue_.resolve(m.id);
      reply(m.id, "decline");
      return;
    }
    if (options_.auto_accept) {
      auto q = queue_.advance();
      std::cout << chat_render::approval(*q, 1, 1, style_) << "  -> accept (--yes)\n" << std::flush;
      reply(q->id, "accept");
    }
  }

  void handle_server_line(const std::string& line) {
    auto parsed = protocol::parse_message(line);
    auto* m = std::get_if<protocol::incoming_message>(&parsed);
    if (!m) {
      std::cerr << "parley chat: unreadable line from the server\n";
      return;
    }
    using kind = protocol::incoming_message::kind;
    if (m->type == kind::request) {
      if (m->method == protocol::command_approval_method) {
        enqueue(*m, nullptr);
      } else if (m->method == protocol::file_change_approval_method) {
        // The diff was in the item/started of the same item.
        json changes;
        auto item = m->params.value("itemId", std::string{});
        if (auto it = file_changes_.find(item); it != file_changes_.end()) changes = it->second;
        enqueue(*m, std::move(changes));
      }
      return;
    }
    if (m->type == kind::error_response) {
      std::cerr << "parley chat: " << visible_text(m->error.message, text_layout::lines) << "\n";
      if (auto* n = std::get_if<int64_t>(&m->id.value))
        if (auto it = turn_requests_.find(*n); it != turn_requests_.end()) {
          threads_[it->second].turn_active = false;  // the turn never started
          turn_requests_.erase(it);
        }
      return;
    }
    if (m->type == kind::response) {
      if (auto* n = std::get_if<int64_t>(&m->id.value)) turn_requests_.erase(*n);
      return;
    }
    if (m->type != kind::notification) return;
    try {
      show(protocol::decode_notification(m->method, m->params));
    } catch (const protocol::decode_error&) {
      // a notification this client does not render
    }
  }

  /// What the server or the model sent, as it may be printed (see
  /// visible_text.hpp): every such text goes through here or through
  /// chat_render, which does the same.
  std::string shown(const std::string& text, text_layout layout = text_layout::one_line) const {
    return visible_text(text, layout, style_);
  }

  void show(const protocol::notification& n) {
    if (auto* d = std::get_if<protocol::agent_message_delta>(&n)) {
      std::cout << shown(d->delta, text_layout::lines) << std::flush;
    } else if (auto* o = std::get_if<protocol::command_output_delta>(&n)) {
      std::cout << shown(o->delta, text_layout::lines) << std::flush;
    } else if (auto* s = std::get_if<protocol::item_started>(&n)) {
      if (std::holds_alternative<protocol::agent_message_item>(s->item)) {
        std::cout << "[agent] " << std::flush;
      } else if (auto* c = std::get_if<protocol::command_execution_item>(&s->item)) {
        std::cout << "[command] " << shown(c->command) << "\n" << std::flush;
      } else if (auto* f = std::get_if<protocol::file_change_item>(&s->item)) {
        // Remembered for the approval that follows: it carries no diff.
        file_changes_[f->id] = json(f->changes);
        std::cout << "[file change] " << f->changes.size() << " file(s)\n" << std::flush;
      }
    } else if (auto* c = std::get_if<protocol::item_completed>(&n)) {
      if (std::holds_alternative<protocol::agent_message_item>(c->item)) {
        std::cout << "\n";
      } else if (auto* cmd = std::get_if<protocol::command_execution_item>(&c->item)) {
        std::cout << "[command " << protocol::to_string(cmd->status);
        if (cmd->exit_code) std::cout << ", exit " << *cmd->exit_code;
        if (cmd->duration_ms) std::cout << ", " << *cmd->duration_ms << " ms";
        std::cout << "]\n";
      } else if (auto* f = std::get_if<protocol::file_change_item>(&c->item)) {
        file_changes_.erase(f->id);
        std::cout << "[file change " << protocol::to_string(f->status) << "]\n";
      }
    } else if (auto* r = std::get_if<protocol::server_request_resolved>(&n)) {
      // Our own answers were already taken off the queue; what is still in
      // it was closed by the server (timeout, interrupt): drop its prompt.
      if (queue_.resolve(r->request)) {
        std::cout << "\n[approval resolved by the server] thread " << shown(r->thread_id) << "\n";
        last_shown_.reset();
      }
    } else if (auto* t = std::get_if<protocol::turn_completed>(&n)) {
      std::cout << "[turn " << protocol::to_string(t->turn_.status);
      if (t->turn_.duration_ms) std::cout << ", " << *t->turn_.duration_ms << " ms";
      std::cout << "]\n";
      ++turns_completed_;
      auto& state = threads_[t->thread_id];
      state.turn_active = false;
      if (!state.turns.empty())
        start_next_turn(t->thread_id);
      else
        prompt();
    } else if (auto* e = std::get_if<protocol::error_notification>(&n)) {
      std::cout << "[error] " << shown(e->error.message, text_layout::lines) << "\n";
    }
  }

  chat_options options_;
  bool interactive_;
  escape_style style_;
  child_process server_;
  int64_t next_id_ = 1;
  std::map<std::string, thread_state> threads_;
  std::string current_;                             // where the next turn goes
  std::map<int64_t, std::string> turn_requests_;    // turn/start id -> thread
  std::map<std::string, json> file_changes_;        // fileChange itemId -> changes
  approval_queue queue_;
  std::optional<std::pair<protocol::request_id, size_t>> last_shown_;
  bool closing_ = false;
  int turns_completed_ = 0;
  int approvals_seen_ = 0;
};

}  // namespace

int run_chat(const chat_options& options) {
  try {
    chat_session session{options};
    return session.run();
  } catch (const std::exception& e) {
    std::cerr << "parley chat: " << visible_text(e.what(), text_layout::lines) << "\n";
    return 1;
  }
}

}  // namespace parley
