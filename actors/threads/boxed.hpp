#pragma once
// An optional value kept on the heap: a pointer's size while empty. For the
// parts of an actor's state that most of its life does not use (a loaded
// thread spends it idle, without a turn or grants): an inline std::optional
// costs its full size in every actor, set or not.

#include <memory>
#include <optional>
#include <utility>

namespace parley {

template <class T>
class boxed {
 public:
  boxed() = default;
  boxed(const boxed& x) : value_(x.value_ ? std::make_unique<T>(*x.value_) : nullptr) {}
  boxed(boxed&&) noexcept = default;
  boxed& operator=(const boxed& x) {
    if (this != &x) value_ = x.value_ ? std::make_unique<T>(*x.value_) : nullptr;
    return *this;
  }
  boxed& operator=(boxed&&) noexcept = default;

  boxed& operator=(T x) {
    if (value_)
      *value_ = std::move(x);
    else
      value_ = std::make_unique<T>(std::move(x));
    return *this;
  }
  boxed& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }

  explicit operator bool() const { return value_ != nullptr; }
  bool has_value() const { return value_ != nullptr; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  void reset() { value_.reset(); }

  /// The value, made (default) when there is none.
  T& ensure() {
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }

  /// A copy as a std::optional (for what leaves the actor).
  std::optional<T> copy() const { return value_ ? std::optional<T>{*value_} : std::nullopt; }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace parley
