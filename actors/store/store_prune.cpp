#include "actors/store/store_prune.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <exception>

#include "actors/core/errors.hpp"
#include "actors/store/index_journal.hpp"
#include "actors/store/local_store.hpp"
#include "actors/store/rollout_delete.hpp"
#include "actors/store/thread_index.hpp"

namespace parley::store {

namespace {

/// Rows removed per transaction.
constexpr size_t prune_batch = 1000;

}  // namespace

caf::expected<prune_result> prune_store(const prune_request& req) {
  try {
    thread_index index{index_path(req.home)};
    auto journals = left_journals(journal_dir(req.home), "-");  // every process's
    if (index.created()) {
      sync_index(index, req.home);
    } else {
      std::vector<std::string> paths;
      for (auto& j : journals)
        for (auto& p : read_journal(j)) paths.push_back(std::move(p));
      sync_journaled(index, paths);
    }
    for (auto& j : journals) ::unlink(j.c_str());
    prune_result out;
    std::vector<index_entry> gone;
    for (auto& e : index.updated_before(req.cutoff_s, req.archived_only, false, 0, req.tenant)) {
      if (e.pending != 0) {
        ++out.kept_pending;
        continue;
      }
      pruned_thread t{e.id, e.path, e.updated_at, 0, {}};
      struct stat sb {};
      if (::stat(e.path.c_str(), &sb) == 0) t.bytes = static_cast<int64_t>(sb.st_size);
      if (!req.dry_run) {
        if (auto err = delete_rollout(e.path)) {
          t.error = message_of(err);
          out.threads.push_back(std::move(t));
          continue;
        }
        gone.push_back(e);
      }
      out.bytes += t.bytes;
      out.threads.push_back(std::move(t));
    }
    for (size_t i = 0; i < gone.size(); i += prune_batch)
      index.batch([&] {
        for (size_t k = i; k < std::min(gone.size(), i + prune_batch); ++k)
          index.remove(gone[k].id);
      });
    return out;
  } catch (const std::exception& e) {
    return make_error(errc::internal, e.what());
  }
}

}  // namespace parley::store
