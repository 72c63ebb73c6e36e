// A C++ header (.hpp) and its twin store.h: namespaces, templates, methods.
#pragma once
#include <string>
#include <vector>

namespace kv {
namespace detail {
struct Slot { int key; };
}  // namespace detail

template <typename T>
class Store : public Base {
 public:
  explicit Store(std::size_t capacity);
  ~Store() override;
  bool Put(const std::string& key, const T& value);
  T Get(const std::string& key) const { return T(); }
  bool operator==(const Store& other) const;

 private:
  std::vector<detail::Slot> slots_;
  int Probe(int key) EXCLUSIVE_LOCKS_REQUIRED(mu_);
};

using StringStore = Store<std::string>;
enum class Mode { kRead, kWrite };
}  // namespace kv
