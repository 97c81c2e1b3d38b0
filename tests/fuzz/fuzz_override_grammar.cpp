// Fuzz target for the override grammar (core/src/override_grammar.cpp), the parser of every value
// typed after a config on the shell, of -m sweep axes and of a YAML sweep: block. For any input:
//   1. parse_value returns or throws nexp::ConfigError (a user error with a caret), nothing else;
//   2. what it returns survives a round trip: the canonical text of the elements, joined with ',',
//      parses back to the same elements (the same YAML values);
//   3. every element converts to YAML.
// A broken property aborts, which libFuzzer (and the corpus replay of `ctest -R fuzz.`) reports.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nexp/error.hpp"
#include "override_grammar.hpp"

namespace {

using nexp::detail::Element;

bool scalar(const Element& e) { return e.kind == Element::Kind::Primitive || e.kind == Element::Kind::Quoted; }
bool null(const Element& e) { return e.kind == Element::Kind::Primitive && (e.text == "null" || e.text == "~"); }

// Structurally equal; a primitive that had to be quoted (e.g. ${a.b}) equals the quoted string, as
// both give the same YAML scalar.
bool same(const Element& a, const Element& b) {
  if (scalar(a) && scalar(b)) return a.text == b.text && null(a) == null(b);
  if (a.kind != b.kind || a.text != b.text || a.keys != b.keys || a.items.size() != b.items.size()) return false;
  for (std::size_t i = 0; i < a.items.size(); ++i)
    if (!same(a.items[i], b.items[i])) return false;
  return true;
}

[[noreturn]] void fail(const char* what, const std::string& input, const std::string& detail) {
  std::fprintf(stderr, "override grammar: %s\n  input: %s\n  %s\n", what, input.c_str(), detail.c_str());
  std::abort();
}

std::vector<Element> parse(const std::string& text, bool* user_error) {
  *user_error = false;
  try {
    return nexp::detail::parse_value(text, "k=" + text, 2);
  } catch (const nexp::ConfigError& e) {
    if (std::string(e.what()).empty()) fail("an error without a message", text, "");
    *user_error = true;
    return {};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  bool user_error = false;
  const std::vector<Element> elements = parse(input, &user_error);  // anything but ConfigError escapes
  if (user_error) return 0;
  std::string again;
  for (const auto& e : elements) {
    again += (again.empty() ? "" : ",") + nexp::detail::canonical_text(e);
    (void)nexp::detail::element_to_yaml(e);
  }
  bool again_error = false;
  const std::vector<Element> reparsed = parse(again, &again_error);
  if (again_error) fail("the canonical text does not parse", input, "canonical: " + again);
  if (reparsed.size() != elements.size()) fail("the canonical text has another number of elements", input, again);
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (!same(elements[i], reparsed[i])) fail("the canonical text parses to another element", input, again);
  return 0;
}
