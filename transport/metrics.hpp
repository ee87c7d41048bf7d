#pragma once
// `GET /metrics` (issue 22): one runtime's figures in the Prometheus text
// format. Every figure is an atomic the parts update as they go (the ones
// `parley/stats` reads), so a scrape asks no actor anything and never waits
// behind a decision. Labels are of bounded cardinality only (an outcome, a
// stage, a reason), never a thread, a peer or a tenant.

#include <string>

#include "actors/core/telemetry.hpp"

namespace parley {

std::string render_metrics(const runtime_telemetry& t);

}  // namespace parley
