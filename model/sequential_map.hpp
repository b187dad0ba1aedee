// The sequential reference: the map GFSL must behave like when its operations
// are applied one at a time. Insert is insert-if-absent and keeps the old
// value; delete returns the value it removed; contains returns the value found.
// Every checker compares against this model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../core/types.hpp"

namespace gfsl::model {

struct operation {
  op_kind kind = op_kind::contains;
  key_type key = 0;
  value_type value = 0;  // insert's argument; ignored otherwise
};

struct outcome {
  bool ok = false;        // inserted / deleted / found
  value_type value = 0;   // delete: the value removed; contains: the value found; insert: 0
  friend bool operator==(const outcome&, const outcome&) = default;
};

class sequential_map {
 public:
  outcome apply(const operation& op) {
    switch (op.kind) {
      case op_kind::insert: return insert(op.key, op.value);
      case op_kind::remove: return remove(op.key);
      case op_kind::contains: return contains(op.key);
    }
    return {};
  }
  outcome insert(key_type k, value_type v) { return {map_.emplace(k, v).second, 0}; }
  outcome remove(key_type k) {
    const auto it = map_.find(k);
    if (it == map_.end()) return {false, 0};
    const value_type v = it->second;
    map_.erase(it);
    return {true, v};
  }
  outcome contains(key_type k) const {
    const auto it = map_.find(k);
    return it == map_.end() ? outcome{false, 0} : outcome{true, it->second};
  }

  std::size_t size() const { return map_.size(); }
  std::vector<std::pair<key_type, value_type>> entries() const { return {map_.begin(), map_.end()}; }
  const std::map<key_type, value_type>& as_map() const { return map_; }
  friend bool operator==(const sequential_map&, const sequential_map&) = default;

 private:
  std::map<key_type, value_type> map_;
};

inline const char* op_name(op_kind k) {
  switch (k) {
    case op_kind::insert: return "insert";
    case op_kind::remove: return "delete";
    case op_kind::contains: return "contains";
  }
  return "?";
}

inline std::string describe(const operation& op) {
  std::string s = std::string(op_name(op.kind)) + "(" + std::to_string(op.key);
  if (op.kind == op_kind::insert) s += ", " + std::to_string(op.value);
  return s + ")";
}

}  // namespace gfsl::model
