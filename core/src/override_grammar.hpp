#pragma once
// Core-internal: the grammar of an override's value, shared by shell overrides, sweep axes typed with
// -m and the expressions of a YAML `sweep:` block. It follows Hydra's override grammar:
//
//   value     := element (',' element)*                 several elements: a choice sweep a,b,c
//   element   := quoted | list | dict | function | primitive
//   quoted    := '...' | "..."                          \' \" \\ escape inside quotes
//   list      := '[' (element (',' element)*)? ']'
//   dict      := '{' (key ':' element (',' key ':' element)*)? '}'
//   function  := name '(' (arg (',' arg)*)? ')'          arg := (name '=')? element
//   primitive := characters other than , [ ] { } ( ) ' " = and unescaped blanks at its ends;
//                \, \  \\ \( \) \[ \] \{ \} \: \= escape them; ${...} is kept for interpolation
//
// Where nexp differs from Hydra on purpose, README.md ("Overrides") says so.
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace nexp::detail {

struct Element {
  enum class Kind { Primitive, Quoted, List, Dict, Function };
  Kind kind = Kind::Primitive;
  std::string text;               // Primitive: its text, unescaped and trimmed; Quoted: the content;
                                  // Function: its name
  std::vector<Element> items;     // List items, Dict values, Function arguments
  std::vector<std::string> keys;  // Dict keys; Function argument names ("" for a positional one)
};

// The text after '=' of an override, or a sweep expression. `context` is the whole override (or
// "config 'x', line N: key=expr") and `offset` the column of `text` in it, for the caret of an error.
// Throws ConfigError naming what was found where, with the text and a caret under the column.
std::vector<Element> parse_value(const std::string& text, const std::string& context, std::size_t offset);

// The YAML of one element: an unquoted primitive keeps YAML's reading of its text (1.2 core types:
// null, true/false, numbers; anything else a string), a quoted one is a string.
YAML::Node element_to_yaml(const Element& e);

// Text that parses back to the same element (quotes and escapes where needed).
std::string canonical_text(const Element& e);

}  // namespace nexp::detail
