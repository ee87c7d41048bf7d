#include "actors/files/search/tree_walk.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <optional>

#include "actors/files/search/ignore_rules.hpp"

namespace parley::files::search {
namespace walking {

constexpr size_t max_ignore_file_bytes = 1 << 20;
constexpr size_t check_every = 256;

/// The rules of `name` in directory `dir_fd`, if it is a regular file.
std::optional<ignore_file> read_ignore_file(int dir_fd, const char* name) {
  int fd = ::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    text.resize(std::min<size_t>(static_cast<size_t>(st.st_size), max_ignore_file_bytes));
    size_t got = 0;
    while (got < text.size()) {
      auto n = ::read(fd, text.data() + got, text.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  auto f = ignore_file::parse(text);
  if (f.empty()) return std::nullopt;
  return f;
}

/// An ignore file in force, and how an entry's walk path becomes a path
/// relative to the file's directory: lead + path.substr(strip).
struct active_rules {
  ignore_file rules;
  std::string lead;
  size_t strip = 0;
  /// A .gitignore: in force only inside a git repository (as in Codex,
  /// whose walker is ripgrep's with require_git); .ignore always is.
  bool git = false;
};

/// Whether a directory holds a `.git` (a repository's, or a worktree's file).
bool holds_git(int dir_fd) {
  return ::faccessat(dir_fd, ".git", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

struct dir_closer {
  void operator()(DIR* d) const { ::closedir(d); }
};

struct frame {
  std::unique_ptr<DIR, dir_closer> dir;
  size_t path_length = 0;  // the directory's path in `path`
  size_t rules_before = 0;  // the rule stack's size before this directory's files
  bool has_git = false;     // it holds a .git
};

class walker {
 public:
  walker(const walk_options& o, const std::function<void(const walk_entry&)>& visit)
      : options_(o), visit_(visit) {}

  walk_stats run(int start_fd) {
    load_parent_rules();
    visit_(walk_entry{std::string_view{}, 0, true});
    ++stats_.entries;
    int fd = ::openat(start_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) enter(fd, 0);
    while (!stack_.empty() && !stopped()) step();
    return stats_;
  }

 private:
  bool stopped() {
    if (stats_.truncated || stats_.cancelled) return true;
    if (++since_check_ >= check_every) {
      since_check_ = 0;
      if (options_.cancelled && options_.cancelled->load(std::memory_order_relaxed))
        stats_.cancelled = true;
    }
    return stats_.cancelled;
  }

  /// The ignore files of the directories above the start, outermost first.
  void load_parent_rules() {
    const auto& start = options_.start_path;
    if (start.empty() || start.front() != '/' || start == "/") return;
    std::vector<std::string> parents;
    for (auto at = start.rfind('/'); at != std::string::npos && !start.empty();) {
      auto dir = at == 0 ? std::string("/") : start.substr(0, at);
      parents.push_back(dir);
      if (at == 0) break;
      at = start.rfind('/', at - 1);
    }
    for (auto p = parents.rbegin(); p != parents.rend(); ++p) {
      if (excluded(*p)) continue;
      int fd = ::open(p->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) continue;
      // From that directory down to the start: the start's path below it.
      auto below = *p == "/" ? start.substr(1) : start.substr(p->size() + 1);
      if (holds_git(fd)) git_above_ = true;
      for (const char* name : {".gitignore", ".ignore"})
        if (auto f = read_ignore_file(fd, name))
          rules_.push_back({std::move(*f), below + "/", 0, name[1] == 'g'});
      ::close(fd);
    }
  }

  bool excluded(const std::string& absolute) const {
    for (const auto& e : options_.excluded)
      if (absolute == e
          || (absolute.size() > e.size() && absolute.compare(0, e.size(), e) == 0
              && (e == "/" || absolute[e.size()] == '/')))
        return true;
    return false;
  }

  std::string absolute_of(std::string_view path) const {
    if (path.empty()) return options_.start_path;
    return options_.start_path == "/" ? "/" + std::string(path)
                                      : options_.start_path + "/" + std::string(path);
  }

  /// Whether the ignore files in force ignore the entry at path_ (its name
  /// starting at name_at): the deepest file with an opinion decides.
  bool ignored(size_t name_at, bool is_dir) const {
    std::string_view path = path_;
    std::string_view name = path.substr(name_at);
    bool in_git = git_above_ || git_frames_ > 0;
    for (auto r = rules_.rbegin(); r != rules_.rend(); ++r) {
      if (r->git && !in_git) continue;
      std::string relative = r->lead;
      relative.append(path.substr(r->strip));
      if (auto v = r->rules.verdict(relative, name, is_dir)) return *v;
    }
    return false;
  }

  /// Pushes a directory (fd owned) whose path is path_[0, length).
  void enter(int fd, size_t length) {
    if (stack_.size() >= options_.limits.max_depth) {
      ::close(fd);
      return;
    }
    frame f;
    f.path_length = length;
    f.rules_before = rules_.size();
    // .ignore outranks .gitignore in the same directory: pushed last.
    size_t strip = length == 0 ? 0 : length + 1;
    for (const char* name : {".gitignore", ".ignore"})
      if (auto rules = read_ignore_file(fd, name))
        rules_.push_back({std::move(*rules), "", strip, name[1] == 'g'});
    f.has_git = holds_git(fd);
    f.dir.reset(::fdopendir(fd));
    if (!f.dir) {
      ::close(fd);
      rules_.resize(f.rules_before);
      return;
    }
    if (f.has_git) ++git_frames_;
    stack_.push_back(std::move(f));
  }

  void leave() {
    rules_.resize(stack_.back().rules_before);
    if (stack_.back().has_git) --git_frames_;
    stack_.pop_back();
  }

  void step() {
    auto& top = stack_.back();
    errno = 0;
    dirent* e = ::readdir(top.dir.get());
    if (!e) return leave();  // the end, or an unreadable directory: either way done
    const char* name = e->d_name;
    if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) return;
    int dir_fd = ::dirfd(top.dir.get());
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return;
      is_dir = S_ISDIR(st.st_mode);
    }
    path_.resize(top.path_length);
    if (!path_.empty()) path_ += '/';
    size_t name_at = path_.size();
    path_ += name;
    if (ignored(name_at, is_dir)) return;
    if (is_dir && !options_.excluded.empty() && excluded(absolute_of(path_))) return;
    if (stats_.entries >= options_.limits.max_entries) {
      stats_.truncated = true;
      return;
    }
    ++stats_.entries;
    visit_(walk_entry{path_, name_at, is_dir});
    if (!is_dir) return;
    int child = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child >= 0) enter(child, path_.size());
  }

  const walk_options& options_;
  const std::function<void(const walk_entry&)>& visit_;
  std::vector<frame> stack_;
  std::vector<active_rules> rules_;
  bool git_above_ = false;  // a directory above the start holds a .git
  size_t git_frames_ = 0;   // directories on the stack that hold one
  std::string path_;
  size_t since_check_ = 0;
  walk_stats stats_;
};

}  // namespace walking

walk_stats walk_tree(int start_fd, const walk_options& options,
                     const std::function<void(const walk_entry&)>& visit) {
  walking::walker w(options, visit);
  return w.run(start_fd);
}

}  // namespace parley::files::search
