#include "actors/approval/rules_book.hpp"

#include <cctype>
#include <filesystem>
#include <system_error>

#include "actors/core/handlers.hpp"
#include "actors/core/tenant.hpp"

namespace parley::rules {

namespace {

namespace fs = std::filesystem;

/// A tenant's name as one path component: letters, digits, '.', '_' and '-'
/// as they are; anything else (a '/', a "..") as %XX.
std::string component_of(const std::string& tenant) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : tenant) {
    bool plain = std::isalnum(c) || c == '_' || c == '-' || (c == '.' && !out.empty());
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string tenant_of_component(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    // Only what component_of wrote is decoded: a folder named by hand with a
    // stray '%' keeps it (std::stoi would throw at start).
    if (name[i] == '%' && i + 2 < name.size()
        && std::isxdigit(static_cast<unsigned char>(name[i + 1]))
        && std::isxdigit(static_cast<unsigned char>(name[i + 2]))) {
      out += static_cast<char>(std::stoi(name.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += name[i];
    }
  }
  return out;
}

}  // namespace

rules_book::rules_book(std::string dir)
    : dir_(std::move(dir)), shared_(std::make_shared<const rule_set>(rule_set::load_dir(dir_))) {
  std::error_code ec;
  auto tenants = fs::path{dir_} / "tenants";
  if (!fs::is_directory(tenants, ec)) return;
  for (auto& entry : fs::directory_iterator(tenants, ec)) {
    if (!entry.is_directory(ec)) continue;
    reload_tenant(tenant_of_component(entry.path().filename().string()));
  }
}

std::string rules_book::dir_of(const std::string& tenant) const {
  if (tenant.empty() || tenant == tenant_identity::default_tenant) return dir_;
  return (fs::path{dir_} / "tenants" / component_of(tenant)).string();
}

void rules_book::reload_tenant(const std::string& tenant) {
  auto own = rule_set::load_dir(dir_of(tenant));
  std::lock_guard<std::mutex> lock{mutex_};
  auto merged = std::make_shared<rule_set>(*shared_);
  merged->append(own);
  by_tenant_[tenant] = std::move(merged);
}

std::shared_ptr<const rule_set> rules_book::current() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return shared_;
}

std::shared_ptr<const rule_set> rules_book::current(const std::string& tenant) const {
  std::lock_guard<std::mutex> lock{mutex_};
  auto i = by_tenant_.find(tenant);
  return i == by_tenant_.end() ? shared_ : i->second;
}

void rules_book::amend(const std::vector<std::string>& prefix, const std::string& tenant) {
  append_prefix_rule(dir_of(tenant), prefix);
  if (dir_of(tenant) != dir_) return reload_tenant(tenant);
  // The shared rules changed: every tenant's set is built again on them.
  auto shared = std::make_shared<const rule_set>(rule_set::load_dir(dir_));
  std::vector<std::string> tenants;
  {
    std::lock_guard<std::mutex> lock{mutex_};
    shared_ = std::move(shared);
    for (auto& [name, set] : by_tenant_) tenants.push_back(name);
  }
  for (auto& name : tenants) reload_tenant(name);
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
      [book](atom::amend, const std::vector<std::string>& prefix, const std::string& tenant) {
        try {
          book->amend(prefix, tenant);
          PARLEY_INFO("rules event=amended tenant={} prefix=\"{}\" file={}/default.rules", tenant,
                      joined(prefix), book->dir_of(tenant));
        } catch (const std::exception& e) {
          // The session grant still holds for the thread; only persistence failed.
          PARLEY_ERROR("rules event=amend_failed prefix=\"{}\" error={}", joined(prefix), e.what());
        }
      },
  };
}

}  // namespace parley
