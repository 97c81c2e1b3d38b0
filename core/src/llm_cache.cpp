// The response cache and image data URLs of the language-model client (nexp/llm.hpp).
//
// The cache holds the raw answer of each seeded request, one file per key, under
// <folder>/<first two hex digits>/<key>.json; the key is the SHA-256 of the base URL, the model and
// the request body as sent. Files are written by atomic rename, so concurrent runs of a sweep share
// it safely; deleting the folder is always safe.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "nexp/llm.hpp"
#include "nexp/runtime/util.hpp"

namespace nexp::llm {

namespace fs = std::filesystem;

ResponseCache::ResponseCache(std::string folder) : folder_(std::move(folder)) {}

std::string ResponseCache::default_folder() {
  if (const char* d = std::getenv("NEXP_LLM_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "nexp" / "llm").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".cache" / "nexp" / "llm").string();
}

namespace {
fs::path entry(const std::string& folder, const std::string& key) {
  return fs::path(folder) / key.substr(0, 2) / (key + ".json");
}
}  // namespace

std::optional<std::string> ResponseCache::get(const std::string& key) const {
  std::error_code ec;
  const fs::path f = entry(folder_, key);
  if (!fs::exists(f, ec)) return std::nullopt;
  return read_file(f);
}

void ResponseCache::put(const std::string& key, const std::string& answer) const {
  const fs::path f = entry(folder_, key);
  fs::create_directories(f.parent_path());
  write_file_atomic(f, answer);
}

// ---------------------------------------------------------------- images

std::string image_data_url(const std::string& bytes, const std::string& mime_type) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out = "data:" + mime_type + ";base64,";
  out.reserve(out.size() + (bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t left = bytes.size() - i;
    std::uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (left > 1) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (left > 2) v |= static_cast<unsigned char>(bytes[i + 2]);
    out += digits[(v >> 18) & 63];
    out += digits[(v >> 12) & 63];
    out += left > 1 ? digits[(v >> 6) & 63] : '=';
    out += left > 2 ? digits[v & 63] : '=';
  }
  return out;
}

std::string image_data_url_from_file(const std::string& path) {
  static const std::map<std::string, std::string> types = {
      {".png", "image/png"}, {".jpg", "image/jpeg"}, {".jpeg", "image/jpeg"}, {".gif", "image/gif"},
      {".webp", "image/webp"}};
  std::string ext = fs::path(path).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto it = types.find(ext);
  if (it == types.end())
    throw ConfigError(fmt::format("image '{}': the type is read from the extension, which must be .png, .jpg, "
                                  ".jpeg, .gif or .webp",
                                  path));
  return image_data_url(read_file(path), it->second);
}

}  // namespace nexp::llm
