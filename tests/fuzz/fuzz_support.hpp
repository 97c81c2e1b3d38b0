#pragma once
// What every fuzz target of tests/fuzz/ shares: the one property all of them check, and the input's
// parts. A parser of user input may return or refuse the input with nexp's own error (ConfigError,
// DataError: a message for a person, exit code 2). Anything else escaping it (std::out_of_range, a
// yaml-cpp or nlohmann exception, a crash, undefined behaviour) is a bug: the target aborts, which
// libFuzzer and the corpus replay (`ctest -R fuzz.`) both report, with the input.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "nexp/error.hpp"

namespace nexp::fuzz {

[[noreturn]] inline void fail(const std::string& target, const std::string& what, std::string_view input) {
  std::fprintf(stderr, "%s: %s\n  input (%zu bytes): %.*s\n", target.c_str(), what.c_str(), input.size(),
               static_cast<int>(input.size() < 2000 ? input.size() : 2000), input.data());
  std::abort();
}

// Runs fn; true when it returned, false when it refused the input with a ConfigError (DataError
// included) that carries a message. Anything else aborts.
template <class F>
bool accepted(const std::string& target, std::string_view input, F&& fn) {
  try {
    fn();
    return true;
  } catch (const nexp::ConfigError& e) {
    if (std::string(e.what()).empty()) fail(target, "an error without a message", input);
    return false;
  } catch (const std::exception& e) {
    fail(target, std::string("escaped: ") + typeid(e).name() + ": " + e.what(), input);
  } catch (...) {
    fail(target, "escaped: an exception that is not a std::exception", input);
  }
}

// Runs fn, which must succeed: any exception, nexp's own included, aborts naming `what`.
template <class F>
void must(const std::string& target, std::string_view input, const std::string& what, F&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    fail(target, what + ": " + typeid(e).name() + ": " + e.what(), input);
  } catch (...) {
    fail(target, what + ": an exception that is not a std::exception", input);
  }
}

// The parts of an input separated by lines that are exactly `marker` (a file per part, for targets
// that read several files). Always returns `count` parts; missing ones are empty.
inline std::vector<std::string> split_parts(std::string_view input, std::string_view marker, std::size_t count) {
  std::vector<std::string> parts;
  const std::string sep = "\n" + std::string(marker) + "\n";
  std::size_t pos = 0;
  while (parts.size() + 1 < count) {
    const std::size_t at = input.find(sep, pos);
    if (at == std::string_view::npos) break;
    parts.emplace_back(input.substr(pos, at - pos));
    pos = at + sep.size();
  }
  parts.emplace_back(input.substr(std::min(pos, input.size())));
  parts.resize(count);
  return parts;
}

// The lines of text (without their '\n').
inline std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    out.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

}  // namespace nexp::fuzz
