#pragma once
/// EventHandler: the move-only callable an event runs when it fires.
///
/// It replaces std::function<void(Engine&)> because the engine's inner loop stores, moves and
/// calls one handler per event: callables of up to kInlineBytes (a lambda capturing five
/// pointers or 64-bit ints, or a std::function) live inside the handler with no heap allocation,
/// and trivially copyable ones move by memcpy with no indirect call. Larger or over-aligned
/// callables are boxed on the heap and still work. sizeof(EventHandler) is 56 so that a handler
/// and its event's sequence number fill one 64-byte cache line in the engine's slot pool.
#include <cstddef>
#include <cstring>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

namespace clustersim::engine {

class Engine;

class EventHandler {
 public:
  /// Bytes of callable state stored inline (no allocation) when the callable is also at most
  /// 8-byte aligned and nothrow-move-constructible.
  static constexpr std::size_t kInlineBytes = 40;

  /// An empty handler; the engine refuses to schedule it.
  EventHandler() noexcept = default;
  EventHandler(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor)

  /// Wraps any callable invocable as `f(Engine&)`. An empty std::function or a null function
  /// pointer gives an empty handler.
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, EventHandler> &&
           std::is_invocable_v<std::remove_cvref_t<F>&, Engine&>)
      EventHandler(F&& f) {  // NOLINT(google-explicit-constructor): lambdas convert implicitly
    using Fn = std::remove_cvref_t<F>;
    if constexpr (std::is_pointer_v<Fn> || IsStdFunction<Fn>::value) {
      if (!f) return;
    }
    if constexpr (fits_inline<Fn>()) {
      ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
      invoke_ = [](void* storage, Engine& engine) { (*static_cast<Fn*>(storage))(engine); };
      if constexpr (!(std::is_trivially_copyable_v<Fn> && std::is_trivially_destructible_v<Fn>)) {
        manage_ = &manage_inline<Fn>;
      }
    } else {
      Fn* boxed = new Fn(std::forward<F>(f));
      std::memcpy(storage_, &boxed, sizeof boxed);
      invoke_ = [](void* storage, Engine& engine) { (*unbox<Fn>(storage))(engine); };
      manage_ = &manage_boxed<Fn>;
    }
  }

  EventHandler(EventHandler&& other) noexcept { take(other); }

  EventHandler& operator=(EventHandler&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }

  EventHandler(const EventHandler&) = delete;
  EventHandler& operator=(const EventHandler&) = delete;

  ~EventHandler() { reset(); }

  /// True if the handler holds a callable.
  explicit operator bool() const noexcept { return invoke_ != nullptr; }

  /// Calls the wrapped callable. Precondition: not empty.
  void operator()(Engine& engine) { invoke_(storage_, engine); }

  /// Destroys the wrapped callable, leaving the handler empty.
  void reset() noexcept {
    if (manage_ != nullptr) manage_(Operation::kDestroy, storage_, nullptr);
    invoke_ = nullptr;
    manage_ = nullptr;
  }

 private:
  static constexpr std::size_t kInlineAlign = 8;
  enum class Operation { kMove, kDestroy };
  using Invoke = void (*)(void*, Engine&);
  using Manage = void (*)(Operation, void* self, void* source) noexcept;

  template <class T>
  struct IsStdFunction : std::false_type {};
  template <class Signature>
  struct IsStdFunction<std::function<Signature>> : std::true_type {};

  template <class Fn>
  static constexpr bool fits_inline() {
    return sizeof(Fn) <= kInlineBytes && alignof(Fn) <= kInlineAlign &&
           std::is_nothrow_move_constructible_v<Fn>;
  }

  template <class Fn>
  static Fn* unbox(void* storage) noexcept {
    Fn* boxed = nullptr;
    std::memcpy(&boxed, storage, sizeof boxed);
    return boxed;
  }

  template <class Fn>
  static void manage_inline(Operation op, void* self, void* source) noexcept {
    if (op == Operation::kMove) {
      Fn* from = static_cast<Fn*>(source);
      ::new (self) Fn(std::move(*from));
      from->~Fn();
    } else {
      static_cast<Fn*>(self)->~Fn();
    }
  }

  template <class Fn>
  static void manage_boxed(Operation op, void* self, void* source) noexcept {
    if (op == Operation::kMove) {
      std::memcpy(self, source, sizeof(Fn*));
    } else {
      delete unbox<Fn>(self);
    }
  }

  // Moves `other`'s callable into this (empty) handler and leaves `other` empty.
  void take(EventHandler& other) noexcept {
    if (other.manage_ == nullptr) {
      std::memcpy(storage_, other.storage_, kInlineBytes);
    } else {
      other.manage_(Operation::kMove, storage_, other.storage_);
    }
    invoke_ = other.invoke_;
    manage_ = other.manage_;
    other.invoke_ = nullptr;
    other.manage_ = nullptr;
  }

  alignas(kInlineAlign) unsigned char storage_[kInlineBytes];
  Invoke invoke_ = nullptr;
  Manage manage_ = nullptr;
};

}  // namespace clustersim::engine
