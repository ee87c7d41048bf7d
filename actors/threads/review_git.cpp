#include "actors/threads/review_git.hpp"

#include <deque>
#include <functional>
#include <optional>

#include "actors/core/command_sandbox.hpp"
#include "actors/core/handlers.hpp"
#include "actors/core/log.hpp"
#include "actors/threads/process_reactor.hpp"

namespace parley {

namespace review_git_detail {

/// The most of a diff a review prompt carries (the model can run git for
/// the rest); what one git command may print before parley stops keeping it.
constexpr size_t diff_bound = 200 * 1024;
constexpr size_t kept_bound = 4 * 1024 * 1024;
constexpr auto git_timeout = std::chrono::seconds(60);

/// One git command, and what its output means once it exits 0.
struct git_step {
  std::vector<std::string> args;  // after "git"
  std::string failure;            // what a nonzero exit means, in words
  std::function<void(const std::string& out)> take;
};

struct review_git_state {
  static inline const char* name = "review_git";
  review_git_setup setup;
  runtime_services svc;
  std::deque<git_step> steps;
  review_facts facts;
  std::string out, err;
  process_id process = 0;
  std::shared_ptr<bool> reaped = std::make_shared<bool>(true);
  caf::typed_response_promise<review_facts> reply;
  bool asked = false;
  std::optional<caf::error> failed;  // ended badly before anyone asked
  bool done = false;
};

using self_ptr = review_git_actor::stateful_pointer<review_git_state>;

std::string first_line(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  auto e = s.find('\n', b);
  auto line = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

/// The paths `git status --porcelain` names (a rename's new name).
std::vector<std::string> status_files(const std::string& status) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < status.size()) {
    auto end = status.find('\n', pos);
    if (end == std::string::npos) end = status.size();
    auto line = status.substr(pos, end - pos);
    if (line.size() > 3) {
      auto path = line.substr(3);
      if (auto arrow = path.find(" -> "); arrow != std::string::npos) path = path.substr(arrow + 4);
      out.push_back(std::move(path));
    }
    pos = end + 1;
  }
  return out;
}

/// The paths a diff changes ("diff --git a/X b/Y": Y).
std::vector<std::string> diff_files(const std::string& diff) {
  std::vector<std::string> out;
  const std::string head = "diff --git ";
  size_t pos = 0;
  while ((pos = diff.find(head, pos)) != std::string::npos) {
    if (pos == 0 || diff[pos - 1] == '\n') {
      auto end = diff.find('\n', pos);
      auto line = diff.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if (auto b = line.rfind(" b/"); b != std::string::npos) out.push_back(line.substr(b + 3));
    }
    pos += head.size();
  }
  return out;
}

void add_diff(review_facts& f, const std::string& diff) {
  auto room = diff_bound > f.diff.size() ? diff_bound - f.diff.size() : 0;
  if (diff.size() > room) f.diff_cut = true;
  f.diff += diff.substr(0, room);
}

void finish(self_ptr self, std::optional<caf::error> err) {
  auto& st = self->state;
  if (st.done) return;
  st.done = true;
  if (!st.asked) {
    st.failed = err;
    return;  // answered when asked
  }
  if (err)
    st.reply.deliver(std::move(*err));
  else
    st.reply.deliver(std::move(st.facts));
  self->quit();
}

void run_next(self_ptr self) {
  auto& st = self->state;
  if (st.steps.empty()) return finish(self, std::nullopt);
  static const sandbox_settings unconfigured;
  const auto& config = *st.svc.config;
  const auto& sandbox = config.sandbox ? *config.sandbox : unconfigured;
  std::vector<std::string> program{"git", "--no-pager", "-c", "color.ui=false",
                                   "--no-optional-locks"};
  const auto& args = st.steps.front().args;
  program.insert(program.end(), args.begin(), args.end());
  auto launch = program_argv(sandbox, st.setup.sandbox, st.setup.cwd, program,
                             config.command_environment.get());
  if (auto* refused = std::get_if<launch_refusal>(&launch))
    return finish(self, make_error(errc::invalid_request,
                                   "review/start cannot run git here: " + refused->reason));
  spawn_spec spec;
  spec.argv = std::move(std::get<command_launch>(launch).argv);
  spec.cwd = st.setup.cwd;
  spec.env = config.command_environment;
  spec.separate_stderr = true;
  st.out.clear();
  st.err.clear();
  *st.reaped = false;
  st.reaped = std::make_shared<bool>(false);
  st.process = st.svc.reactor->spawn(std::move(spec), caf::actor_cast<process_sink_actor>(self));
  self->attach_functor([reactor = st.svc.reactor, reaped = st.reaped, id = st.process] {
    if (!*reaped) reactor->kill(id);
  });
  PARLEY_DEBUG("review_git event=run args=\"{}\"", args.empty() ? "" : args.front());
}

void on_exited(self_ptr self, const exit_info& info) {
  auto& st = self->state;
  *st.reaped = true;
  if (st.done || st.steps.empty()) return;
  auto step = std::move(st.steps.front());
  st.steps.pop_front();
  if (!info.not_started.empty())
    return finish(self, make_error(errc::invalid_request,
                                   "review/start could not run git: " + info.not_started));
  if (info.exit_code != 0) {
    auto said = first_line(st.err.empty() ? st.out : st.err);
    return finish(self, make_error(errc::invalid_request,
                                   "review/start: " + step.failure
                                       + (said.empty() ? std::string{} : " (git: " + said + ")")));
  }
  if (step.take) step.take(st.out);
  run_next(self);
}

/// The git commands a target needs, in order.
void plan(self_ptr self) {
  auto& st = self->state;
  auto& f = st.facts;
  const auto& t = st.setup.target;
  using kind = protocol::review_target::kind;
  auto not_repo = std::string{"the thread's cwd is not in a git repository"};
  st.steps.push_back({{"rev-parse", "--show-toplevel"}, not_repo, nullptr});
  switch (t.type) {
    case kind::uncommitted_changes:
      st.steps.push_back({{"status", "--porcelain=v1", "--untracked-files=all"},
                          "git status failed",
                          [&f](const std::string& out) {
                            f.status = out;
                            f.files = status_files(out);
                          }});
      // Staged, then unstaged (both work before the first commit).
      st.steps.push_back({{"diff", "--cached"}, "git diff --cached failed",
                          [&f](const std::string& out) { add_diff(f, out); }});
      st.steps.push_back(
          {{"diff"}, "git diff failed", [&f](const std::string& out) { add_diff(f, out); }});
      return;
    case kind::base_branch:
      st.steps.push_back(
          {{"merge-base", "HEAD", t.branch},
           "no merge base of HEAD and `" + t.branch + "` (is it a branch of this repository?)",
           [self, &f](const std::string& out) {
             f.base_sha = first_line(out);
             self->state.steps.push_back({{"diff", f.base_sha}, "git diff failed",
                                          [&f](const std::string& d) {
                                            add_diff(f, d);
                                            f.files = diff_files(f.diff);
                                          }});
           }});
      return;
    case kind::commit:
      st.steps.push_back({{"rev-parse", "--verify", "--quiet", t.sha + "^{commit}"},
                          "no commit `" + t.sha + "` in this repository",
                          [self, &f](const std::string& out) {
                            f.commit_sha = first_line(out);
                            self->state.steps.push_back(
                                {{"show", "--format=%s", "--patch", "--stat", f.commit_sha},
                                 "git show failed", [&f](const std::string& d) {
                                   f.commit_title = first_line(d);
                                   add_diff(f, d);
                                   f.files = diff_files(f.diff);
                                 }});
                          }});
      return;
    case kind::custom:
      st.steps.clear();  // nothing to read: the instructions say it all
      return;
  }
}

}  // namespace review_git_detail

namespace {

review_git_actor::behavior_type review_git(
    review_git_actor::stateful_pointer<review_git_detail::review_git_state> self,
    review_git_setup setup, runtime_services svc) {
  using namespace review_git_detail;
  install_default_handlers(self, "review_git");
  self->state.setup = std::move(setup);
  self->state.svc = std::move(svc);
  plan(self);
  run_next(self);
  self->delayed_send(self, git_timeout, atom::timeout::value);
  return {
      [self](atom::output, std::string& chunk) {
        auto& out = self->state.out;
        if (out.size() < kept_bound) out += chunk.substr(0, kept_bound - out.size());
      },
      [self](atom::err_output, std::string& chunk) {
        auto& err = self->state.err;
        if (err.size() < 65536) err += chunk.substr(0, 65536 - err.size());
      },
      [self](atom::exited, exit_info& info) { on_exited(self, info); },
      [self](atom::timeout) {
        // git took too long (a lock, a huge repository): its group is
        // killed as this actor ends.
        finish(self, make_error(errc::invalid_request,
                                "review/start: git did not answer within 60 s"));
      },
      [self](atom::get) -> caf::result<review_facts> {
        auto& st = self->state;
        st.reply = self->make_response_promise<review_facts>();
        st.asked = true;
        if (st.done) {
          st.done = false;
          finish(self, st.failed);
        }
        return st.reply;
      },
  };
}

}  // namespace

review_git_actor spawn_review_git(caf::local_actor* parent, review_git_setup setup,
                                  runtime_services svc) {
  return parent->spawn<caf::linked>(review_git, std::move(setup), std::move(svc));
}

}  // namespace parley
