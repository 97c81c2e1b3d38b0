#pragma once
// Options declared once, as a struct. The schema, `nexp describe`, validation and the values a method
// reads all come from one `declare` function written next to the members:
//
//   struct TrainOptions {
//     double lr = 1e-3;                          // the member's initial value is the default
//     std::vector<std::int64_t> sizes = {64};
//     std::optional<std::string> init;           // absent unless the config gives it
//     static void declare(nexp::Options<TrainOptions>& o) {
//       o.add("lr", &TrainOptions::lr, "learning rate").range(1e-6, 1);
//       o.add("sizes", &TrainOptions::sizes, "hidden widths").min(1);
//       o.add("init", &TrainOptions::init, "checkpoint to start from");
//     }
//   };
//   r.method("x.train", "...", run).options<TrainOptions>();    // registration
//   const auto o = ctx.options<TrainOptions>();                  // in the method
//   const auto o = nexp::bind<ProblemOptions>(params);           // in a dataset factory
//
// A struct may derive from another options struct and call `o.inherit<Base>()` to share its options.
//
// Member types: bool, int, std::int64_t, double, std::string; std::vector of int, std::int64_t, double
// or std::string; an enum, given with its name table; a struct with its own declare() (a nested map);
// a std::vector of such structs (a list of maps); std::optional of any of these but enums.
// Structs must be default-constructible; their default-constructed members are the defaults.
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nexp/config.hpp"
#include "nexp/error.hpp"

namespace nexp {

template <class T>
class Options;
namespace detail {
template <class T>
Options<T> declared();
}  // namespace detail

// The Schema a struct declares.
template <class T>
Schema options_schema();
// A struct filled from validated values of its schema.
template <class T>
T bind(const Params& params);
// The values a struct holds, as Params of its schema (for nested defaults and round trips).
template <class T>
Params to_params(const T& value);

namespace detail {

template <class T, class = void>
struct has_declare : std::false_type {};
template <class T>
struct has_declare<T, std::void_t<decltype(T::declare(std::declval<Options<T>&>()))>> : std::true_type {};

// How one member type becomes a Param, and how its Value is read back and written.
template <class M, class = void>
struct Field {
  static_assert(sizeof(M) == 0,
                "unsupported option member type: use bool, int, std::int64_t, double, std::string, a vector of "
                "those, a struct with declare(), a vector of such structs, or std::optional of one; an enum "
                "needs its name table: o.add(name, &T::member, help, {{\"a\", E::A}, ...})");
};

template <class M, Param (*Make)(std::string, M, std::string)>
struct PlainField {
  static Param param(std::string name, const M& fallback, std::string help) {
    return Make(std::move(name), fallback, std::move(help));
  }
  static M read(const Value& v) { return std::get<M>(v); }
  static Value write(const M& m) { return m; }
};

template <>
struct Field<bool> : PlainField<bool, &Param::boolean> {};
template <>
struct Field<std::int64_t> : PlainField<std::int64_t, &Param::integer> {};
template <>
struct Field<std::string> : PlainField<std::string, &Param::string> {};
template <>
struct Field<std::vector<std::int64_t>> : PlainField<std::vector<std::int64_t>, &Param::ints> {};
template <>
struct Field<std::vector<std::string>> : PlainField<std::vector<std::string>, &Param::strings> {};

template <>
struct Field<double> : PlainField<double, &Param::real> {
  static double read(const Value& v) {
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    return std::get<double>(v);
  }
};
template <>
struct Field<std::vector<double>> : PlainField<std::vector<double>, &Param::reals> {
  static std::vector<double> read(const Value& v) {
    if (const auto* i = std::get_if<std::vector<std::int64_t>>(&v)) return {i->begin(), i->end()};
    return std::get<std::vector<double>>(v);
  }
};
template <>
struct Field<int> {
  static Param param(std::string name, int fallback, std::string help) {
    return Param::integer(std::move(name), fallback, std::move(help)).int32();
  }
  static int read(const Value& v) { return static_cast<int>(std::get<std::int64_t>(v)); }
  static Value write(int m) { return static_cast<std::int64_t>(m); }
};
template <>
struct Field<std::vector<int>> {
  static Param param(std::string name, const std::vector<int>& fallback, std::string help) {
    return Param::ints(std::move(name), {fallback.begin(), fallback.end()}, std::move(help)).int32();
  }
  static std::vector<int> read(const Value& v) {
    const auto& x = std::get<std::vector<std::int64_t>>(v);
    return {x.begin(), x.end()};
  }
  static Value write(const std::vector<int>& m) { return std::vector<std::int64_t>(m.begin(), m.end()); }
};

// A struct with declare(): a nested map.
template <class S>
struct Field<S, std::enable_if_t<has_declare<S>::value>> {
  static Param param(std::string name, const S& fallback, std::string help) {
    return Param::map(std::move(name), options_schema<S>(), to_params(fallback), std::move(help));
  }
  static S read(const Value& v) { return bind<S>(*std::get<std::shared_ptr<const Params>>(v)); }
  static Value write(const S& m) { return std::make_shared<const Params>(to_params(m)); }
};

// A vector of such structs: a list of maps.
template <class S>
struct Field<std::vector<S>, std::enable_if_t<has_declare<S>::value>> {
  static Param param(std::string name, const std::vector<S>& fallback, std::string help) {
    std::vector<Params> items;
    for (const auto& s : fallback) items.push_back(to_params(s));
    return Param::maps(std::move(name), options_schema<S>(), std::move(items), std::move(help));
  }
  static std::vector<S> read(const Value& v) {
    std::vector<S> out;
    for (const auto& p : std::get<std::vector<Params>>(v)) out.push_back(bind<S>(p));
    return out;
  }
  static Value write(const std::vector<S>& m) {
    std::vector<Params> items;
    for (const auto& s : m) items.push_back(to_params(s));
    return items;
  }
};

template <class M>
struct Member {  // a plain member
  using F = Field<M>;
  static constexpr bool optional = false;
};
template <class M>
struct Member<std::optional<M>> {
  using F = Field<M>;
  static constexpr bool optional = true;
};

}  // namespace detail

// Collects the members of T that make up its options. Each add() returns the Param, for .min(),
// .max(), .range(), .choices() and .required().
template <class T>
class Options {
 public:
  template <class M>
  Param& add(std::string name, M T::*member, std::string help) {
    static_assert(!std::is_enum_v<M>, "an enum option needs its name table: add(name, &T::member, help, {{...}})");
    using Traits = detail::Member<M>;
    using F = typename Traits::F;
    const std::string key = name;
    if constexpr (Traits::optional) {
      params_.push_back(F::param(std::move(name), {}, std::move(help)).optional());
      bindings_.push_back({[key, member](const Params& p, T& out) {
                             out.*member = p.has(key) ? std::optional(F::read(p.get(key))) : std::nullopt;
                           },
                           [key, member](const T& in, Params& p) {
                             if (in.*member) p.set(key, F::write(*(in.*member)));
                           }});
    } else {
      params_.push_back(F::param(std::move(name), defaults_.*member, std::move(help)));
      bindings_.push_back({[key, member](const Params& p, T& out) {
                             if (p.has(key)) out.*member = F::read(p.get(key));
                           },
                           [key, member](const T& in, Params& p) { p.set(key, F::write(in.*member)); }});
    }
    return params_.back();
  }

  // An enum member, written in configs as one of the names in `names`.
  template <class E, class = std::enable_if_t<std::is_enum_v<E>>>
  Param& add(std::string name, E T::*member, std::string help, std::vector<std::pair<std::string, E>> names) {
    auto table = std::make_shared<const std::vector<std::pair<std::string, E>>>(std::move(names));
    std::vector<std::string> choices;
    for (const auto& [text, _] : *table) choices.push_back(text);
    const std::string key = name;
    auto text_of = [table, key](E e) -> std::string {
      for (const auto& [text, value] : *table)
        if (value == e) return text;
      throw Error("options: a value of enum option '" + key + "' is missing from its name table");
    };
    params_.push_back(Param::string(std::move(name), text_of(defaults_.*member), std::move(help)).choices(choices));
    bindings_.push_back({[key, member, table](const Params& p, T& out) {
                           if (!p.has(key)) return;
                           for (const auto& [text, value] : *table)
                             if (text == p.get_string(key)) out.*member = value;
                         },
                         [key, member, text_of](const T& in, Params& p) { p.set(key, text_of(in.*member)); }});
    return params_.back();
  }

  // The options of a base struct B of T, declared once in B::declare and shared by every struct
  // derived from it (the member pointers of B apply to T).
  template <class B>
  void inherit() {
    static_assert(std::is_base_of_v<B, T>, "inherit<B>(): B must be a base of the options struct");
    const Options<B> base = detail::declared<B>();
    params_.insert(params_.end(), base.params_.begin(), base.params_.end());
    for (const auto& b : base.bindings_)
      bindings_.push_back({[read = b.read](const Params& p, T& out) { read(p, out); },
                           [write = b.write](const T& in, Params& p) { write(in, p); }});
  }

  Schema schema() const {
    Schema s;
    for (const auto& p : params_) s.add(p);
    return s;
  }
  void read(const Params& params, T& out) const {
    for (const auto& b : bindings_) b.read(params, out);
  }
  Params write(const T& value) const {
    Params p;
    for (const auto& b : bindings_) b.write(value, p);
    return p;
  }

 private:
  struct Binding {
    std::function<void(const Params&, T&)> read;
    std::function<void(const T&, Params&)> write;
  };
  T defaults_{};
  std::deque<Param> params_;  // a deque: the Param& handed out stays valid as more are added
  std::vector<Binding> bindings_;

  template <class>
  friend class Options;
};

namespace detail {
template <class T>
Options<T> declared() {
  static_assert(has_declare<T>::value, "an options struct needs `static void declare(nexp::Options<T>&)`");
  Options<T> o;
  T::declare(o);
  return o;
}
}  // namespace detail

template <class T>
Schema options_schema() {
  return detail::declared<T>().schema();
}

template <class T>
T bind(const Params& params) {
  T out{};
  detail::declared<T>().read(params, out);
  return out;
}

template <class T>
Params to_params(const T& value) {
  return detail::declared<T>().write(value);
}

}  // namespace nexp
