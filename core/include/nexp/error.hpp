#pragma once
// The error types of nexp. Each carries a one-paragraph message for a person: what went wrong,
// where (file, line, key), what was expected, what was found, and what to do.
#include <stdexcept>
#include <string>

#include "nexp/export.hpp"

namespace nexp {

class NEXP_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message);
  ~Error() override;
};

// A bad config, override or command line. `nexp` exits with code 2.
class NEXP_API ConfigError : public Error {
 public:
  using Error::Error;
  ~ConfigError() override;
};

// Input data that is missing or malformed (a data set not installed, a file that does not parse).
// A kind of ConfigError: the fix is on the user's side, and `nexp` exits with code 2.
class NEXP_API DataError : public ConfigError {
 public:
  using ConfigError::ConfigError;
  ~DataError() override;
};

// A plugin that cannot be loaded or registered.
class NEXP_API PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
};

}  // namespace nexp
