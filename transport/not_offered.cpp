#include "transport/not_offered.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace parley::rpc {

namespace {

constexpr std::string_view accounts
    = "ChatGPT accounts, sign-in, usage and billing are OpenAI's services; parley is self-hosted "
      "and signs in to nothing (model providers take their keys from config.toml)";
constexpr std::string_view plugins
    = "plugins and their marketplaces are distributed by OpenAI's Codex service; parley has no "
      "plugins (plugin/installed answers an empty list)";
constexpr std::string_view apps
    = "apps (connectors) are a ChatGPT service; parley has none";
constexpr std::string_view feedback
    = "feedback reports go to OpenAI; parley sends nothing to OpenAI (its logs are on stderr)";
constexpr std::string_view windows
    = "parley runs on Linux; its commands are confined by parley-sandbox, not the Windows sandbox";
constexpr std::string_view agents
    = "importing other agents' configuration is a feature of Codex's desktop app; parley reads "
      "Codex's config.toml and nothing else";
constexpr std::string_view guardian
    = "Codex's guardian reviewer is an OpenAI subagent; parley's approvals are decided by its "
      "rules, hooks and clients";
constexpr std::string_view sidebar
    = "thread sections and attachments arrange threads in Codex's desktop app (its sidebar and "
      "its cross-thread links); parley serves conversations and keeps no app layout (thread/list, "
      "thread/name/set and thread/archive organise its threads)";
constexpr std::string_view skills
    = "parley has no skills (skills/list answers an empty list), so there is nothing to configure";

// Sorted by method, for a binary search.
constexpr std::array<std::pair<std::string_view, std::string_view>, 49> table{{
    {"account/gatewayOAuth/cancel", accounts},
    {"account/gatewayOAuth/login", accounts},
    {"account/gatewayOAuth/read", accounts},
    {"account/login/cancel", accounts},
    {"account/login/start", accounts},
    {"account/logout", accounts},
    {"account/rateLimitResetCredit/consume", accounts},
    {"account/rateLimits/read", accounts},
    {"account/securitySetup/read", accounts},
    {"account/sendAddCreditsNudgeEmail", accounts},
    {"account/usage/read", accounts},
    {"account/workspaceMessages/read", accounts},
    {"app/installed", apps},
    {"app/list", apps},
    {"app/read", apps},
    {"externalAgentConfig/detect", agents},
    {"externalAgentConfig/import", agents},
    {"externalAgentConfig/import/readHistories", agents},
    {"externalAgentConfig/import/recordHistory", agents},
    {"feedback/save", feedback},
    {"feedback/upload", feedback},
    {"marketplace/add", plugins},
    {"marketplace/remove", plugins},
    {"marketplace/upgrade", plugins},
    {"plugin/install", plugins},
    {"plugin/list", plugins},
    {"plugin/read", plugins},
    {"plugin/reconcile", plugins},
    {"plugin/share/checkout", plugins},
    {"plugin/share/delete", plugins},
    {"plugin/share/list", plugins},
    {"plugin/share/save", plugins},
    {"plugin/share/updateTargets", plugins},
    {"plugin/skill/read", plugins},
    {"plugin/uninstall", plugins},
    {"skills/config/write", skills},
    {"skills/extraRoots/set", skills},
    {"thread/approveGuardianDeniedAction", guardian},
    {"thread/attachment/add", sidebar},
    {"thread/attachment/list", sidebar},
    {"thread/attachment/remove", sidebar},
    {"thread/attachmentOwner/list", sidebar},
    {"thread/section/move", sidebar},
    {"threadSection/create", sidebar},
    {"threadSection/delete", sidebar},
    {"threadSection/list", sidebar},
    {"threadSection/update", sidebar},
    {"windowsSandbox/readiness", windows},
    {"windowsSandbox/setupStart", windows},
}};

}  // namespace

std::optional<std::string_view> not_offered_reason(std::string_view method) {
  auto i = std::lower_bound(table.begin(), table.end(), method,
                            [](const auto& entry, std::string_view m) { return entry.first < m; });
  if (i == table.end() || i->first != method) return std::nullopt;
  return i->second;
}

std::string not_offered_message(std::string_view method, std::string_view reason) {
  return "`" + std::string{method} + "` is not offered by parley: " + std::string{reason};
}

}  // namespace parley::rpc
