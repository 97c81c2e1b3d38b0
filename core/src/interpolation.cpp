// ${a.b} and ${env:NAME[,default]} interpolation of a config tree.
#include <fmt/format.h>

#include <cstdlib>
#include <set>

#include "nexp/error.hpp"
#include "yaml_values.hpp"

namespace nexp::detail {

namespace {

class Interpolator {
 public:
  Interpolator(YAML::Node root, const Origins& origins) : root_(std::move(root)), origins_(origins) {}

  void run() { visit(root_, ""); }

 private:
  void visit(YAML::Node node, const std::string& path) {
    if (node.IsMap()) {
      for (auto it = node.begin(); it != node.end(); ++it)
        visit(it->second, join_path(path, it->first.as<std::string>()));
    } else if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i) visit(node[i], join_path(path, std::to_string(i)));
    } else if (node.IsScalar() && node.Scalar().find("${") != std::string::npos) {
      node = resolve(node, path);
    }
  }

  YAML::Node resolve(const YAML::Node& node, const std::string& path) {
    if (active_.count(path))
      throw ConfigError(fmt::format("{}: key '{}' refers to itself through ${{...}} (cycle: {}). Break the cycle",
                                    origins_.at(path, node), path, fmt::join(active_, " -> ")));
    active_.insert(path);
    const std::string text = node.Scalar();
    YAML::Node result;
    // A value that is exactly one reference keeps the referenced node's type; a list or a map is copied,
    // so that the two keys do not share one node (an override of one would change both), and may not
    // hold the key that refers to it (`a: {b: ${a}}` would be a map inside itself).
    if (text.rfind("${", 0) == 0 && text.find('}') == text.size() - 1 && text.find("${", 2) == std::string::npos) {
      std::string target;
      result = lookup(text.substr(2, text.size() - 3), path, node, &target);
      if (!result.IsScalar() && (target.empty() || path == target || path.rfind(target + ".", 0) == 0))
        throw ConfigError(fmt::format("{}: key '{}' refers to '{}', which holds '{}' itself; refer to a value "
                                      "outside it",
                                      origins_.at(path, node), path, text, path));
      if (!result.IsScalar()) result = YAML::Clone(result);
    } else {
      std::string out;
      size_t pos = 0;
      while (pos < text.size()) {
        size_t start = text.find("${", pos);
        if (start == std::string::npos) { out += text.substr(pos); break; }
        size_t end = text.find('}', start);
        if (end == std::string::npos)
          throw ConfigError(fmt::format("{}: key '{}' has an unterminated interpolation in '{}'; close it with '}}'",
                                        origins_.at(path, node), path, text));
        out += text.substr(pos, start - pos);
        YAML::Node ref = lookup(text.substr(start + 2, end - start - 2), path, node);
        if (!ref.IsScalar())
          throw ConfigError(fmt::format("{}: key '{}' embeds '${{{}}}' in text, but that is {}, not a single value",
                                        origins_.at(path, node), path, text.substr(start + 2, end - start - 2),
                                        describe_node(ref)));
        out += ref.Scalar();
        pos = end + 1;
      }
      result = YAML::Node(out);
    }
    active_.erase(path);
    return result;
  }

  // The node `ref` names; `target` (when given) gets its dotted path.
  YAML::Node lookup(const std::string& ref, const std::string& path, const YAML::Node& at, std::string* target = nullptr) {
    if (ref.rfind("env:", 0) == 0) {
      std::string name = ref.substr(4), fallback;
      bool has_fallback = false;
      if (auto comma = name.find(','); comma != std::string::npos) {
        fallback = name.substr(comma + 1);
        name = name.substr(0, comma);
        has_fallback = true;
      }
      if (const char* v = std::getenv(name.c_str())) return YAML::Node(std::string(v));
      if (has_fallback) return YAML::Node(fallback);
      throw ConfigError(fmt::format("{}: key '{}' uses '${{env:{}}}', but the environment variable {} is not set. "
                                    "Set it, or give a default: '${{env:{},default}}'",
                                    origins_.at(path, at), path, name, name, name));
    }
    YAML::Node cur = root_;
    std::string walked;
    for (const auto& part : split_path(ref)) {
      YAML::Node next;
      if (cur.IsMap()) next = cur[part];
      else if (cur.IsSequence()) {
        std::int64_t i;
        if (parse_int(part, i) && i >= 0 && static_cast<size_t>(i) < cur.size()) next = cur[static_cast<size_t>(i)];
      }
      if (!next.IsDefined() || (!cur.IsMap() && !cur.IsSequence())) {
        std::vector<std::string> keys;
        if (cur.IsMap())
          for (auto it = cur.begin(); it != cur.end(); ++it) keys.push_back(join_path(walked, it->first.as<std::string>()));
        throw ConfigError(fmt::format("{}: key '{}' refers to '${{{}}}', which is not set in the config.{}",
                                      origins_.at(path, at), path, ref, suggestion(join_path(walked, part), keys)));
      }
      walked = join_path(walked, part);
      cur.reset(next);  // re-point the handle; `cur = next` would overwrite the node cur refers to
    }
    if (target) *target = walked;
    if (cur.IsScalar() && cur.Scalar().find("${") != std::string::npos) return resolve(cur, walked);
    return cur;
  }

  YAML::Node root_;
  const Origins& origins_;
  std::set<std::string> active_;
};

}  // namespace

void interpolate(YAML::Node root, const Origins& origins) { Interpolator(std::move(root), origins).run(); }

}  // namespace nexp::detail
