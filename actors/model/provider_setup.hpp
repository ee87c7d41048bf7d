#pragma once
// What every turn's model of one HTTP provider shares: the provider as the
// config gave it, the model, the key read once from its env_key, and the one
// HTTP client whose I/O thread carries every request of the process.

#include <memory>
#include <string>

#include "actors/model/config/model_config.hpp"
#include "actors/model/http/client.hpp"

namespace parley {

struct provider_setup {
  model_config::provider provider;
  std::string model;
  /// The API key (from the provider's env_key); never logged, never in an
  /// error message, never in a command's environment.
  std::string api_key;
  /// Replace the base instructions / added as a developer message.
  std::string instructions;
  std::string developer_instructions;
  std::string reasoning_effort;
  std::string reasoning_summary;
  /// Compact before a request once the last one used this many tokens (0: never).
  int64_t auto_compact_token_limit = 0;
  /// The tokens of a tool's output the model is sent (config
  /// tool_output_token_limit; 0: the model's own limit).
  size_t tool_output_token_limit = 0;
  /// The tools offered besides exec_command and apply_patch ([features]).
  bool request_user_input_tool = false;
  bool request_permissions_tool = false;
  std::shared_ptr<http::client> client;
};

/// The instructions a model gets when the config gives none (`instructions`).
const std::string& default_instructions();

/// The setup for the config's active provider when it is an HTTP one (with
/// a client of its own, its I/O thread started); null for the scripted model.
std::shared_ptr<const provider_setup> http_provider_setup(const model_config::settings& settings);

}  // namespace parley
