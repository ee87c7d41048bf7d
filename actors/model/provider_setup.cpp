#include "actors/model/provider_setup.hpp"

#include <cstdlib>

namespace parley {

const std::string& default_instructions() {
  static const std::string text =
      "You are a coding agent working in the user's workspace through parley. Answer concisely. "
      "To look at or change the workspace, run shell commands with the exec_command tool (each "
      "command may need the user's approval; if it is declined, do not retry it, ask or take "
      "another way) and edit files with the apply_patch tool. When the task is done, say what "
      "you did without calling a tool.";
  return text;
}

std::shared_ptr<const provider_setup> http_provider_setup(const model_config::settings& settings) {
  const auto& p = settings.active_provider();
  if (p.how != model_config::provider::kind::http) return nullptr;
  auto setup = std::make_shared<provider_setup>();
  setup->provider = p;
  setup->model = settings.model;
  if (!p.env_key.empty())
    if (const char* key = std::getenv(p.env_key.c_str())) setup->api_key = key;
  setup->instructions = settings.instructions.empty() ? default_instructions() : settings.instructions;
  setup->developer_instructions = settings.developer_instructions;
  setup->reasoning_effort = settings.model_reasoning_effort;
  setup->reasoning_summary = settings.model_reasoning_summary;
  setup->auto_compact_token_limit = static_cast<int64_t>(settings.auto_compact_token_limit);
  setup->tool_output_token_limit = static_cast<size_t>(settings.tool_output_token_limit);
  setup->request_user_input_tool = settings.request_user_input_tool;
  setup->request_permissions_tool = settings.request_permissions_tool;
  setup->client = std::make_shared<http::client>();
  return setup;
}

}  // namespace parley
