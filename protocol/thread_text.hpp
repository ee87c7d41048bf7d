#pragma once
// A thread, and the results that carry one or a turn (thread/start,
// thread/resume and thread/fork; turn/start), as JSON text written straight
// into a string without an nlohmann DOM: what every thread/start reply and
// thread/started notification write (issue 23). Byte for byte what nlohmann
// writes for their to_json (keys in its order, the same escapes); false,
// with `out` partly written, when something in them is not a shape
// item_text writes or a string is not valid UTF-8: the caller then lets
// nlohmann write the whole.

#include <string>

#include "protocol/methods.hpp"
#include "protocol/types.hpp"

namespace parley::protocol {

bool append_thread(std::string& out, const thread& x);
bool append_thread_status(std::string& out, const thread_status& x);
bool append_sandbox_policy(std::string& out, const sandbox_policy& x);
bool append_approval_policy(std::string& out, const approval_policy& x);

/// A result's JSON text (the `result` of a reply).
bool append_result(std::string& out, const thread_session_response& x);
bool append_result(std::string& out, const turn_start_response& x);

}  // namespace parley::protocol
