#pragma once
// The atoms of actors/mcp (CAF 0.17: at most 10 characters). JSON crosses
// actors as text: nlohmann::json is not a CAF message type here.

#include <caf/atom.hpp>

namespace parley::mcp::atom {

// clang-format off
using line    = caf::atom_constant<caf::atom("mcpline")>;    // a line of a server's stdout
using cut     = caf::atom_constant<caf::atom("mcpcut")>;     // its stdout broke the framing
using exited  = caf::atom_constant<caf::atom("mcpexit")>;    // its stdout ended, process reaped
using call    = caf::atom_constant<caf::atom("mcpcall")>;    // a client method for the hub or a server
using status  = caf::atom_constant<caf::atom("mcpstatus")>;  // a server's status, to the hub
using timer   = caf::atom_constant<caf::atom("mcptimer")>;   // a server's own timers
using restart = caf::atom_constant<caf::atom("mcprestart")>; // start again after a backoff
using subscribe = caf::atom_constant<caf::atom("mcpsub")>;   // a connection wants startup updates
using startup = caf::atom_constant<caf::atom("mcpstartup")>; // one: mcpServer/startupStatus/updated params
using threads = caf::atom_constant<caf::atom("mcpthreads")>; // the runtime's thread manager, for elicitations
using reopen  = caf::atom_constant<caf::atom("mcpreopen")>;  // an HTTP server's GET stream, again after a break
// clang-format on

}  // namespace parley::mcp::atom
