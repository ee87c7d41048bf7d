#pragma once
// Every atom parley's actors exchange (CAF 0.17: at most 10 characters).

#include <caf/atom.hpp>

namespace parley::atom {

// clang-format off
using event      = caf::atom_constant<caf::atom("event")>;      // a notification for clients
using ask        = caf::atom_constant<caf::atom("ask")>;        // ask a client to decide
using answer     = caf::atom_constant<caf::atom("answer")>;     // a host's decision (in-process)
using withdraw   = caf::atom_constant<caf::atom("withdraw")>;   // clear a pending ask
using awaiting   = caf::atom_constant<caf::atom("awaiting")>;   // an approval waits on someone
using settled    = caf::atom_constant<caf::atom("settled")>;    // an approval has its outcome
using elicit     = caf::atom_constant<caf::atom("elicit")>;     // an MCP server asks a thread's user
using grant      = caf::atom_constant<caf::atom("grant")>;      // remember a session grant
using decide     = caf::atom_constant<caf::atom("decide")>;     // run an approval to its outcome
using open       = caf::atom_constant<caf::atom("open")>;       // thread/start
using read       = caf::atom_constant<caf::atom("read")>;       // thread/read
using loaded     = caf::atom_constant<caf::atom("loaded")>;     // thread/loaded/list
using turn_start = caf::atom_constant<caf::atom("turnstart")>;  // turn/start
using interrupt  = caf::atom_constant<caf::atom("interrupt")>;  // turn/interrupt
using steer      = caf::atom_constant<caf::atom("steer")>;      // turn/steer
using turn_done  = caf::atom_constant<caf::atom("turndone")>;   // a turn reports its end
using step       = caf::atom_constant<caf::atom("step")>;       // ask the model for a step
using output     = caf::atom_constant<caf::atom("output")>;     // command output bytes
using exited     = caf::atom_constant<caf::atom("exited")>;     // command ended
using append     = caf::atom_constant<caf::atom("append")>;     // store a record
using load       = caf::atom_constant<caf::atom("load")>;       // read a stored thread
using gone       = caf::atom_constant<caf::atom("gone")>;       // a client disconnected
using shutdown   = caf::atom_constant<caf::atom("shutdown")>;   // orderly stop
using stats      = caf::atom_constant<caf::atom("stats")>;      // live counters
using line       = caf::atom_constant<caf::atom("line")>;       // one input line
using eof        = caf::atom_constant<caf::atom("eof")>;        // input ended
using flush      = caf::atom_constant<caf::atom("flush")>;      // write buffered output
using close      = caf::atom_constant<caf::atom("close")>;      // finish and stop
using ok         = caf::atom_constant<caf::atom("ok")>;         // plain acknowledgement
using get        = caf::atom_constant<caf::atom("get")>;        // ask for a handle
using list       = caf::atom_constant<caf::atom("list")>;       // thread/list
using archive    = caf::atom_constant<caf::atom("archive")>;    // thread/archive, unarchive
using resume     = caf::atom_constant<caf::atom("resume")>;     // thread/resume
using fork       = caf::atom_constant<caf::atom("fork")>;       // thread/fork
using rename     = caf::atom_constant<caf::atom("rename")>;     // thread/name/set
using unsub      = caf::atom_constant<caf::atom("unsub")>;      // thread/unsubscribe
using idle       = caf::atom_constant<caf::atom("idle")>;       // idle-unload timer
using put        = caf::atom_constant<caf::atom("put")>;        // write an index entry
using hook_reply = caf::atom_constant<caf::atom("hookreply")>;  // an async hook answers
using deadline   = caf::atom_constant<caf::atom("deadline")>;   // a stage's time is up
using amend      = caf::atom_constant<caf::atom("amend")>;      // add an execpolicy rule
using timeout    = caf::atom_constant<caf::atom("timeout")>;    // an actor's own deadline
using delta      = caf::atom_constant<caf::atom("delta")>;      // a piece of the model's answer
using notice     = caf::atom_constant<caf::atom("notice")>;     // the model's usage or retry
using seal       = caf::atom_constant<caf::atom("seal")>;       // the store takes no more appends
using pending    = caf::atom_constant<caf::atom("pending")>;    // threads with an action pending
using restore    = caf::atom_constant<caf::atom("restore")>;    // load a thread to go on with it
using shell      = caf::atom_constant<caf::atom("shell")>;      // thread/shellCommand
using err_output = caf::atom_constant<caf::atom("erroutput")>;  // command stderr bytes (kept apart)
using exec_start = caf::atom_constant<caf::atom("execstart")>;  // command/exec
using exec_write = caf::atom_constant<caf::atom("execwrite")>;  // command/exec/write
using exec_kill  = caf::atom_constant<caf::atom("execkill")>;   // command/exec/terminate
using exec_resize = caf::atom_constant<caf::atom("execresize")>; // command/exec/resize
using exec_gone  = caf::atom_constant<caf::atom("execgone")>;   // a command/exec ended
using compact    = caf::atom_constant<caf::atom("compact")>;    // thread/compact/start
using review     = caf::atom_constant<caf::atom("review")>;     // review/start
using retry      = caf::atom_constant<caf::atom("retry")>;      // write what waits for the disk
using erase      = caf::atom_constant<caf::atom("erase")>;      // thread/delete
using goal       = caf::atom_constant<caf::atom("goal")>;       // thread/goal/*
using edit       = caf::atom_constant<caf::atom("edit")>;       // thread/metadata/update, /revert, /inject_items
using revert     = caf::atom_constant<caf::atom("revert")>;     // keep a thread's turns before one
using lease      = caf::atom_constant<caf::atom("lease")>;      // own a thread on this node (cluster)
using release    = caf::atom_constant<caf::atom("release")>;    // let a thread's lease go
using owner      = caf::atom_constant<caf::atom("owner")>;      // which node holds a thread
using members    = caf::atom_constant<caf::atom("members")>;    // the cluster's nodes and leases
using orphans    = caf::atom_constant<caf::atom("orphans")>;    // a dead node's threads
using rejoin     = caf::atom_constant<caf::atom("rejoin")>;     // a fenced node joins again
using hello      = caf::atom_constant<caf::atom("hello")>;      // two nodes meet
using relay      = caf::atom_constant<caf::atom("relay")>;      // a remote session's line
using peer_up    = caf::atom_constant<caf::atom("peerup")>;     // a node's link is up
using peer_lost  = caf::atom_constant<caf::atom("peerlost")>;   // a node's link is gone
using tenant     = caf::atom_constant<caf::atom("tenant")>;     // whose a thread is (issue 22)
using pressure   = caf::atom_constant<caf::atom("pressure")>;   // a client is behind: hold its streams
// MCP (issue 30): a turn and the MCP hub (actors/mcp). `mcp_call` is the
// hub's own `mcp::atom::call` (the same atom is the same type).
using mcp_call     = caf::atom_constant<caf::atom("mcpcall")>;    // a call through the hub
using mcp_tools    = caf::atom_constant<caf::atom("mcptools")>;   // the tools offered to models
using mcp_progress = caf::atom_constant<caf::atom("mcpprogres")>; // a call's progress, to its caller
using mcp_cancel   = caf::atom_constant<caf::atom("mcpcancel")>;  // a caller gave a call up
// clang-format on

}  // namespace parley::atom
