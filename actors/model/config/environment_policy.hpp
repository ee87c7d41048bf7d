#pragma once
// The environment a command run for a model gets (Codex's
// [shell_environment_policy]). Pure: the parent environment is an argument.
//
// The steps, in Codex's order: start from `inherit` (all, the core names, or
// nothing); unless `ignore_default_excludes`, drop every name matching
// *KEY*, *SECRET* or *TOKEN*; drop the names matching `exclude`; add `set`;
// then, if `include_only` is not empty, keep only the names matching it.
// Every pattern is a case-insensitive glob over the whole name (`*` any run,
// `?` one character).
//
// One difference from Codex: Codex's default is ignore_default_excludes =
// true (nothing filtered); parley's is false, so API keys and tokens stay
// out of model-run commands even with no config file at all.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace parley::model_config {

enum class inherit_kind { all, core, none };

struct shell_environment_policy {
  inherit_kind inherit = inherit_kind::all;
  bool ignore_default_excludes = false;
  std::vector<std::string> exclude;
  std::map<std::string, std::string> set;
  std::vector<std::string> include_only;
};

/// Whether `glob` matches all of `name`, ignoring ASCII case.
bool env_name_matches(std::string_view glob, std::string_view name);

/// The environment (`NAME=value` entries) made from `parent` (the same
/// form; entries without '=' are ignored, the first of a repeated name
/// counts) by `policy`. Parent entries keep their order; `set` names that
/// were not there follow, in name order.
std::vector<std::string> command_environment(const shell_environment_policy& policy,
                                             const std::vector<std::string>& parent);

/// `envp` (null-terminated, as `environ`) as a vector.
std::vector<std::string> environment_of(const char* const* envp);

}  // namespace parley::model_config
