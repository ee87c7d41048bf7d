#include "transport/chat.hpp"

#include <cstdio>
#include <deque>
#include <iostream>
#include <poll.h>
#include <unistd.h>

#include "protocol/approvals.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"
#include "protocol/notifications.hpp"
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

class chat_session {
 public:
  explicit chat_session(const chat_options& options)
      : options_(options), interactive_(::isatty(STDIN_FILENO) != 0), server_(options.server) {}

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
      // Input is consumed one line at a time, and only when it has a meaning
      // now: a new turn when idle, an answer while an approval is asked. So
      // piped input is deterministic: "run: x" then "a" accepts x.
      bool wants_input = !turn_active_ || (!approvals_.empty() && !options_.auto_accept);
      if (wants_input) {
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
          break;  // idle with nothing left, or an ask nobody can answer
        }
      }
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
  bool handshake() {
    send_request("initialize",
                 json{{"clientInfo", {{"name", "parley-chat"}, {"version", "0.1.0"}}},
                      {"capabilities", {{"experimentalApi", false}}}});
    auto init = wait_for_response();
    if (!init) return false;
    server_.write_line(R"({"method":"initialized"})");
    send_request("thread/start", json{{"approvalPolicy", options_.approval_policy}});
    auto started = wait_for_response();
    if (!started) return false;
    thread_id_ = (*started)["thread"]["id"].get<std::string>();
    std::cout << "[parley chat] thread " << thread_id_ << " (cwd "
              << (*started)["cwd"].get<std::string>() << ", approvals "
              << options_.approval_policy << (options_.auto_accept ? ", auto-accept" : "")
              << ")\n";
    return true;
  }

  void send_request(const char* method, const json& params) {
    server_.write_line(protocol::encode_request(protocol::request_id{next_id_++}, method, params));
  }

  std::optional<json> wait_for_response() {
    auto want = next_id_ - 1;
    while (auto line = server_.read_line(std::chrono::seconds(30))) {
      auto j = json::parse(*line, nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("id") && !j.contains("method") && j["id"] == want) {
        if (j.contains("error")) {
          std::cerr << "parley chat: " << j["error"]["message"].get<std::string>() << "\n";
          return std::nullopt;
        }
        return j["result"];
      }
      handle_server_line(*line);
    }
    std::cerr << "parley chat: no answer from the server\n";
    return std::nullopt;
  }

  void prompt() {
    if (interactive_ && !turn_active_ && approvals_.empty()) std::cout << "> " << std::flush;
  }

  void handle_input(const std::string& raw) {
    if (!approvals_.empty() && !options_.auto_accept) {
      answer_front(raw);
      return;
    }
    if (raw.find_first_not_of(" \t\r") == std::string::npos) {
      prompt();
      return;
    }
    turns_.push_back(unescape_newlines(raw));
    start_next_turn();
  }

  void start_next_turn() {
    if (turns_.empty() || turn_active_) return;
    auto text = std::move(turns_.front());
    turns_.pop_front();
    turn_active_ = true;
    send_request("turn/start",
                 json{{"threadId", thread_id_},
                      {"input", json::array({{{"type", "text"}, {"text", text}, {"text_elements", json::array()}}})}});
  }

  void ask_front() {
    if (approvals_.empty()) return;
    const auto& a = approvals_.front();
    std::cout << "[approval] run `" << a.command << "` in " << a.cwd;
    if (approvals_.size() > 1) std::cout << " (" << approvals_.size() - 1 << " more waiting)";
    if (options_.auto_accept) {
      std::cout << " -> accept (--yes)\n";
      answer_front("a");
      return;
    }
    std::cout << "\n  [a]ccept, accept for [s]ession, [d]ecline, [c]ancel turn? " << std::flush;
  }

  void answer_front(const std::string& raw) {
    auto choice = raw.empty() ? 'd' : raw[0];
    const char* decision = nullptr;
    switch (choice) {
      case 'a': case 'y': decision = "accept"; break;
      case 's': decision = "acceptForSession"; break;
      case 'd': case 'n': decision = "decline"; break;
      case 'c': decision = "cancel"; break;
      default:
        std::cout << "  please answer a, s, d or c: " << std::flush;
        return;
    }
    if (!interactive_ && !options_.auto_accept) std::cout << raw << " -> " << decision << "\n";
    auto id = approvals_.front().id;
    approvals_.pop_front();
    server_.write_line(protocol::dump_line(json{{"id", id}, {"result", {{"decision", decision}}}}));
    ask_front();
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
        auto p = protocol::decode<protocol::command_approval_params>(m->params);
        approvals_.push_back({m->id, p.command.value_or("?"), p.cwd.value_or("?")});
        ++approvals_seen_;
        if (approvals_.size() == 1) ask_front();
      }
      return;
    }
    if (m->type == kind::error_response) {
      std::cerr << "parley chat: " << m->error.message << "\n";
      turn_active_ = false;
      return;
    }
    if (m->type != kind::notification) return;
    try {
      show(protocol::decode_notification(m->method, m->params));
    } catch (const protocol::decode_error&) {
      // a notification this client does not render
    }
  }

  void show(const protocol::notification& n) {
    if (auto* d = std::get_if<protocol::agent_message_delta>(&n)) {
      std::cout << d->delta << std::flush;
    } else if (auto* o = std::get_if<protocol::command_output_delta>(&n)) {
      std::cout << o->delta << std::flush;
    } else if (auto* s = std::get_if<protocol::item_started>(&n)) {
      if (auto* a = std::get_if<protocol::agent_message_item>(&s->item)) {
        (void)a;
        std::cout << "[agent] " << std::flush;
      } else if (auto* c = std::get_if<protocol::command_execution_item>(&s->item)) {
        std::cout << "[command] " << c->command << "\n" << std::flush;
      }
    } else if (auto* c = std::get_if<protocol::item_completed>(&n)) {
      if (std::holds_alternative<protocol::agent_message_item>(c->item)) {
        std::cout << "\n";
      } else if (auto* cmd = std::get_if<protocol::command_execution_item>(&c->item)) {
        std::cout << "[command " << protocol::to_string(cmd->status);
        if (cmd->exit_code) std::cout << ", exit " << *cmd->exit_code;
        if (cmd->duration_ms) std::cout << ", " << *cmd->duration_ms << " ms";
        std::cout << "]\n";
      }
    } else if (auto* r = std::get_if<protocol::server_request_resolved>(&n)) {
      // A prompt the server closed on its own (timeout, interrupt).
      for (auto i = approvals_.begin(); i != approvals_.end(); ++i)
        if (i->id == r->request) {
          bool front = i == approvals_.begin();
          approvals_.erase(i);
          std::cout << "\n[approval resolved by the server]\n";
          if (front) ask_front();
          break;
        }
    } else if (auto* t = std::get_if<protocol::turn_completed>(&n)) {
      std::cout << "[turn " << protocol::to_string(t->turn_.status);
      if (t->turn_.duration_ms) std::cout << ", " << *t->turn_.duration_ms << " ms";
      std::cout << "]\n";
      ++turns_completed_;
      turn_active_ = false;
      if (!turns_.empty())
        start_next_turn();
      else
        prompt();
    } else if (auto* e = std::get_if<protocol::error_notification>(&n)) {
      std::cout << "[error] " << e->error.message << "\n";
    }
  }

  struct pending_approval {
    protocol::request_id id;
    std::string command;
    std::string cwd;
  };

  chat_options options_;
  bool interactive_;
  child_process server_;
  int64_t next_id_ = 1;
  std::string thread_id_;
  bool turn_active_ = false;
  std::deque<std::string> turns_;
  std::deque<pending_approval> approvals_;
  int turns_completed_ = 0;
  int approvals_seen_ = 0;
};

}  // namespace

int run_chat(const chat_options& options) {
  try {
    chat_session session{options};
    return session.run();
  } catch (const std::exception& e) {
    std::cerr << "parley chat: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace parley
