#include "actors/model/provider_setup.hpp"

#include <cstdlib>

namespace parley {

std::shared_ptr<const provider_setup> http_provider_setup(const model_config::settings& settings) {
  const auto& p = settings.active_provider();
  if (p.how != model_config::provider::kind::http) return nullptr;
  auto setup = std::make_shared<provider_setup>();
  setup->provider = p;
  setup->model = settings.model;
  if (!p.env_key.empty())
    if (const char* key = std::getenv(p.env_key.c_str())) setup->api_key = key;
  setup->instructions = settings.instructions;
  setup->developer_instructions = settings.developer_instructions;
  setup->reasoning_effort = settings.model_reasoning_effort;
  setup->reasoning_summary = settings.model_reasoning_summary;
  setup->client = std::make_shared<http::client>();
  return setup;
}

}  // namespace parley
