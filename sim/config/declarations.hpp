#pragma once
/// Configuration keys declared once, bound to the typed struct members they set.
///
/// A Declarations<T> lists the keys of one YAML mapping: each with its path, type, unit, range,
/// one-line description and the member of T it sets. Everything else reads that one list: the
/// schema Field tree (validation with every problem at its position, `clustersim describe`,
/// docs/scenario-reference.md, near-miss suggestions), the reader that sets the members, and the
/// check that loaded defaults agree with the struct. A key's default is the value its member
/// has in a default-constructed T, so the number lives in one place: the struct's initializer.
///
///     config::Declarations<ScaleUpSpec> keys;
///     keys.quantity("latency", &ScaleUpSpec::latency_s, Dimension::seconds, "accelerator to accelerator");
///     keys.number("efficiency", &ScaleUpSpec::efficiency, "achievable payload fraction").positive().range(0, 1);
///     keys.read(mapping, "cluster.node.scale_up", spec, problems);  // sets what is written
///
/// Keys nest (object, splice) through member chains (member(&A::b, &B::c)); what a key cannot
/// say by itself (cross-field rules, "required if", preset lookups) stays in small functions
/// next to the declarations. Declarations are built once and then only read (function-local
/// `static const` tables, like the registries).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/config/config_tree.hpp"
#include "sim/config/name_table.hpp"
#include "sim/config/problems.hpp"
#include "sim/config/schema.hpp"
#include "sim/config/units.hpp"

namespace clustersim::config {

/// How a declaration reaches the V it sets inside a T: a member pointer, or a chain of them
/// (member(&ClusterSpec::network, &ClusterNetworkSpec::scale_up)).
template <class T, class V>
class Access {
 public:
  using value_type = V;
  Access(V T::*pointer) : get_([pointer](T& target) -> V& { return target.*pointer; }) {}  // NOLINT: implicit by design
  explicit Access(std::function<V&(T&)> get) : get_(std::move(get)) {}
  V& operator()(T& target) const { return get_(target); }
  /// The same member of a const T (the getter only forms a reference).
  const V& operator()(const T& target) const { return get_(const_cast<T&>(target)); }

 private:
  std::function<V&(T&)> get_;
};

/// A chain of member pointers as one Access: member(&A::b, &B::c) reaches a.b.c.
template <class T, class V>
Access<T, V> member(V T::*pointer) {
  return Access<T, V>(pointer);
}
template <class T, class U, class Next, class... Rest>
auto member(U T::*first, Next next, Rest... rest) {
  const auto inner = member(next, rest...);
  using V = typename decltype(inner)::value_type;
  return Access<T, V>([first, inner](T& target) -> V& { return inner(target.*first); });
}

/// One declared key of a mapping bound to a T. An object key has children (bound to the same
/// T) and no reader of its own; a key without `read` is read by a function of its own.
template <class T>
struct Key {
  Field field;               ///< its schema entry; an object's `fields` come from `children`
  std::vector<Key> children;  ///< an object's keys
  /// Sets the bound member from a written value (validated already: a value that does not
  /// parse is skipped, its problem is reported). Extra problems go to `problems` at `path`.
  std::function<void(const ConfigNode& value, const std::string& path, T& target, Problems& problems)> read;
  /// The bound value as YAML text (a default's text); nullopt when it is unset.
  std::function<std::optional<std::string>(const T&)> show;
  /// Whether two T hold the same bound value.
  std::function<bool(const T&, const T&)> same;
};

/// The YAML text of a number: the shorter of fixed and scientific shortest round-trip forms
/// ("0.8", "16", "1e9", "5e-7").
std::string number_text(double value);
/// The text of an integer range [min, max] for messages ("[1, 1000000]").
std::string integer_range_text(double min, double max);

/// Parsers of written scalars: nullopt when the node is not a scalar of that type (validation
/// reports it).
std::optional<std::int64_t> integer_value(const ConfigNode& node);
std::optional<double> number_value(const ConfigNode& node);
std::optional<bool> boolean_value(const ConfigNode& node);
std::optional<double> quantity_value(const ConfigNode& node, Dimension dimension);
/// Items of a list (a single scalar counts as a one-item list).
std::vector<ConfigNode> list_items(const ConfigNode& node);

/// The keys of one mapping, bound to members of T (T default-constructible: its default is
/// the keys' defaults). Each declaring call returns the key's Field for the range, required
/// and optional modifiers (valid until the next declaration).
template <class T>
class Declarations {
 public:
  /// An integer member (int, std::int64_t, std::uint64_t).
  template <class At>
  Field& integer(std::string key, At at, std::string help) {
    using V = typename decltype(access(at))::value_type;
    static_assert(std::is_integral_v<V>, "integer keys bind integer members");
    return bind<V>(integer_field(std::move(key), std::move(help)), access(at),
                   [](const ConfigNode& node) -> std::optional<V> {
                     const auto value = integer_value(node);
                     return value ? std::optional<V>(static_cast<V>(*value)) : std::nullopt;
                   },
                   [](const V& value) -> std::optional<std::string> { return std::to_string(value); });
  }
  /// A real member (double), or an optional one (std::optional<double>: absent = unset).
  template <class At>
  Field& number(std::string key, At at, std::string help) {
    using V = typename decltype(access(at))::value_type;
    return bind<V>(number_field(std::move(key), std::move(help)), access(at),
                   [](const ConfigNode& node) -> std::optional<V> {
                     if (auto value = number_value(node)) return V(*value);
                     return std::nullopt;
                   },
                   [](const V& value) { return optional_text(value, [](double v) { return number_text(v); }); });
  }
  /// A bool member.
  template <class At>
  Field& boolean(std::string key, At at, std::string help) {
    return bind<bool>(boolean_field(std::move(key), std::move(help)), access(at), &boolean_value,
                      [](const bool& value) -> std::optional<std::string> { return value ? "true" : "false"; });
  }
  /// A std::string member (empty: unset).
  template <class At>
  Field& string(std::string key, At at, std::string help) {
    return bind<std::string>(
        string_field(std::move(key), std::move(help)), access(at),
        [](const ConfigNode& node) -> std::optional<std::string> {
          return node.is_scalar() ? std::optional<std::string>(node.text) : std::nullopt;
        },
        [](const std::string& value) { return value.empty() ? std::nullopt : std::optional<std::string>(value); });
  }
  /// A file path (std::string member), relative to the file that sets it (a --set value: to the
  /// working directory); stored normalised.
  template <class At>
  Field& file(std::string key, At at, std::string help) {
    return bind<std::string>(
        string_field(std::move(key), std::move(help)), access(at),
        [](const ConfigNode& node) -> std::optional<std::string> {
          if (!node.is_scalar()) return std::nullopt;
          const std::filesystem::path written(node.text);
          // A --set value (position "--set key=value") is relative to the working directory.
          const std::string& from = node.position.file;
          const bool command_line = from.rfind("--set ", 0) == 0 || from == "<command line>";
          const std::filesystem::path base =
              command_line ? std::filesystem::path() : std::filesystem::path(from).parent_path();
          return (written.is_absolute() ? written : base / written).lexically_normal().string();
        },
        [](const std::string& value) { return value.empty() ? std::nullopt : std::optional<std::string>(value); });
  }
  /// A physical quantity in SI units (double or std::optional<double> member).
  template <class At>
  Field& quantity(std::string key, At at, Dimension dimension, std::string help) {
    using V = typename decltype(access(at))::value_type;
    return bind<V>(quantity_field(std::move(key), dimension, std::move(help)), access(at),
                   [dimension](const ConfigNode& node) -> std::optional<V> {
                     if (auto value = quantity_value(node, dimension)) return V(*value);
                     return std::nullopt;
                   },
                   [dimension](const V& value) {
                     return optional_text(value, [dimension](double v) { return format_quantity_exact(v, dimension); });
                   });
  }
  /// One entry of a map member (`entry` -> quantity): set when written, absent otherwise.
  template <class At, class K>
  Field& quantity_entry(std::string key, At at, K entry, Dimension dimension, std::string help) {
    return bind_entry(quantity_field(std::move(key), dimension, std::move(help)), access(at), entry,
                      [dimension](const ConfigNode& node) { return quantity_value(node, dimension); },
                      [dimension](double value) { return format_quantity_exact(value, dimension); });
  }
  /// One entry of a map member (`entry` -> number).
  template <class At, class K>
  Field& number_entry(std::string key, At at, K entry, std::string help) {
    return bind_entry(number_field(std::move(key), std::move(help)), access(at), entry, &number_value,
                      &number_text);
  }
  /// A member whose YAML values are the names of `names` (its choices, in table order).
  template <class At, class V>
  Field& enumeration(std::string key, At at, const NameTable<V>& names, std::string help) {
    static_assert(std::is_same_v<typename decltype(access(at))::value_type, V>, "the table names the member's type");
    return bind<V>(
        enum_field(std::move(key), names.names(), std::move(help)), access(at),
        [names](const ConfigNode& node) { return node.is_scalar() ? names.find(node.text) : std::nullopt; },
        [names](const V& value) { return names.has(value) ? std::optional<std::string>(names.name(value)) : std::nullopt; });
  }
  /// A list of integers (std::vector<int> member), each in [min, max]; an item out of range is
  /// "<item> must be an integer in [min, max], got X" at the item.
  template <class At>
  Field& integer_list(std::string key, At at, std::string item, double min, double max, std::string help) {
    Key<T> declared;
    declared.field = list_field(std::move(key), std::move(help));
    const Access<T, std::vector<int>> to = access(at);
    declared.read = [to, item, min, max](const ConfigNode& value, const std::string& path, T& target,
                                         Problems& problems) {
      std::vector<int> read;
      for (const ConfigNode& element : list_items(value)) {
        const auto parsed = integer_value(element);
        if (!parsed || static_cast<double>(*parsed) < min || static_cast<double>(*parsed) > max) {
          problems.add(element.position, path,
                       item + " must be an integer in " + integer_range_text(min, max) + ", got " + element.describe());
        } else {
          read.push_back(static_cast<int>(*parsed));
        }
      }
      to(target) = std::move(read);
    };
    declared.show = [to](const T& target) -> std::optional<std::string> {
      if (to(target).empty()) return std::nullopt;
      std::string text;
      for (int v : to(target)) text += (text.empty() ? "[" : ", ") + std::to_string(v);
      return text + "]";
    };
    declared.same = [to](const T& a, const T& b) { return to(a) == to(b); };
    return add(std::move(declared));
  }
  /// A list of strings (std::vector<std::string> member); an item that is not a scalar is
  /// "<item> must be a string, got X" at the item.
  template <class At>
  Field& string_list(std::string key, At at, std::string item, std::string help) {
    Key<T> declared;
    declared.field = list_field(std::move(key), std::move(help));
    const Access<T, std::vector<std::string>> to = access(at);
    declared.read = [to, item](const ConfigNode& value, const std::string& path, T& target, Problems& problems) {
      std::vector<std::string> read;
      for (const ConfigNode& element : list_items(value)) {
        if (!element.is_scalar()) {
          problems.add(element.position, path, item + " must be a string, got " + element.describe());
        } else {
          read.push_back(element.text);
        }
      }
      to(target) = std::move(read);
    };
    declared.show = [to](const T& target) -> std::optional<std::string> {
      if (to(target).empty()) return std::nullopt;
      std::string text;
      for (const std::string& v : to(target)) text += (text.empty() ? "[" : ", ") + v;
      return text + "]";
    };
    declared.same = [to](const T& a, const T& b) { return to(a) == to(b); };
    return add(std::move(declared));
  }
  /// A mapping of name -> mapping (std::map<std::string, U> member), each entry read by `keys`
  /// into a default-constructed U; the schema checks every entry against `keys` (unknown keys
  /// with the closest one, types, units, ranges, required keys) at its position.
  template <class At, class U>
  Field& map_of_objects(std::string key, At at, const Declarations<U>& keys, std::string help) {
    Key<T> declared;
    declared.field = map_field(std::move(key), keys.fields(), std::move(help));
    const Access<T, std::map<std::string, U>> to = access(at);
    declared.read = [to, &keys](const ConfigNode& value, const std::string& path, T& target, Problems& problems) {
      std::map<std::string, U> read;
      if (!value.is_mapping()) return;
      for (const auto& entry : value.entries) {
        U item = keys.prototype();
        keys.read(entry.value, path + "." + entry.key, item, problems);
        read.emplace(entry.key, std::move(item));
      }
      to(target) = std::move(read);
    };
    declared.show = [to](const T& target) -> std::optional<std::string> {
      return to(target).empty() ? std::nullopt : std::optional<std::string>("{...}");
    };
    declared.same = [to](const T& a, const T& b) { return to(a) == to(b); };
    return add(std::move(declared));
  }
  /// A mapping whose keys `keys` bind members of the U reached through `at`.
  template <class At, class U>
  Field& object(std::string key, At at, const Declarations<U>& keys, std::string help) {
    Key<T> declared;
    declared.field = object_field(std::move(key), {}, std::move(help));
    for (const Key<U>& child : keys.keys()) declared.children.push_back(lift(child, access(at)));
    return add(std::move(declared));
  }
  /// A mapping whose keys bind members of T itself (a YAML grouping with no struct of its own).
  Field& object(std::string key, const Declarations<T>& keys, std::string help) {
    Key<T> declared;
    declared.field = object_field(std::move(key), {}, std::move(help));
    declared.children = keys.keys();
    return add(std::move(declared));
  }
  /// Adds the keys of `keys`, bound to the U reached through `at`, at this level.
  template <class At, class U>
  void splice(At at, const Declarations<U>& keys) {
    for (const Key<U>& child : keys.keys()) add(lift(child, access(at)));
  }
  /// Adds the keys of `keys` (bound to T too) at this level.
  void splice(const Declarations<T>& keys) {
    for (const Key<T>& key : keys.keys()) add(key);
  }
  /// A key read by a function of its own (a preset lookup, a kind dispatch): declared here for
  /// validation, docs and suggestions only.
  Field& declare(Field field) {
    Key<T> declared;
    declared.field = std::move(field);
    return add(std::move(declared));
  }

  /// The schema of these keys (defaults from a default-constructed T).
  std::vector<Field> fields() const { return fields_of(keys_); }
  /// Sets every member whose key `mapping` writes (a key with a problem at its path is
  /// skipped); absent keys keep the target's value. `path` is the mapping's dotted key path.
  void read(const ConfigNode& mapping, const std::string& path, T& target, Problems& problems) const {
    read_keys(keys_, mapping, path, target, problems);
  }
  /// Dotted paths of the keys with a default whose member in `loaded` differs from a
  /// default-constructed T's (what a loaded scenario that writes none of them must not have).
  std::vector<std::string> defaults_differing(const T& loaded) const {
    std::vector<std::string> out;
    collect_differing(keys_, loaded, "", out);
    return out;
  }
  /// The key at a dotted path relative to this mapping, or nullptr.
  const Key<T>* find(std::string_view dotted_path) const {
    const std::vector<Key<T>>* level = &keys_;
    const Key<T>* found = nullptr;
    for (const std::string& part : split_key_path(dotted_path)) {
      found = nullptr;
      for (const Key<T>& key : *level) {
        if (key.field.key == part) found = &key;
      }
      if (found == nullptr) return nullptr;
      level = &found->children;
    }
    return found;
  }
  const std::vector<Key<T>>& keys() const { return keys_; }
  /// The value every default is taken from.
  const T& prototype() const { return prototype_; }

 private:
  template <class V>
  static Access<T, V> access(V T::*pointer) {
    return Access<T, V>(pointer);
  }
  template <class V>
  static Access<T, V> access(Access<T, V> at) {
    return at;
  }
  template <class V, class Format>
  static std::optional<std::string> optional_text(const V& value, Format format) {
    if constexpr (std::is_same_v<V, std::optional<double>>) {
      return value ? std::optional<std::string>(format(*value)) : std::nullopt;
    } else {
      return format(value);
    }
  }

  Field& add(Key<T> key) {
    if (key.show && !key.field.required) key.field.default_text = key.show(prototype_).value_or("");
    for (const Key<T>& existing : keys_) {
      if (existing.field.key == key.field.key) throw ConfigError("key '" + key.field.key + "' is declared twice");
    }
    keys_.push_back(std::move(key));
    return keys_.back().field;
  }

  template <class V>
  Field& bind(Field field, Access<T, V> to, std::function<std::optional<V>(const ConfigNode&)> parse,
              std::function<std::optional<std::string>(const V&)> show) {
    Key<T> declared;
    declared.field = std::move(field);
    declared.read = [to, parse](const ConfigNode& value, const std::string&, T& target, Problems&) {
      if (auto parsed = parse(value)) to(target) = std::move(*parsed);
    };
    declared.show = [to, show](const T& target) { return show(to(target)); };
    declared.same = [to](const T& a, const T& b) { return to(a) == to(b); };
    return add(std::move(declared));
  }

  template <class K, class V>
  Field& bind_entry(Field field, Access<T, std::map<K, V>> to, K entry,
                    std::type_identity_t<std::function<std::optional<V>(const ConfigNode&)>> parse,
                    std::type_identity_t<std::function<std::string(V)>> show) {
    Key<T> declared;
    declared.field = std::move(field);
    declared.read = [to, entry, parse](const ConfigNode& value, const std::string&, T& target, Problems&) {
      if (auto parsed = parse(value)) to(target)[entry] = *parsed;
    };
    declared.show = [to, entry, show](const T& target) -> std::optional<std::string> {
      const auto it = to(target).find(entry);
      return it == to(target).end() ? std::nullopt : std::optional<std::string>(show(it->second));
    };
    declared.same = [to, entry](const T& a, const T& b) {
      const auto ia = to(a).find(entry), ib = to(b).find(entry);
      if (ia == to(a).end() || ib == to(b).end()) return (ia == to(a).end()) == (ib == to(b).end());
      return ia->second == ib->second;
    };
    return add(std::move(declared));
  }

  /// `key` of a U, bound through `at` to the U inside a T; its default is re-taken from T's
  /// prototype (T may initialise the U differently).
  template <class U>
  Key<T> lift(const Key<U>& key, const Access<T, U>& at) const {
    Key<T> lifted;
    lifted.field = key.field;
    for (const Key<U>& child : key.children) lifted.children.push_back(lift(child, at));
    if (key.read) {
      lifted.read = [read = key.read, at](const ConfigNode& value, const std::string& path, T& target,
                                          Problems& problems) { read(value, path, at(target), problems); };
    }
    if (key.show) lifted.show = [show = key.show, at](const T& target) { return show(at(target)); };
    if (key.same) lifted.same = [same = key.same, at](const T& a, const T& b) { return same(at(a), at(b)); };
    if (lifted.show && !lifted.field.default_text.empty()) {
      lifted.field.default_text = lifted.show(prototype_).value_or("");
    }
    return lifted;
  }

  static std::vector<Field> fields_of(const std::vector<Key<T>>& keys) {
    std::vector<Field> out;
    for (const Key<T>& key : keys) {
      Field field = key.field;
      if (!key.children.empty()) field.fields = fields_of(key.children);
      out.push_back(std::move(field));
    }
    return out;
  }

  static void read_keys(const std::vector<Key<T>>& keys, const ConfigNode& mapping, const std::string& path,
                        T& target, Problems& problems) {
    if (!mapping.is_mapping()) return;
    for (const Key<T>& key : keys) {
      const ConfigNode* value = mapping.find(key.field.key);
      if (value == nullptr || value->is_null()) continue;
      const std::string key_path = path.empty() ? key.field.key : path + "." + key.field.key;
      if (!key.children.empty()) {
        read_keys(key.children, *value, key_path, target, problems);
      } else if (key.read && !problems.bad(key_path)) {
        key.read(*value, key_path, target, problems);
      }
    }
  }

  void collect_differing(const std::vector<Key<T>>& keys, const T& loaded, const std::string& prefix,
                         std::vector<std::string>& out) const {
    for (const Key<T>& key : keys) {
      const std::string path = prefix.empty() ? key.field.key : prefix + "." + key.field.key;
      collect_differing(key.children, loaded, path, out);
      const bool has_default = !key.field.required && !key.field.default_text.empty();
      if (has_default && key.same && !key.same(loaded, prototype_)) out.push_back(path);
    }
  }

  T prototype_{};
  std::vector<Key<T>> keys_;
};

}  // namespace clustersim::config
