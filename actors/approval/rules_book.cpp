#include "actors/approval/rules_book.hpp"

#include "actors/core/handlers.hpp"

namespace parley::rules {

rules_book::rules_book(std::string dir)
    : dir_(std::move(dir)), current_(std::make_shared<const rule_set>(rule_set::load_dir(dir_))) {}

std::shared_ptr<const rule_set> rules_book::current() const { return std::atomic_load(&current_); }

void rules_book::amend(const std::vector<std::string>& prefix) {
  append_prefix_rule(dir_, prefix);
  std::atomic_store(&current_, std::make_shared<const rule_set>(rule_set::load_dir(dir_)));
}

}  // namespace parley::rules

namespace parley {

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

rules_actor::behavior_type rules_keeper(rules_actor::pointer self,
                                        std::shared_ptr<rules::rules_book> book) {
  install_default_handlers(self, "rules");
  return {
      [book](atom::amend, const std::vector<std::string>& prefix) {
        try {
          book->amend(prefix);
          PARLEY_INFO("rules event=amended prefix=\"{}\" file={}/default.rules",
                      joined(prefix), book->dir());
        } catch (const std::exception& e) {
          // The session grant still holds for the thread; only persistence failed.
          PARLEY_ERROR("rules event=amend_failed prefix=\"{}\" error={}", joined(prefix),
                       e.what());
        }
      },
  };
}

}  // namespace parley
