#include "store.h"

namespace kv {

template <typename T>
Store<T>::Store(std::size_t capacity) : slots_(capacity) {}

template <typename T>
bool Store<T>::Put(const std::string& key, const T& value) {
  // "bool Fake::Put() {" in a comment
  return Probe(static_cast<int>(key.size())) >= 0;
}

int Lookup(const char* name) { return name[0]; }

}  // namespace kv
