#pragma once
// What a client session asks of the runtime for fs/* and fuzzyFileSearch:
// blocking file jobs run off the scheduler, and the connection's inotify
// watches. The connection actor implements it with its private file actors
// (actors/files/file_actors.hpp); each call answers exactly once.

#include <functional>
#include <string>

#include "actors/files/file_actors.hpp"

namespace parley::rpc {

class file_port {
 public:
  using reply = std::function<void(files::answer)>;

  virtual ~file_port() = default;

  /// Runs a blocking job; jobs of one connection run one at a time, in order.
  virtual void run(files::file_job job, reply done) = 0;
  /// Runs a fuzzyFileSearch job, in order with the connection's other
  /// searches but beside its fs/* jobs (a long walk does not hold them up).
  virtual void search(files::file_job job, reply done) = 0;
  /// fs/watch and fs/unwatch.
  virtual void watch(std::string id, files::root_set roots, std::string path, reply done) = 0;
  virtual void unwatch(std::string id, reply done) = 0;
};

}  // namespace parley::rpc
