// The override value grammar (override_grammar.hpp): a recursive-descent parser over one string.
#include "override_grammar.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "nexp/error.hpp"

namespace nexp::detail {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
// Characters that end a primitive (unless escaped).
bool is_special(char c) {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || c == '(' || c == ')' || c == '\'' ||
         c == '"' || c == '=';
}
bool is_escapable(char c) {
  return c == '\\' || c == ',' || c == ' ' || c == '\t' || c == '(' || c == ')' || c == '[' || c == ']' ||
         c == '{' || c == '}' || c == ':' || c == '=' || c == '\'' || c == '"';
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& context, std::size_t offset)
      : s_(text), context_(context), offset_(offset) {}

  std::vector<Element> value() {
    const bool single = split_at_top_level_comma() == std::string::npos;
    std::vector<Element> out{element(/*in_dict_key=*/false, /*empty_ok=*/single)};
    while (peek() == ',') {
      ++pos_;
      out.push_back(element(false));
    }
    skip_blanks();
    if (pos_ < s_.size()) fail(fmt::format("unexpected '{}' after the value", s_.substr(pos_)), pos_, after_hint());
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what, std::size_t at, const std::string& hint) const {
    const std::size_t col = offset_ + at;
    throw ConfigError(fmt::format("{}: {}, at column {}:\n    {}\n    {}^\n{}", context_, what, col + 1, context_,
                                  std::string(col, ' '), hint));
  }
  std::string after_hint() const {
    return "Text after a quoted value, a list, a map or a function call is not allowed: quote the whole value "
           "('...') if it is text, or remove what follows";
  }

  // Where the first comma outside brackets, quotes and ${...} is (npos: none), so that `key=` alone
  // is the empty string while `a,,b` has an empty element.
  std::size_t split_at_top_level_comma() const {
    int depth = 0;
    char quote = 0;
    for (std::size_t i = 0; i < s_.size(); ++i) {
      const char c = s_[i];
      if (c == '\\') ++i;
      else if (quote) quote = c == quote ? 0 : quote;
      else if (c == '\'' || c == '"') quote = c;
      else if (c == '(' || c == '[' || c == '{') ++depth;
      else if (c == ')' || c == ']' || c == '}') --depth;
      else if (c == ',' && depth == 0) return i;
    }
    return std::string::npos;
  }

  void skip_blanks() {
    while (pos_ < s_.size() && is_blank(s_[pos_])) ++pos_;
  }
  char peek() {
    skip_blanks();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  void expect(char c, const char* what) {
    if (peek() != c) {
      if (pos_ >= s_.size()) fail(fmt::format("the value ends before its closing '{}'", c), pos_, what);
      fail(fmt::format("expected '{}', found '{}'", c, s_[pos_]), pos_, what);
    }
    ++pos_;
  }

  // `empty_ok`: an empty primitive is a value here (`key=` is the empty string), not a missing element.
  Element element(bool in_dict_key, bool empty_ok = false) {
    const char c = peek();
    Element e;
    const std::size_t start = pos_;
    if (c == '\'' || c == '"') e = quoted();
    else if (c == '[') e = list();
    else if (c == '{') e = dict();
    else e = primitive_or_function(in_dict_key);
    // What follows an element must end it.
    const char next = peek();
    if (next != '\0' && next != ',' && next != ']' && next != '}' && next != ')' && !(in_dict_key && next == ':'))
      fail(fmt::format("unexpected '{}' after {}", rest_of_element(), describe(e)), pos_,
           e.kind == Element::Kind::Primitive ? "Quote text that holds , [ ] { } ( ) ' \" or =, or escape the character "
                                                "with a backslash"
                                              : after_hint());
    if (e.kind == Element::Kind::Primitive && e.text.empty() && !empty_ok)
      fail("an empty element", start, "Remove the extra comma, or write an empty text as ''");
    return e;
  }

  // The text from here to the end of this element (the next separator or closing bracket).
  std::string rest_of_element() const {
    std::size_t end = pos_;
    while (end < s_.size() && s_[end] != ',' && s_[end] != ']' && s_[end] != '}' && s_[end] != ')') ++end;
    return s_.substr(pos_, std::max<std::size_t>(end - pos_, 1));
  }

  static std::string describe(const Element& e) {
    switch (e.kind) {
      case Element::Kind::Quoted: return "a quoted value";
      case Element::Kind::List: return "a list";
      case Element::Kind::Dict: return "a map";
      case Element::Kind::Function: return fmt::format("{}(...)", e.text);
      default: return fmt::format("'{}'", e.text);
    }
  }

  Element quoted() {
    const char q = s_[pos_];
    const std::size_t open = pos_++;
    Element e;
    e.kind = Element::Kind::Quoted;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == q || s_[pos_ + 1] == '\\')) ++pos_;
      e.text += s_[pos_++];
    }
    if (pos_ >= s_.size())
      fail(fmt::format("the quote {} opened here is never closed", q), open,
           fmt::format("Close it with {0}; a {0} inside the text is written \\{0}", q));
    ++pos_;
    return e;
  }

  Element list() {
    ++pos_;
    Element e;
    e.kind = Element::Kind::List;
    if (peek() != ']') {
      e.items.push_back(element(false));
      while (peek() == ',') {
        ++pos_;
        e.items.push_back(element(false));
      }
    }
    expect(']', "A list is written [a, b, c]");
    return e;
  }

  Element dict() {
    ++pos_;
    Element e;
    e.kind = Element::Kind::Dict;
    if (peek() != '}') {
      do {
        if (!e.keys.empty()) ++pos_;
        Element key = element(true);
        if (key.kind != Element::Kind::Primitive && key.kind != Element::Kind::Quoted)
          fail("a map key must be a name", pos_, "A map is written {a: 1, b: 2}");
        expect(':', "A map is written {a: 1, b: 2}");
        e.keys.push_back(key.text);
        e.items.push_back(element(false));
      } while (peek() == ',');
    }
    expect('}', "A map is written {a: 1, b: 2}");
    return e;
  }

  // A name followed by '(' is a function; anything else a primitive.
  Element primitive_or_function(bool in_dict_key) {
    const std::size_t start = pos_;
    std::size_t end = pos_;
    while (end < s_.size() && is_name_char(s_[end])) ++end;
    std::size_t paren = end;
    while (paren < s_.size() && is_blank(s_[paren])) ++paren;
    if (end > start && paren < s_.size() && s_[paren] == '(' &&
        !std::isdigit(static_cast<unsigned char>(s_[start]))) {
      pos_ = paren;
      return function(s_.substr(start, end - start));
    }
    return primitive(in_dict_key);
  }

  Element function(std::string name) {
    ++pos_;  // '('
    Element e;
    e.kind = Element::Kind::Function;
    e.text = std::move(name);
    if (peek() != ')') {
      do {
        if (!e.items.empty()) ++pos_;
        e.keys.push_back(argument_name());
        e.items.push_back(element(false));
      } while (peek() == ',');
    }
    expect(')', "A function is written name(a, b) or name(key=a)");
    return e;
  }

  // `name=` before an argument, or "" for a positional one.
  std::string argument_name() {
    skip_blanks();
    std::size_t end = pos_;
    while (end < s_.size() && is_name_char(s_[end])) ++end;
    std::size_t eq = end;
    while (eq < s_.size() && is_blank(s_[eq])) ++eq;
    if (end > pos_ && eq < s_.size() && s_[eq] == '=') {
      std::string name = s_.substr(pos_, end - pos_);
      pos_ = eq + 1;
      return name;
    }
    return "";
  }

  Element primitive(bool in_dict_key) {
    Element e;
    std::string text;
    std::size_t trailing_blanks = 0;  // blanks at the end are trimmed, escaped ones kept
    const std::size_t start = pos_;
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == '\\' && pos_ + 1 < s_.size() && is_escapable(s_[pos_ + 1])) {
        text += s_[pos_ + 1];
        pos_ += 2;
        trailing_blanks = 0;
        continue;
      }
      if (c == '$' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '{') {  // ${...}: kept whole
        const std::size_t close = matching_brace(pos_ + 1);
        text += s_.substr(pos_, close + 1 - pos_);
        pos_ = close + 1;
        trailing_blanks = 0;
        continue;
      }
      if (is_special(c) || (in_dict_key && c == ':')) break;
      text += c;
      trailing_blanks = is_blank(c) ? trailing_blanks + 1 : 0;
      ++pos_;
    }
    text.resize(text.size() - trailing_blanks);
    if (pos_ < s_.size() && s_[pos_] == '=' && !in_dict_key)
      fail("'=' inside a value", pos_, "Quote the value if it holds '=' (key='a=b'), or escape it (a\\=b)");
    if (pos_ < s_.size() && (s_[pos_] == '\'' || s_[pos_] == '"') && pos_ > start)
      fail(fmt::format("a quote inside unquoted text"), pos_,
           "Quote the whole value ('it''s' is not YAML here: write \"it's\" or 'it\\'s')");
    e.text = text;
    return e;
  }

  std::size_t matching_brace(std::size_t open) const {
    int depth = 0;
    for (std::size_t i = open; i < s_.size(); ++i) {
      if (s_[i] == '{') ++depth;
      if (s_[i] == '}' && --depth == 0) return i;
    }
    fail("the interpolation ${ opened here is never closed", open - 1, "Close it with '}'");
  }

  const std::string& s_;
  const std::string& context_;
  std::size_t offset_;
  std::size_t pos_ = 0;
};

bool needs_quotes(const std::string& text) {
  if (text.empty()) return true;
  if (is_blank(text.front()) || is_blank(text.back())) return true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_special(c) || c == '\\') return true;
  }
  return false;
}

}  // namespace

std::vector<Element> parse_value(const std::string& text, const std::string& context, std::size_t offset) {
  return Parser(text, context, offset).value();
}

YAML::Node element_to_yaml(const Element& e) {
  switch (e.kind) {
    case Element::Kind::Quoted: return YAML::Node(e.text);  // a string (the emitter quotes "null" back)
    case Element::Kind::List: {
      YAML::Node n(YAML::NodeType::Sequence);
      for (const auto& item : e.items) n.push_back(element_to_yaml(item));
      n.SetStyle(YAML::EmitterStyle::Flow);
      return n;
    }
    case Element::Kind::Dict: {
      YAML::Node n(YAML::NodeType::Map);
      for (std::size_t i = 0; i < e.keys.size(); ++i) n[e.keys[i]] = element_to_yaml(e.items[i]);
      return n;
    }
    case Element::Kind::Function: return YAML::Node(canonical_text(e));
    case Element::Kind::Primitive:
      if (e.text == "null" || e.text == "~") return YAML::Node(YAML::NodeType::Null);
      return YAML::Node(e.text);
  }
  return YAML::Node();
}

namespace {

std::string quoted_text(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  return out + "'";
}

// A map key as it parses back: quoted when it holds what would end it.
std::string key_text(const std::string& key) {
  return needs_quotes(key) || key.find(':') != std::string::npos ? quoted_text(key) : key;
}

}  // namespace

std::string canonical_text(const Element& e) {
  auto join = [&](const char* open, const char* close, bool dict) {
    std::string out = open;
    for (std::size_t i = 0; i < e.items.size(); ++i) {
      if (i) out += ", ";
      if (dict) out += key_text(e.keys[i]) + ": ";
      else if (!e.keys.empty() && !e.keys[i].empty()) out += e.keys[i] + "=";  // a function's named argument
      out += canonical_text(e.items[i]);
    }
    return out + close;
  };
  switch (e.kind) {
    case Element::Kind::List: return join("[", "]", false);
    case Element::Kind::Dict: return join("{", "}", true);
    case Element::Kind::Function: return e.text + join("(", ")", false);
    case Element::Kind::Quoted:
    case Element::Kind::Primitive:
      if (e.kind == Element::Kind::Primitive && !needs_quotes(e.text)) return e.text;  // quoted text stays quoted
      return quoted_text(e.text);
  }
  return e.text;
}

}  // namespace nexp::detail
