// The rule book per tenant (issue 22): an amendment of a tenant's holds for
// its threads alone; the default tenant's (and the host's files) hold for all;
// a new book reads every tenant's back from disk.

#include "actors/approval/rules_book.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace parley::rules {
namespace {

namespace fs = std::filesystem;

bool allows(const std::shared_ptr<const rule_set>& set, std::vector<std::string> argv) {
  auto m = set->check_command(argv);
  return m && m->verdict == decision::allow;
}

TEST(RulesBook, a_tenants_amendment_holds_for_its_threads_alone) {
  auto dir = fs::temp_directory_path() / ("parley-rules-book-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    rules_book book{dir.string()};
    book.amend({"make", "deploy"}, "acme");
    EXPECT_TRUE(allows(book.current("acme"), {"make", "deploy", "prod"}));
    EXPECT_FALSE(allows(book.current("globex"), {"make", "deploy", "prod"}));
    EXPECT_FALSE(allows(book.current(), {"make", "deploy", "prod"}));
    // The default tenant's goes where Codex keeps it, for every tenant.
    book.amend({"ls"}, "default");
    EXPECT_TRUE(fs::exists(dir / "default.rules"));
    EXPECT_TRUE(allows(book.current("globex"), {"ls", "-l"}));
    EXPECT_TRUE(allows(book.current("acme"), {"ls", "-l"}));
    EXPECT_TRUE(allows(book.current("acme"), {"make", "deploy"})) << "kept past a shared change";
    // A tenant's name never leaves its directory.
    book.amend({"rm"}, "../escape");
    EXPECT_FALSE(fs::exists(dir / "escape"));
    EXPECT_FALSE(allows(book.current(), {"rm"}));
    EXPECT_TRUE(allows(book.current("../escape"), {"rm"}));
  }
  rules_book again{dir.string()};
  EXPECT_TRUE(allows(again.current("acme"), {"make", "deploy"}));
  EXPECT_FALSE(allows(again.current("globex"), {"make", "deploy"}));
  EXPECT_TRUE(allows(again.current("../escape"), {"rm"}));
  fs::remove_all(dir);
}

// A folder under rules/tenants an operator made by hand, with a stray '%',
// is a tenant of that name; it never stops the book from opening.
TEST(RulesBook, a_hand_made_tenant_folder_with_a_stray_percent_is_read_as_named) {
  auto dir = fs::temp_directory_path() / ("parley-rules-pct-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "tenants" / "a%zz");
  std::unique_ptr<rules_book> book;
  ASSERT_NO_THROW(book = std::make_unique<rules_book>(dir.string()));
  book->amend({"make"}, "a%zz");
  EXPECT_TRUE(allows(book->current("a%zz"), {"make"}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parley::rules
