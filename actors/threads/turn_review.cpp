// A review turn (review/start): the enteredReviewMode item, the target read
// with git (confined, through the process reactor), the model's review with
// its own instructions and nothing of the thread's history, then the
// exitedReviewMode item and the review as the turn's message.

#include "actors/core/log.hpp"
#include "actors/threads/review_git.hpp"
#include "actors/threads/review_prompt.hpp"
#include "actors/threads/turn_detail.hpp"
#include "protocol/ids.hpp"

namespace parley::turn_detail {

namespace {

/// git answers within its own 60 s; this only bounds a probe that died.
constexpr auto git_answer_timeout = std::chrono::seconds(90);

/// The target read: the model is asked to review it.
void ask_reviewer(self_ptr self, const review_facts& facts) {
  auto& st = self->state;
  const auto& target = *st.settings.review;
  st.context.user_text = review::prompt(target, facts);
  st.context.review_instructions = review::instructions();
  if (target.type == protocol::review_target::kind::custom)
    st.context.review_script = target.instructions;
  st.context.review_files = facts.files;
  PARLEY_INFO("turn {} event=review_started files={} diff_bytes={}", st.settings.turn_id,
              facts.files.size(), facts.diff.size());
  next_step(self);
}

}  // namespace

void start_review(self_ptr self) {
  auto& st = self->state;
  const auto& target = *st.settings.review;
  protocol::entered_review_mode_item entered{protocol::new_uuid_v7(), review::hint(target),
                                             nlohmann::json(target)};
  item_started(self, entered, protocol::unix_ms());
  item_completed(self, std::move(entered));
  if (target.type == protocol::review_target::kind::custom) return ask_reviewer(self, {});
  auto git = spawn_review_git(self, review_git_setup{target, st.settings.cwd, st.settings.sandbox},
                              st.svc);
  self->request(git, git_answer_timeout, atom::get::value)
      .then([self](review_facts& facts) { ask_reviewer(self, facts); },
            // What git could not tell ends the review, saying why.
            [self](caf::error& err) {
              auto& s = self->state.settings;
              protocol::turn_error e;
              e.message = message_of(err);
              e.codex_error_info = "other";
              PARLEY_INFO("turn {} event=review_refused reason=\"{}\"", s.turn_id, e.message);
              emit(self, protocol::error_notification{s.thread_id, s.turn_id, e, false});
              finish(self, turn_result{protocol::turn_status::failed, e, std::nullopt, std::nullopt});
              self->quit();
            });
}

void end_review(self_ptr self) {
  auto& st = self->state;
  auto answer = st.review_answer.find_first_not_of(" \t\r\n") == std::string::npos
                    ? std::string{"The reviewer gave no answer."}
                    : st.review_answer;
  auto verdict = protocol::read_review_answer(answer);
  auto now = protocol::unix_ms();
  protocol::exited_review_mode_item exited{protocol::new_uuid_v7(), verdict.text, verdict.output};
  item_started(self, exited, now);
  item_completed(self, std::move(exited));
  protocol::agent_message_item said;
  said.id = "msg_" + protocol::new_uuid_v7();
  said.text = verdict.text;
  item_started(self, said, now);
  item_completed(self, std::move(said));
  PARLEY_INFO("turn {} event=review_done findings={}", st.settings.turn_id,
              verdict.output["findings"].size());
  end_turn(self, protocol::turn_status::completed);
}

}  // namespace parley::turn_detail
